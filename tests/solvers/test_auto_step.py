"""One automatic step rule for every entry point: stable, as accurate as asked, recorded in
results and files, with saved points that resolve the dynamics; and a model whose vector
field returns the wrong shape is refused before tracing."""

import math

import h5py
import jax.numpy as jnp
import numpy as np
import pytest

import difflab as dl
from difflab.cli.main import main
from tests.models_for_tests import Rod

LORENZ = dl.models.get("lorenz")
RK4_RADIUS = 2.785


def test_a_lorenz_sweep_to_rho_100_with_the_automatic_step_has_no_failed_point():
    result = dl.sweep(LORENZ(), dl.grid({"rho": np.linspace(10.0, 100.0, 4)}), 100.0,
                      observables={"z_max": "max(z)"})
    assert np.all(np.asarray(result.result) == dl.Result.SUCCESS)
    dt = result.settings["dt"]  # the step used, recorded (was None: t1 / 1000 = 0.1)
    rate = dl.solvers.auto_step(LORENZ(rho=100.0), 100.0).rate
    assert dt <= 0.5 * RK4_RADIUS / rate  # the fastest point's stable step
    again = result.rerun(3)  # rho = 100 alone, with the sweep's recorded settings
    assert again.ok and again.settings.dt == dt


def test_the_step_follows_the_fastest_point_of_a_sweep_not_the_base_model():
    slow = dl.sweep(LORENZ(), dl.grid({"rho": np.array([28.0])}), 100.0)
    fast = dl.sweep(LORENZ(), dl.grid({"rho": np.array([28.0, 100.0])}), 100.0)
    assert fast.settings["dt"] < slow.settings["dt"]


def test_a_long_stream_takes_a_stable_step_not_t1_over_1000():
    first = next(dl.stream(LORENZ(), 20000.0))
    dt = first.settings.dt  # was 20: the run exploded to 1.5e+129
    rate = dl.solvers.auto_step(LORENZ(), 20000.0).rate
    assert dt <= 0.5 * RK4_RADIUS / rate and dt == dl.solvers.auto_step(LORENZ(), 20000.0).dt
    run = dl.simulate(LORENZ(), 300.0, dt=dt, n_save=2)  # the attractor stays bounded
    assert np.all(np.abs(np.asarray(run.ys)) < 100.0)
    assert first.settings.n_save > 100_000  # not 1001 points for 20,000 time units


def test_saved_points_resolve_the_dynamics():
    run = dl.simulate(LORENZ(), 100.0)
    rate = dl.solvers.auto_step(LORENZ(), 100.0).rate
    assert run.settings.n_save >= 10_001 > 1596  # was drawn from 1596 points
    gaps = np.diff(np.asarray(run.ts))
    assert gaps.max() * rate < 0.25  # 4 points or more per characteristic time 1 / rate
    assert dl.simulate(LORENZ(rho=29.0), 100.0).settings.n_save == run.settings.n_save


def test_the_step_is_as_accurate_as_rtol_asks():
    pendulum = dl.models.get("pendulum")()
    loose, tight = (dl.solvers.auto_step(pendulum, 10.0, rtol=r).dt for r in (1e-9, 1e-13))
    assert loose / tight == pytest.approx(10.0, rel=1e-6)  # rk4: rtol ** (1 / 4)
    assert dl.solvers.auto_step(pendulum, 10.0, solver="heun", rtol=1e-6).limit == "accuracy"


def test_a_stiff_model_on_an_explicit_solver_is_stepped_inside_its_stability():
    run = dl.simulate(Rod(), 10.0, solver="rk4", throw=False)  # t1 / 1000 = 0.01: unstable
    assert run.ok, run.message
    assert run.settings.dt <= 0.5 * float(run.stats["dt_stable"]) * 1.1


def test_an_adaptive_solver_keeps_its_own_first_step():
    auto = dl.solvers.auto_step(LORENZ(), 10.0, solver="tsit5")
    assert auto.dt is None and auto.n_save >= 1001


