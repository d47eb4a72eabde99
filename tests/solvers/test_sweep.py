"""sweep: equal to simulate point by point, result codes, compile once, no collectives."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difflab as dl
from difflab.solvers import SweepJob
# white-box: collectives in the compiled HLO, the batch mesh and sharding
from difflab.solvers import _sharding
# white-box: the plan of one solve, to build the naive sharded jit(vmap) the sweep avoids
from difflab.solvers._simulate import prepare
# white-box: counts traces of the sweep kernel's solve_block (compiled-program reuse)
from difflab.solvers._sweeps import kernel as _sweep_kernel
from tests.models_for_tests import Decay, Noisy, Spring


LORENZ = dl.models.get("lorenz")


def test_eight_cpu_devices_are_visible():
    assert jax.device_count() == 8


@pytest.mark.slow
def test_equals_simulate_point_by_point_over_parameters_and_initial_states():
    space = dl.grid(rho=np.linspace(0.0, 28.0, 6), **{"y0.x": [1.0, -2.0]}, sigma=[10.0, 3.0])
    res = dl.sweep(LORENZ(), space, 1.0, dt=1e-3, solver="rk4", n_save=11)
    assert res.final.shape == (24, 3) and res.ys.shape == (24, 11, 3) and res.ok
    for i in range(len(space)):
        model = LORENZ(rho=space["rho"][i], sigma=space["sigma"][i])
        traj = dl.simulate(model, 1.0, dt=1e-3, solver="rk4", n_save=11,
                           y0=[space["y0.x"][i], 1.0, 1.0])
        np.testing.assert_allclose(res.ys[i], traj.ys, rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.ts, traj.ts, rtol=0, atol=1e-15)
    assert res.reshape(res["x"]).shape == (6, 2, 2)


@pytest.mark.slow
def test_final_state_only_by_default_and_a_zip_of_columns():
    rho = jnp.linspace(0.0, 28.0, 37)  # not a multiple of the 8 devices: padded
    res = dl.sweep(LORENZ(), {"rho": rho}, 0.5, dt=1e-3, solver="rk4")
    assert res.ys is None and res.final.shape == (37, 3)
    for i in (0, 17, 36):
        final = dl.simulate(LORENZ(rho=rho[i]), 0.5, dt=1e-3, solver="rk4").final
        np.testing.assert_allclose(res.final[i], final, rtol=0, atol=1e-12)


def test_whole_initial_states_as_a_column():
    y0 = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, -1.0]])
    res = dl.sweep(Spring(c=0.0), {"y0": y0}, 2.0, dt=1e-3, solver="rk4")
    t = 2.0  # x(t) = x0 cos t + v0 sin t for k = 1
    np.testing.assert_allclose(res["x"], y0[:, 0] * np.cos(t) + y0[:, 1] * np.sin(t), atol=1e-10)


@pytest.mark.slow
def test_one_device_equals_eight():
    space = {"rho": np.linspace(5.0, 28.0, 21), "beta": np.linspace(1.0, 3.0, 21)}
    eight = dl.sweep(LORENZ(), space, 1.0, dt=1e-3, n_save=5)
    one = dl.sweep(LORENZ(), space, 1.0, dt=1e-3, n_save=5, devices=jax.devices()[:1])
    assert eight.stats["devices"] == 8 and one.stats["devices"] == 1
    np.testing.assert_allclose(eight.ys, one.ys, rtol=0, atol=1e-12)


def test_a_diverging_point_is_recorded_and_counted_not_fatal():
    res = dl.sweep(Decay(), {"rate": [1.0, 1e4, 2.0]}, 100.0, dt=0.1, solver="euler")
    np.testing.assert_array_equal(res.result, [0, dl.Result.DIVERGED, 0])
    assert not res.ok and list(res.failed) == [1] and "diverged" in res.message(1)
    assert res.summary()["failures"] == {"diverged": 1} and res.summary()["failed"] == 1
    np.testing.assert_allclose(res["u"][[0, 2]], (0.9**1000, 0.8**1000), rtol=1e-12)
    assert repr(res) == "SweepResult(Decay, 3 points over rate; states u; 1 failed)"


def test_settings_of_a_run_carry_over_to_a_sweep():
    traj = dl.simulate(Decay(), 1.0, dt=1e-2, solver="heun", n_save=11)
    res = dl.sweep(Decay(), {"rate": [1.0, 2.0]}, settings=traj.settings)
    assert res.settings["solver"] == "heun" and res.settings["dt"] == 1e-2
    assert res.ys is None  # the settings' n_save does not keep trajectories; n_save= does
    np.testing.assert_allclose(res["u"][0], traj["u"][-1], rtol=1e-12)


@pytest.mark.slow
def test_adaptive_sweep_equals_simulate_and_reports_max_steps_per_point():
    rates = np.array([0.5, 1.0, 3.0, 2000.0])
    res = dl.sweep(Decay(), {"rate": rates}, 1.0, solver="tsit5", max_steps=60, rtol=1e-8,
                   atol=1e-10)
    np.testing.assert_array_equal(res.result, [0, 0, 0, dl.Result.MAX_STEPS_REACHED])
    traj = dl.simulate(Decay(rate=3.0), 1.0, solver="tsit5", max_steps=60, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(res.final[2], traj.final, rtol=0, atol=1e-12)
    assert res.steps[2] == traj.steps
    np.testing.assert_allclose(res["u"][:3], np.exp(-rates[:3]), rtol=1e-7)


@pytest.mark.slow
def test_stochastic_points_use_keys_folded_with_their_index():
    key = jax.random.key(7)
    res = dl.sweep(Noisy(), {"sigma": [0.1, 0.5, 1.0]}, 1.0, dt=1e-2, n_save=11, key=key)
    for i, sigma in enumerate([0.1, 0.5, 1.0]):
        traj = dl.simulate(Noisy(sigma=sigma), 1.0, dt=1e-2, n_save=11,
                           key=jax.random.fold_in(key, i))
        np.testing.assert_allclose(res.ys[i], traj.ys, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="key"):
        dl.sweep(Noisy(), {"sigma": [0.1]}, 1.0, dt=1e-2)


@pytest.mark.slow
def test_observables_are_reduced_on_the_device():
    space = {"rho": np.linspace(10.0, 28.0, 9)}
    observables = {"x_max": "max(x)", "z_mean": lambda traj: jnp.mean(traj["z"])}
    res = dl.sweep(LORENZ(), space, 2.0, dt=1e-3, n_save=201, observables=observables)
    np.testing.assert_allclose(res.observables["x_max"], res.ys[:, :, 0].max(axis=1), rtol=1e-14)
    np.testing.assert_allclose(res.observables["z_mean"], res.ys[:, :, 2].mean(axis=1), rtol=1e-12)
    lean = dl.sweep(LORENZ(), space, 2.0, dt=1e-3, n_save=201, observables=observables,
                    trajectories=False)
    assert lean.ys is None and lean.y.shape == (9, 1, 3)
    np.testing.assert_allclose(lean.observables["x_max"], res.observables["x_max"], rtol=1e-14)


@pytest.mark.slow
def test_the_period_of_a_harmonic_oscillator():
    k = np.array([1.0, 4.0, 9.0])
    res = dl.sweep(Spring(c=0.0), {"k": k}, 20.0, dt=1e-3,
                   observables={"T": "period(x)", "A": "amplitude(x)"})
    np.testing.assert_allclose(res.observables["T"], 2 * np.pi / np.sqrt(k), rtol=1e-4)
    np.testing.assert_allclose(res.observables["A"], 1.0, rtol=1e-5)


def _count_traces(monkeypatch):
    count = {"n": 0}
    solve_block = _sweep_kernel.solve_block

    def counting(*args):
        count["n"] += 1
        return solve_block(*args)

    monkeypatch.setattr(_sweep_kernel, "solve_block", counting)
    return count


def test_other_values_of_the_same_size_reuse_the_compiled_program(monkeypatch):
    class Fresh(Decay):  # no other test has compiled it
        pass

    count = _count_traces(monkeypatch)
    first = dl.sweep(Fresh(), {"rate": np.linspace(0.0, 1.0, 50)}, 1.0, dt=1e-2)
    again = dl.sweep(Fresh(rate=3.0), {"rate": np.linspace(2.0, 5.0, 50)}, 2.0, dt=1e-3)
    sampled = dl.sweep(Fresh(), dl.uniform(jax.random.key(0), 50, rate=(0.0, 1.0)), 1.0, dt=1e-2)
    assert count["n"] == 1
    assert first.stats["compile_time"] > 0 and again.stats["compile_time"] == 0
    np.testing.assert_allclose(again["u"], np.exp(-np.linspace(2.0, 5.0, 50) * 2.0), rtol=1e-9)
    np.testing.assert_allclose(sampled["u"], np.exp(-sampled.space["rate"]), rtol=1e-7)


@pytest.mark.slow
def test_compiled_program_has_no_collectives_unlike_a_sharded_vmap():
    # The adaptive program of the test above (the same size): taken from the cache.
    job = SweepJob(Decay(), {"rate": np.linspace(1.0, 2.0, 4)}, 1.0, solver="tsit5",
                   max_steps=60, rtol=1e-8, atol=1e-10)
    assert _sharding.collectives_in(job.program()[0].text()) == []
    fixed = SweepJob(LORENZ(), {"rho": np.linspace(1.0, 2.0, 16)}, 1.0, dt=1e-3)
    assert _sharding.collectives_in(fixed.program()[0].text()) == []
    # The trap the shard_map avoids (diffrax #407): a sharded jit(vmap) of an adaptive solve.
    plan, args = prepare(Decay(), 1.0, t0=0.0, dt=None, solver="tsit5", n_save=2, y0=None,
                         key=None, rtol=1e-8, atol=1e-10, max_steps=60)
    mesh = _sharding.batch_mesh()
    rates = jax.device_put(jnp.linspace(1.0, 2.0, 16), _sharding.batch_sharding(mesh))
    one = lambda r: plan.run(dict(args, model=eqx.tree_at(lambda m: m.rate, args["model"], r)))[0]
    naive = jax.jit(jax.vmap(one)).lower(rates).compile().as_text()
    assert "all-reduce" in _sharding.collectives_in(naive)


def test_chunks_follow_the_memory_budget_and_reach_the_host_in_order():
    seen = []
    res = dl.sweep(LORENZ(), {"rho": np.linspace(0.0, 28.0, 100)}, 0.1, dt=1e-3, n_save=101,
                   memory_budget="100 KiB", progress=seen.append)
    per_point = 8 * (101 * 3 + 3 + 1 + 3 + 4)
    assert res.stats["chunk_size"] <= 100 * 1024 // (2 * per_point)
    assert [c.start for c in seen] == list(range(0, 100, res.stats["chunk_size"]))
    assert seen[-1].stop == 100 and all(c.elapsed > 0 for c in seen)
    np.testing.assert_array_equal(np.concatenate([c.y for c in seen]), res.ys)


@pytest.mark.parametrize(
    "space, kwargs, error, match",
    [
        ({"rhoo": [1.0]}, {}, ValueError, "no parameter 'rhoo'; did you mean rho"),
        ({"y0.q": [1.0]}, {}, ValueError, "no state 'q'"),
        ({"rho": [1.0, 2.0], "beta": [1.0]}, {}, ValueError, "differ in length"),
        ({"rho": [np.nan]}, {}, ValueError, "not finite"),
        ({"rho": [1.0]}, {"observables": {"m": "median(x)"}}, ValueError, "REDUCTION"),
        ({"rho": [1.0]}, {"observables": {"v": lambda t: t.ys}}, ValueError, "one number"),
        ({"rho": [1.0]}, {"chunk_size": 0}, ValueError, "chunk_size"),
        ({"rho": [1.0]}, {"memory_budget": "lots"}, ValueError, "memory_budget"),
        ({"rho": [1.0]}, {"devices": 9}, ValueError, "devices must be between 1 and 8"),
        ([1.0], {}, TypeError, "dict of arrays"),
    ],
)
def test_bad_arguments_raise_before_tracing(space, kwargs, error, match):
    with pytest.raises(error, match=match):
        dl.sweep(LORENZ(), space, 1.0, dt=1e-3, **kwargs)
