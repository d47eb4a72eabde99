"""simulate and stream: the contract, result codes, compile-once, and SDE keys."""

import dataclasses
import inspect

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difflab as dl
from difflab.solvers import fit_stream
# white-box: counts traces of the integrator's Plan.run to check that nothing recompiles
from difflab.solvers._steppers import integrate as integrate_module
from tests.models_for_tests import Decay, NoisyPair


def test_trajectory_contract():
    traj = dl.simulate(Decay(rate=2.0), 1.0, dt=1e-3, n_save=11)
    assert traj.ts.shape == (11,) and traj.ys.shape == (11, 1)
    assert traj.ok and traj.message == "success" and int(traj.steps) == 1000
    np.testing.assert_allclose(traj["u"], np.exp(-2.0 * np.asarray(traj.ts)), rtol=1e-10)
    assert traj.wall_time > 0
    with pytest.raises(KeyError, match="states are u"):
        traj["nope"]


def test_saving_every_kth_step_keeps_runs_small():
    traj = dl.simulate(Decay(), 10.0, dt=1e-4)
    assert int(traj.steps) == 100_000 and traj.ys.shape == (1001, 1)


def test_same_key_same_path_and_other_key_other_path():
    run = lambda k: dl.simulate(NoisyPair(), 1.0, dt=1e-2, key=jax.random.key(k)).ys
    np.testing.assert_array_equal(run(3), run(3))
    assert not np.allclose(run(3), run(4))


def test_stochastic_model_needs_a_key_and_the_right_solver():
    with pytest.raises(ValueError, match="key"):
        dl.simulate(NoisyPair(), 1.0)
    with pytest.raises(ValueError, match="euler_maruyama"):
        dl.simulate(NoisyPair(), 1.0, solver="rk4", key=jax.random.key(0))


@pytest.mark.slow
def test_max_steps_is_a_result_code_or_an_error():
    model = dl.models.get("lorenz")()
    traj = dl.simulate(model, 10.0, solver="tsit5", max_steps=10, throw=False)
    assert traj.result == dl.Result.MAX_STEPS_REACHED and not traj.ok
    assert "max_steps" in traj.message
    with pytest.raises(dl.SimulationError, match="max_steps") as info:
        dl.simulate(model, 10.0, solver="tsit5", max_steps=10)
    assert info.value.result == dl.Result.MAX_STEPS_REACHED


def test_divergence_is_recorded_not_silently_nan():
    traj = dl.simulate(Decay(rate=1e4), 100.0, dt=0.1, solver="euler", throw=False)
    assert traj.result == dl.Result.DIVERGED
    with pytest.raises(dl.SimulationError, match="diverged"):
        dl.simulate(Decay(rate=1e4), 100.0, dt=0.1, solver="euler")


def _diverging(rate, throw=True):
    return dl.simulate(Decay(rate=rate), 100.0, dt=0.1, solver="euler", throw=throw)


RUNTIME_ERRORS = (jax.errors.JaxRuntimeError, eqx.EquinoxRuntimeError)


@pytest.mark.slow
def test_a_failure_under_jit_and_vmap_says_why_and_which_member_failed_first():
    final = lambda rate: _diverging(rate).ys[-1, 0]
    with pytest.raises(RUNTIME_ERRORS, match="Decay: the state became infinite or NaN"):
        jax.jit(final)(1e4)
    rates = jnp.array([1.0, 2.0, 1e4, 3.0, 1e4])
    with pytest.raises(RUNTIME_ERRORS, match=r"diverged.*batch member 2 is the first that failed"):
        jax.jit(jax.vmap(final))(rates)
    with pytest.raises(RUNTIME_ERRORS, match=r"diverged.*batch member 2 is the first"):
        eqx.filter_jit(jax.vmap(final))(rates)
    with pytest.raises(RUNTIME_ERRORS, match=r"batch member \(1, 0\) \(an index per vmapped"):
        jax.vmap(jax.vmap(final))(jnp.array([[1.0, 2.0], [1e4, 3.0]]))
    results = jax.vmap(lambda r: _diverging(r, throw=False).result)(rates)
    np.testing.assert_array_equal(results, [0, 0, dl.Result.DIVERGED, 0, dl.Result.DIVERGED])
    assert jax.vmap(jax.grad(final))(rates[:2]).shape == (2,)  # gradients pass the check


def test_settings_carry_a_run_to_the_next_call():
    traj = dl.simulate(Decay(rate=2.0), 1.0, dt=1e-3, n_save=11, solver="heun")
    again = dl.simulate(Decay(rate=2.0), settings=traj.settings)
    np.testing.assert_array_equal(again.ys, traj.ys)
    assert again.settings == traj.settings
    longer = dl.simulate(Decay(rate=2.0), settings=traj.settings, t1=2.0)
    assert longer.settings == dataclasses.replace(traj.settings, t1=2.0)
    chunks = list(dl.stream(Decay(rate=2.0), settings=traj.settings, chunk_size=4))
    np.testing.assert_allclose(np.concatenate([c.ys for c in chunks]), traj.ys, rtol=1e-12)
    lv = dl.models.get("lotka_volterra")()
    moved = dl.simulate(lv.replace(prey0=20.0), settings=dl.simulate(lv, 1.0).settings)
    assert float(moved.ys[0, 0]) == 20.0  # the initial state stays the model's
    with pytest.raises(TypeError, match="t1, the end time, is missing"):
        dl.simulate(Decay())
    with pytest.raises(TypeError, match="settings must be a SolveSettings"):
        dl.simulate(Decay(), settings={"t1": 1.0})


