"""The app's first solve, compiled on a background thread while the window is built, and
its programs: quick to compile first, optimized in the background for slow runs."""

import subprocess
import sys
import textwrap
import threading

import jax
import numpy as np
import pytest

import difflab as dl
from difflab.app import runs
from difflab.app.runs import RunSettings, SolveRequest, precompile, solve
from difflab.solvers import _simulate
from tests.models_for_tests import Decay

EVENTS = ("/jax/core/compile/jaxpr_to_mlir_module_duration",
          "/jax/core/compile/backend_compile_duration")


class Unseen(Decay):  # a class of its own: nothing compiled for it yet
    pass


def test_a_solve_waits_for_the_precompile_of_its_request_and_compiles_nothing():
    threads = []

    def heard(event, duration, **_):
        if event in EVENTS:
            threads.append(threading.current_thread().name)

    request = SolveRequest(1, Unseen(rate=0.5), "unseen", RunSettings(t1=2.0))
    jax.monitoring.register_event_duration_secs_listener(heard)
    try:
        started = precompile(request)
        run = solve(request)
        assert started not in runs._precompiling  # its solve was done when this one began
        started.join()  # then it loads the stiff solvers
    finally:
        jax.monitoring.unregister_event_duration_listener(heard)
    assert threads and set(threads) == {"difflab-precompile"}  # all of it there, once
    np.testing.assert_allclose(run["u"], np.exp(-0.5 * run.ts), rtol=1e-8)


class Broken(Decay):
    def vector_field(self, t, y):
        raise ValueError("no vector field here")


def test_after_the_start_up_work_a_stiff_solve_imports_nothing():
    script = textwrap.dedent("""
        import sys
        import jax
        import difflab as dl
        from difflab.app.runs import RunSettings, SolveRequest, precompile
        precompile(SolveRequest(0, dl.models.get("pendulum")(), "pendulum",
                                RunSettings(t1=1.0))).join()
        loaded = set(sys.modules)
        stiff = dl.models.get("van_der_pol")(mu=1000.0)
        jax.jit(lambda: dl.simulate(stiff, 0.1, solver="kvaerno5").ys).trace().lower()
        print(sorted(m for m in set(sys.modules) - loaded if not m.startswith("difflab")))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"  # without the loading: diffrax, lineax, scipy...


def test_a_failing_precompile_leaves_the_error_to_the_solve(monkeypatch):
    escaped = []
    monkeypatch.setattr(threading, "excepthook", escaped.append)
    request = SolveRequest(1, Broken(), "broken", RunSettings(t1=2.0))
    precompile(request).join()
    assert escaped == []
    with pytest.raises(ValueError, match="no vector field here"):
        solve(request)


def test_the_app_compiles_its_first_runs_quickly():
    _simulate._solve_quickly.clear_cache()  # another test in this process may have run duffing
    before = _simulate._solve_quickly._cache_size()
    model = dl.models.get("duffing")()
    run = solve(SolveRequest(0, model, "duffing", RunSettings(t1=7.3)))
    assert _simulate._solve_quickly._cache_size() > before
    np.testing.assert_allclose(run.ys[-1], dl.simulate(model, 7.3, solver=run.settings.solver,
                                                       dt=run.settings.dt,
                                                       n_save=len(run.ts)).ys[-1],
                               rtol=1e-10, atol=1e-12)


def test_the_app_optimizes_the_programs_of_slow_runs_in_the_background(monkeypatch):
    monkeypatch.setattr(runs, "SLOW_RUN", 0.0)  # every run counts as slow
    model = dl.models.get("lotka_volterra")()
    request = SolveRequest(0, model, "lotka_volterra", RunSettings(t1=9.1, solver="tsit5"))
    first, second = solve(request), solve(request)
    assert first.settings.optimize is False and second.settings.optimize is False
    runs._optimizing[runs._program_key(request)].join()
    third = solve(request)
    assert third.settings.optimize is True
    np.testing.assert_allclose(third.ys, first.ys, rtol=1e-10, atol=1e-12)
    monkeypatch.setattr(runs, "SLOW_RUN", 1e9)  # a fast model keeps its quick program
    fast = SolveRequest(1, model, "lotka_volterra", RunSettings(t1=4.7, solver="dopri5"))
    assert [solve(fast).settings.optimize for _ in range(3)] == [False] * 3
