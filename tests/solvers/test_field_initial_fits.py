"""``dl.fit`` recovers an initial field from later snapshots: on periodic 1-D diffusion
the modes that survive to the first snapshot come back, those that decayed below rounding
do not; the gradient through the run matches finite differences."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difflab as dl
from difflab.models import Diffusion, Grid

D, DT = 0.1, 0.01


@pytest.fixture(scope="module")
def setting():
    """A Gaussian bump on 16 points, seen at t = 0.25, 0.5, 0.75 and 1 (not at 0)."""
    grid = Grid(((0.0, 1.0),), (16,))
    x = grid.coordinates[0]
    true = jnp.exp(-(((x - 0.4) / 0.1) ** 2))
    model = Diffusion(D=D, grid=grid)
    truth = dl.simulate(model, 1.0, dt=DT, n_save=5, y0={"u": true})
    return model, true, {"t": truth.ts[1:], "u": truth["u"][1:]}


def test_an_initial_field_is_recovered_in_the_modes_that_survive(setting):
    model, true, data = setting
    fit = dl.fit(model, data, ["u"], y0={"u": jnp.zeros(16)}, dt=DT)
    assert fit.ok and fit.names == () and fit.n_data == 64
    found = np.fft.rfft(np.asarray(fit.settings["y0"]["u"]))
    exact = np.fft.rfft(np.asarray(true))
    # each mode k decays by exp(-D k^2 t) before the first snapshot (t = 0.25)
    kept = np.exp(-D * (2 * np.pi * np.arange(9)) ** 2 * 0.25)
    survive, lost = kept > 1e-4, kept < 1e-14  # lost: below rounding
    assert survive.sum() == 4 and lost.sum() == 3
    np.testing.assert_allclose(found[survive], exact[survive], atol=1e-8 * abs(exact[0]))
    assert np.all(np.abs(found[lost] - exact[lost]) > 0.5 * np.abs(exact[lost]))
    np.testing.assert_allclose(fit.run["u"][0], fit.settings["y0"]["u"])
    np.testing.assert_allclose(fit.run["u"][1:], data["u"], atol=1e-9)


def test_the_gradient_in_the_initial_field_matches_finite_differences(setting):
    model, true, data = setting

    def loss(u0):
        run = dl.simulate(model, 1.0, dt=DT, n_save=5, y0={"u": u0})
        return 0.5 * jnp.sum((run["u"][1:] - data["u"]) ** 2)

    u0 = jnp.cos(2 * jnp.pi * model.grid.coordinates[0])
    direction = jnp.sin(6 * jnp.pi * model.grid.coordinates[0]) + 0.3
    g = jax.grad(loss)(u0)
    h = 1e-5
    fd = (loss(u0 + h * direction) - loss(u0 - h * direction)) / (2 * h)
    np.testing.assert_allclose(jnp.vdot(g, direction), fd, rtol=1e-7)


@pytest.mark.slow
def test_a_field_and_a_coefficient_are_fitted_together(setting):
    """``D`` is set by the decay between snapshots, whatever the initial field."""
    model, true, data = setting
    fit = dl.fit(model.replace(D=0.07), data, ["D", "u"], dt=DT)
    assert fit.ok and fit.names == ("D",)
    np.testing.assert_allclose(fit.params["D"], D, rtol=1e-6)
    np.testing.assert_allclose(fit.run["u"][1:], data["u"], atol=1e-9)


def test_a_fit_that_names_nothing_fittable_is_refused(setting):
    model, _, data = setting
    with pytest.raises(ValueError, match="params is empty"):
        dl.fit(model, data, [])
    with pytest.raises(ValueError, match="no parameter or field 'w'; its parameters are D, its "
                       "fields u"):
        dl.fit(model, data, ["w"])