def test_the_command_line_default_and_its_files_record_the_step(tmp_path):
    out = tmp_path / "run.h5"
    assert main(["run", "lorenz", "--t1", "100", "--out", str(out)]) == 0
    expected = dl.solvers.auto_step(LORENZ(), 100.0)
    with h5py.File(out, "r") as f:
        (group,) = f["runs"].values()
        assert group.attrs["dt"] == pytest.approx(expected.dt, rel=1e-12)  # not 0.1
        assert group.attrs["n_save"] == expected.n_save
    config = tmp_path / "sweep.toml"
    config.write_text('model = "lorenz"\nname = "s"\n[solve]\nt1 = 100.0\n'
                      '[space.grid]\nrho = { linspace = [20.0, 100.0, 3] }\n'
                      '[output.observables]\nz_max = "max(z)"\n')
    sweep_out = tmp_path / "sweep.h5"
    assert main(["sweep", str(config), "--out", str(sweep_out)]) == 0
    with h5py.File(sweep_out, "r") as f:
        attrs = f["sweeps/s"].attrs
        assert 0 < attrs["dt"] <= 0.5 * RK4_RADIUS / dl.solvers.auto_step(
            LORENZ(rho=100.0), 100.0).rate
        assert attrs["n_save"] >= 2
        assert np.all(f["sweeps/s/result"][()] == 0)


class _Scalar(dl.Model):
    """Two states, a vector field that returns one number."""

    a: float = 1.0
    state_names = ("x", "v")

    def vector_field(self, t, y):
        return self.a * y[0]

    def initial_state(self):
        return jnp.array([1.0, 0.0])


class _Pair(_Scalar):
    def vector_field(self, t, y):
        return y[1], -y[0]


class _Complex(_Scalar):
    def vector_field(self, t, y):
        return y * 1j


def test_a_vector_field_of_the_wrong_shape_is_refused_in_one_line():
    with pytest.raises(ValueError, match=r"_Scalar\.vector_field must return shape \(2,\).*"
                                         r"returned shape \(\)") as caught:
        dl.simulate(_Scalar(), 1.0, dt=1e-2)
    assert "\n" not in str(caught.value)
    with pytest.raises(TypeError, match=r"_Pair\.vector_field must return one array"):
        dl.simulate(_Pair(), 1.0, dt=1e-2)
    with pytest.raises(TypeError, match=r"_Complex\.vector_field must return real numbers"):
        dl.simulate(_Complex(), 1.0)
    with pytest.raises(ValueError, match="_Scalar.vector_field"):
        dl.sweep(_Scalar(), dl.grid({"a": np.array([1.0, 2.0])}), 1.0)


def test_a_short_run_keeps_the_resolution_of_a_thousand_steps():
    auto = dl.solvers.auto_step(LORENZ(), 1e-3)
    assert auto.dt == pytest.approx(1e-6) and auto.limit.startswith("resolution")
    assert math.isfinite(auto.rate) and auto.n_save == 1001


def test_a_probe_that_diverges_is_retried_with_smaller_steps():
    """The double pendulum with its lightest first mass (the slider's end) has a fast
    transient the first rate does not foresee: the probe's own steps diverged and measured
    rates of 1e77 (dt = 6e-78, refused). Retried with smaller steps, the rule finds a
    step that runs, and the run agrees with an adaptive solve."""
    model = dl.models.get("double_pendulum")(m1=0.01)
    auto = dl.solvers.auto_step(model, 10.0)
    assert 1e-5 < auto.dt < 1e-2 and np.isfinite(auto.rate)
    fixed = dl.simulate(model, 2.0)  # chaotic: compared before errors grow
    adaptive = dl.simulate(model, 2.0, solver="tsit5", rtol=1e-10, atol=1e-12, n_save=2)
    assert fixed.ok
    np.testing.assert_allclose(fixed.ys[-1], adaptive.ys[-1], rtol=1e-4, atol=1e-4)
