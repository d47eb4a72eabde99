"""``dl.fit`` on field models: coefficients recovered from snapshots of a field run, the
fit's gradient against finite differences, and reverse-mode memory that does not grow
with the number of steps."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difflab as dl
from difflab.models import Diffusion, GrayScott, Grid
from difflab.solvers._field_fits import as_field_observations, field_setup
from difflab.solvers._fits.problem import start_points


@pytest.fixture(scope="module")
def line():
    """A 1-D periodic line of 16 points, started from two Fourier modes."""
    grid = Grid(((0.0, 2 * np.pi),), (16,))
    x = grid.coordinates[0]
    return Diffusion(D=0.3, grid=grid), {"u": jnp.sin(x) + 0.5 * jnp.cos(3 * x)}


def test_a_diffusion_coefficient_is_recovered_from_snapshots(line):
    """The snapshots are the closed form ``exp(-D k^2 t)`` per mode (no solver made them);
    the fit starts at a third of the true D."""
    model, y0 = line
    x = model.grid.coordinates[0]
    ts = np.linspace(0.25, 1.0, 4)
    u = np.stack([np.exp(-0.3 * t) * np.sin(x) + 0.5 * np.exp(-2.7 * t) * np.cos(3 * x)
                  for t in ts])
    fit = dl.fit(model.replace(D=0.1), {"t": ts, "u": u}, ["D"], y0=y0, dt=0.05)
    assert fit.ok
    np.testing.assert_allclose(fit.params["D"], 0.3, rtol=1e-6)
    assert fit.run["u"].shape == (5, 16) and fit.n_data == 64
    np.testing.assert_allclose(fit.run["u"][1:], u, atol=1e-6)


@pytest.mark.slow
def test_two_gray_scott_rates_are_recovered_from_one_observed_field():
    """Only ``v`` is observed; ``Du`` and ``F`` both come back, to the run that made it."""
    model = GrayScott(Du=2e-4, Dv=1e-4, grid=Grid(((0.0, 1.0),), (16,)))
    truth = dl.simulate(model, 200.0, dt=4.0, n_save=3)
    data = {"t": truth.ts[1:], "v": truth["v"][1:]}
    fit = dl.fit(model.replace(Du=1e-4, F=0.03), data, ["Du", "F"], dt=4.0)
    assert fit.ok
    np.testing.assert_allclose([fit.params["Du"], fit.params["F"]], [2e-4, 0.04], rtol=1e-6)


def _loss(line, per_frame: int):
    model, y0 = line
    truth = dl.simulate(model, 1.0, dt=1.0 / (2 * per_frame), n_save=3, y0=y0)
    obs = as_field_observations(truth, model)
    solve = {"t0": 0.0, "t1": None, "dt": 1.0 / (2 * per_frame), "solver": "etdrk4", "y0": y0}
    problem, scales, args, _, _ = field_setup(model.replace(D=0.2), obs, ["D"], solve,
                                              bounds=None, log_scale=None, sigma=None)
    u = {"scalars": jnp.asarray(start_points(problem.names, scales, model.replace(D=0.2),
                                             1, 0)[0]), "free": {}}
    return problem, args, u


def test_the_gradient_of_a_field_fit_matches_finite_differences(line):
    """Reverse mode through 200 steps per frame (nested checkpoints) against central
    differences of the loss on the fit's own (log) scale."""
    problem, args, u = _loss(line, 200)
    grad = jax.grad(lambda u: problem.loss(u, args))(u)["scalars"][0]
    h = 1e-5

    def at(du):
        return float(problem.loss({"scalars": u["scalars"] + du, "free": {}}, args))

    central = (at(h) - at(-h)) / (2 * h)
    assert abs(float(grad)) > 1e-3
    np.testing.assert_allclose(float(grad), central, rtol=1e-6)


def _grad_memory(line, per_frame: int) -> int:
    problem, args, u = _loss(line, per_frame)
    grad = jax.jit(jax.grad(lambda u, args: problem.loss(u, args)))
    return grad.lower(u, args).compile().memory_analysis().temp_size_in_bytes


def test_reverse_mode_memory_does_not_grow_with_the_steps(line):
    """Ten times the steps, about the same working memory: a taped run would need ten
    times as much (one state per step)."""
    few, many = _grad_memory(line, 100), _grad_memory(line, 1000)
    state = 9 * 16  # bytes of one state in Fourier space: 9 complex modes
    assert many < 1.5 * few
    assert many < 2 * 1000 * state / 4


def test_field_data_that_cannot_be_fitted_are_refused(line):
    model, y0 = line
    u = np.zeros((2, 16))
    with pytest.raises(ValueError, match="whole multiples of one spacing"):
        dl.fit(model, {"t": [0.3, 0.7], "u": u}, ["D"], y0=y0)
    with pytest.raises(ValueError, match="'w', which is not a field"):
        dl.fit(model, {"t": [0.5, 1.0], "w": u}, ["D"], y0=y0)
    with pytest.raises(ValueError, match=r"shape \(2, 8\)"):
        dl.fit(model, {"t": [0.5, 1.0], "u": np.zeros((2, 8))}, ["D"], y0=y0)
    with pytest.raises(ValueError, match="field fit steps with"):
        dl.fit(model, {"t": [0.5, 1.0], "u": u}, ["D"], y0=y0, solver="tsit5")
    # it said "its parameters are D and arrays grid": a grid is not fitted
    with pytest.raises(ValueError, match=r"no parameter or field 'Q'; its parameters are D, "
                       r"its fields u \(fitted as initial values\)$"):
        dl.fit(model, {"t": [0.5, 1.0], "u": u}, ["Q"], y0=y0)


def test_the_field_fit_gradient_lowers_for_gpus_and_tpus(line):
    """The nested checkpoints hold no host callback: traced once, lowered for each."""
    problem, args, u = _loss(line, 100)
    traced = jax.jit(jax.grad(lambda u, args: problem.loss(u, args))).trace(u, args)
    for platform in ("cuda", "tpu"):
        assert "func.func public @main" in traced.lower(lowering_platforms=(platform,)).as_text()
