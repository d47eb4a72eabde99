"""The registered field models against closed forms and what their equations conserve."""

import re

import jax.numpy as jnp
import numpy as np
import pytest

import difflab as dl
from difflab.models import AllenCahn, Diffusion, Grid, KuramotoSivashinsky, Wave

FIELD_MODELS = ["advection_diffusion", "allen_cahn", "barkley", "burgers", "cahn_hilliard",
                "diffusion", "gray_scott", "heat1d", "kuramoto_sivashinsky", "navier_stokes",
                "swift_hohenberg", "wave"]


def test_field_models_are_registered_apart_from_the_ode_models():
    assert dl.models.field_models() == FIELD_MODELS
    assert not set(FIELD_MODELS) & set(dl.models.available())
    with pytest.raises(ValueError, match="did you mean gray_scott"):
        dl.models.get("gray_scot")


@pytest.mark.parametrize("name", FIELD_MODELS)
def test_field_models_are_documented_with_parameters_in_bounds(name):
    cls = dl.models.get(name)
    assert cls.registry_name == name and cls.domain == "fields"
    assert cls.description and "\n" not in cls.description and cls.__doc__.strip()
    specs = cls.parameter_specs()  # Kuramoto-Sivashinsky has none: its scales are fixed
    for pname, spec in specs.items():
        assert spec.doc and spec.bounds[0] <= spec.default <= spec.bounds[1]
        assert float(cls().parameters()[pname]) == spec.default


@pytest.mark.parametrize("points", [(16,), (8, 12), (6, 6, 4)])
def test_diffusion_decays_as_its_fourier_mode_in_one_to_three_dimensions(points):
    extent = [(0.0, 1.0), (0.0, 2.0), (-1.0, 1.0)][: len(points)]
    model = Diffusion(D=0.02, grid=Grid(extent, points))
    traj = dl.simulate(model, 2.0, dt=0.5, n_save=3)
    k2 = sum((2 * np.pi / (b - a)) ** 2 for a, b in extent)
    np.testing.assert_allclose(traj["u"], model.exact(traj.ts)["u"], atol=1e-13)
    np.testing.assert_allclose(float(jnp.max(traj["u"][-1]) / jnp.max(traj["u"][0])),
                               np.exp(-0.02 * k2 * 2.0), rtol=1e-12)


def test_a_uniform_allen_cahn_field_follows_the_logistic_closed_form():
    """``u' = u - u^3`` from ``u0``: ``u = u0 e^t / sqrt(1 + u0^2 (e^{2t} - 1))``."""
    model = AllenCahn(grid=Grid(((0.0, 2 * np.pi),), (8,)))
    traj = dl.simulate(model, 3.0, dt=0.025, n_save=4, y0={"u": jnp.full(8, 0.2)})
    e = np.exp(np.asarray(traj.ts))
    exact = 0.2 * e / np.sqrt(1 + 0.04 * (e**2 - 1))
    np.testing.assert_allclose(traj["u"][:, 0], exact, rtol=1e-7)


def test_allen_cahn_s_free_energy_never_grows():
    model = AllenCahn(grid=Grid(((0.0, 2 * np.pi),), (64,)))
    traj = dl.simulate(model, 10.0, dt=0.05, n_save=21)
    energy = np.array([float(model.free_energy(u)) for u in traj["u"]])
    assert np.all(np.diff(energy) <= 1e-12) and energy[-1] < 0.5 * energy[0]


@pytest.fixture(scope="module")
def square_wave():
    return Wave(c=1.5, grid=Grid(((0.0, 1.0), (0.0, 1.0)), (16, 16)))


def test_a_standing_wave_oscillates_at_c_times_its_wavenumber(square_wave):
    x, y = square_wave.grid.coordinates
    mode = jnp.sin(2 * np.pi * x) * jnp.sin(2 * np.pi * y)
    traj = dl.simulate(square_wave, 0.5, dt=0.0025, n_save=6,
                       y0={"u": mode, "v": jnp.zeros_like(mode)})
    omega = 1.5 * 2 * np.pi * np.sqrt(2)
    exact = np.cos(omega * np.asarray(traj.ts))[:, None, None] * mode
    np.testing.assert_allclose(traj["u"], exact, atol=1e-7)
    assert traj.solver == "rk4"


def test_the_wave_keeps_its_energy(square_wave):
    """A bump resolved by the grid: RK4's damping of its modes is below 1e-6."""
    x, y = square_wave.grid.coordinates
    bump = jnp.exp(-((x - 0.5) ** 2 + (y - 0.5) ** 2) / 0.02)
    traj = dl.simulate(square_wave, 1.0, dt=0.0025, n_save=3,
                       y0={"u": bump, "v": jnp.zeros_like(bump)})
    energy = [float(square_wave.energy({"u": u, "v": v}))
              for u, v in zip(traj["u"], traj["v"], strict=True)]
    np.testing.assert_allclose(energy, energy[0], rtol=1e-6)
    assert float(jnp.max(jnp.abs(traj["v"][-1]))) > 0.1  # it moved


def test_the_wave_refuses_what_cannot_advance_it(square_wave):
    with pytest.raises(ValueError, match="etdrk4 needs a linear part diagonal"):
        dl.simulate(square_wave, 1.0, solver="etdrk4")
    with pytest.raises(ValueError, match="euler amplifies the oscillating modes") as caught:
        dl.simulate(square_wave, 1.0, solver="euler", dt=1e-4)
    # the refusal names an explicit step that keeps them: rk4 runs there, its energy does
    # not grow (near its limit rk4 damps the fastest modes)
    dt = float(re.search(r"use rk4 with dt <= ([0-9.e+-]+), or sdirk2", str(caught.value))[1])
    traj = dl.simulate(square_wave, 200 * dt, solver="rk4", dt=dt, n_save=2)
    energy = [float(square_wave.energy({"u": u, "v": v}))
              for u, v in zip(traj["u"], traj["v"], strict=True)]
    assert 0 < energy[1] <= energy[0]
    with pytest.raises(ValueError, match="is unstable for rk4"):
        dl.simulate(square_wave, 1.0, solver="rk4", dt=1.2 * dt / 0.9)


def test_with_points_keeps_the_extent_and_a_model_refuses_other_dimensions():
    model = dl.models.get("gray_scott")(F=0.05).with_points((24, 32))
    assert model.grid.shape == (24, 32) and model.grid.extent == ((0, 1), (0, 1))
    assert float(model.F) == 0.05
    assert Diffusion().with_points(8).grid.shape == (8,)
    with pytest.raises(ValueError, match="written for grids of 1 axes, not 2"):
        KuramotoSivashinsky().with_points((16, 16))
