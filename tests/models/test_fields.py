"""heat1d, the heat equation on a rod with Dirichlet walls, against the exact decay of
its sine mode: on the grid, and in the continuum under refinement."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difflab as dl
from difflab.models import get

D = 0.5
T1 = 1.0


def _sine(points):
    model = get("heat1d")(D=D).with_points(points)
    return model, np.asarray(model.grid.axis_coordinates(0))


def _discrete_rate(points):
    """The three-point Laplacian's eigenvalue for ``sin(pi x)``, spacing ``h = 1/points``."""
    h = 1.0 / points
    return D * 4 / h**2 * np.sin(np.pi * h / 2) ** 2


@pytest.fixture(scope="module")
def runs():
    """Runs of the sine mode on 25 and 50 points by the default solver, dt = 1e-3."""
    return {n: dl.simulate(_sine(n)[0], T1, dt=1e-3, n_save=11) for n in (25, 50)}


def test_heat1d_is_a_field_model_on_a_walled_rod():
    model = get("heat1d")()
    assert isinstance(model, dl.models.AbstractFieldModel) and "heat1d" in dl.models.field_models()
    assert model.grid.shape == (50,) and model.grid.extent == ((0.0, 1.0),)
    assert not model.grid.periodic(0) and model.field_names == ("u",)
    assert model.default_solver == "imex2" and float(model.D) == 0.1
    assert model.parameter_specs()["D"].unit == "m^2/s"
    np.testing.assert_allclose(model.initial_fields()["u"],
                               np.sin(np.pi * (np.arange(50) + 0.5) / 50))


@pytest.mark.parametrize("points", [25, 50])
def test_the_sine_mode_decays_at_the_grids_rate(runs, points):
    model, x = _sine(points)
    ts = np.asarray(runs[points].ts)
    expected = np.exp(-_discrete_rate(points) * ts)[:, None] * np.sin(np.pi * x)
    np.testing.assert_allclose(runs[points]["u"], expected, atol=2e-6 * 50 / points)
    np.testing.assert_allclose(model.exact(ts)["u"], expected, rtol=1e-12)


def test_the_sine_mode_converges_to_the_continuum_at_second_order(runs):
    errors = []
    for points in (25, 50):
        _, x = _sine(points)
        ts = np.asarray(runs[points].ts)
        continuum = np.exp(-D * np.pi**2 * ts)[:, None] * np.sin(np.pi * x)
        errors.append(np.max(np.abs(np.asarray(runs[points]["u"]) - continuum)))
    assert 3.6 < errors[0] / errors[1] < 4.4  # h^2
    assert errors[1] < 2e-4


def test_heat1d_is_solved_with_a_stiff_solver_unless_told_otherwise(runs):
    model, _ = _sine(50)  # fastest mode ~ 7000 / s: RK4 at dt = 1e-3 would diverge
    assert runs[50].ok and runs[50].solver == "imex2"
    with pytest.raises(ValueError, match=r"dt = 0.001 is unstable for rk4 .* dt <= 0.000"
                                         r".* or solver='imex2'"):
        dl.simulate(model, T1, solver="rk4", dt=1e-3, n_save=11, throw=False)


@pytest.mark.slow
def test_the_gradient_in_d_is_the_closed_forms():
    model, x = _sine(50)

    def middle(d):
        run = dl.simulate(model.replace(D=d), 0.2, dt=0.01, n_save=2)
        return run["u"][-1, 25]

    rate_per_d = _discrete_rate(50) / D
    exact = -0.2 * rate_per_d * np.exp(-rate_per_d * D * 0.2) * np.sin(np.pi * x[25])
    np.testing.assert_allclose(jax.grad(middle)(jnp.asarray(D)), exact, rtol=1e-3)