@pytest.mark.parametrize("entry", [dl.simulate, dl.stream, dl.sweep, dl.sensitivity, dl.fit,
                                   fit_stream])
def test_every_entry_point_takes_the_solve_arguments_by_the_same_names(entry):
    names = {"t0", "t1", "dt", "solver", "n_save", "rtol", "atol", "max_steps", "y0", "key",
             "settings"} - ({"key"} if entry in (dl.fit, fit_stream) else set())
    parameters = inspect.signature(entry).parameters
    assert all(parameters[n].default is None for n in names)
    assert not any(p.kind is p.VAR_KEYWORD for p in parameters.values())


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(solver="rk5"), "unknown solver 'rk5'; did you mean rk4"),
        (dict(dt=-1.0), "dt must be positive"),
        (dict(t0=2.0), "t1 .* must be greater than t0"),
        (dict(y0=jnp.zeros(3)), "has 1 states"),
        (dict(n_save=1), "n_save must be at least 2"),
        (dict(dt=0.1, n_save=15), "more states than the 10 steps"),
        (dict(solver="leapfrog"), "needs a HamiltonianModel"),
    ],
)
def test_bad_arguments_raise_before_tracing(kwargs, match):
    with pytest.raises(ValueError, match=match):
        dl.simulate(Decay(), 1.0, **kwargs)


def _count_traces(monkeypatch):
    count = {"n": 0}
    run = integrate_module.Plan.run

    def counting_run(self, args):
        count["n"] += 1
        return run(self, args)

    monkeypatch.setattr(integrate_module.Plan, "run", counting_run)
    return count


def test_changing_values_never_recompiles(monkeypatch):
    class Fresh(Decay):  # a class no other test has compiled
        pass

    count = _count_traces(monkeypatch)
    dl.simulate(Fresh(), 10.0, dt=1e-3)
    for kwargs in [dict(), dict(y0=jnp.array([3.0])), dict(t1=20.0), dict(dt=2e-3),
                   dict(t0=1.0, t1=11.0)]:
        options = dict(t1=10.0, dt=1e-3) | kwargs
        dl.simulate(Fresh(rate=0.5), options.pop("t1"), **options)
    assert count["n"] == 1


@pytest.mark.slow
def test_changing_tolerances_never_recompiles(monkeypatch):
    class Fresh(Decay):
        pass

    count = _count_traces(monkeypatch)
    for rtol, rate, t1 in [(1e-6, 1.0, 1.0), (1e-9, 2.0, 3.0), (1e-4, 0.5, 2.0)]:
        traj = dl.simulate(Fresh(rate=rate), t1, solver="tsit5", rtol=rtol, atol=rtol)
        np.testing.assert_allclose(traj["u"][-1], np.exp(-rate * t1), rtol=100 * rtol)
    assert count["n"] == 1


@pytest.mark.slow
@pytest.mark.parametrize("solver", ["rk4", "tsit5"])
def test_stream_joins_into_the_trajectory(solver):
    model = dl.models.get("lorenz")()
    kw = dict(dt=1e-3, solver=solver, n_save=301, rtol=1e-10, atol=1e-10)
    traj = dl.simulate(model, 3.0, **kw)
    chunks = list(dl.stream(model, 3.0, chunk_size=64, **kw))
    assert [c.start for c in chunks] == [0, 1, 65, 129, 193, 257]
    assert chunks[-1].progress == 1.0
    np.testing.assert_array_equal(np.concatenate([c.ts for c in chunks]), traj.ts)
    # Fixed steps repeat exactly; adaptive ones restart step control at each chunk.
    atol = 0 if solver == "rk4" else 1e-6
    np.testing.assert_allclose(np.concatenate([c.ys for c in chunks]), traj.ys, atol=atol)


def test_stream_stops_between_chunks():
    chunks = dl.stream(Decay(), 1.0, dt=1e-3, n_save=101, chunk_size=10)
    seen = [next(chunks), next(chunks)]
    chunks.close()
    assert [c.start for c in seen] == [0, 1]
    with pytest.raises(StopIteration):
        next(chunks)


@pytest.mark.slow
def test_stream_reports_failure():
    chunks = list(dl.stream(Decay(rate=1e4), 100.0, dt=0.1, solver="euler", chunk_size=3,
                            throw=False))
    # dt * rate = 1000 > 2: the first chunk is already outside Euler's stability region,
    # so the stream stops there, before the state overflows (simulate's whole run: DIVERGED)
    assert len(chunks) == 2 and chunks[-1].result == dl.Result.UNSTABLE
    with pytest.raises(dl.SimulationError):
        list(dl.stream(Decay(rate=1e4), 100.0, dt=0.1, solver="euler", chunk_size=3))


class _ForgotReturn(Decay):
    def initial_state(self):
        jnp.array([1.0])


class _TextStart(Decay):
    def initial_state(self):
        return "one"


def test_an_initial_state_that_is_no_array_is_named_in_the_error():
    with pytest.raises(TypeError, match=r"_ForgotReturn.initial_state\(\) returned None "
                                        r"\(is its return missing\?\).*\('u',\)"):
        dl.simulate(_ForgotReturn(), 1.0)
    with pytest.raises(TypeError, match=r"_TextStart.initial_state\(\) returned 'one'"):
        dl.simulate(_TextStart(), 1.0)
