"""The app's first solve, compiled on a background thread while the window is built."""

import threading

import jax
import numpy as np
import pytest

from difflab.app.runs import RunSettings, SolveRequest, precompile, solve
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
    finally:
        jax.monitoring.unregister_event_duration_listener(heard)
    assert not started.is_alive()
    assert threads and set(threads) == {"difflab-precompile"}  # all of it there, once
    np.testing.assert_allclose(run["u"], np.exp(-0.5 * run.ts), rtol=1e-8)


class Broken(Decay):
    def vector_field(self, t, y):
        raise ValueError("no vector field here")


def test_a_failing_precompile_leaves_the_error_to_the_solve(monkeypatch):
    escaped = []
    monkeypatch.setattr(threading, "excepthook", escaped.append)
    request = SolveRequest(1, Broken(), "broken", RunSettings(t1=2.0))
    precompile(request).join()
    assert escaped == []
    with pytest.raises(ValueError, match="no vector field here"):
        solve(request)
