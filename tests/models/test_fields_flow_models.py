"""Navier-Stokes and advection-diffusion against closed forms and what they keep."""

import jax.numpy as jnp
import numpy as np
import pytest

import difflab as dl
from difflab.models import Grid
from difflab.models._fields import AdvectionDiffusion, NavierStokes


@pytest.fixture(scope="module")
def flow():
    return NavierStokes(nu=0.05, grid=Grid(((0.0, 2 * np.pi),) * 2, (16, 16)))


def test_the_taylor_green_vortex_keeps_its_shape_and_decays_at_its_closed_form_rate(flow):
    x, y = flow.grid.coordinates
    k = 2
    w0 = 2 * k * jnp.sin(k * x) * jnp.sin(k * y)
    traj = dl.simulate(flow, 2.0, dt=0.05, n_save=5, y0={"w": w0})
    assert traj.solver == "etdrk4"
    decay = np.exp(-2 * 0.05 * k**2 * np.asarray(traj.ts))[:, None, None]
    np.testing.assert_allclose(traj["w"], decay * np.asarray(w0), atol=1e-8)
    assert decay[-1, 0, 0] < 0.5  # it decayed by a visible amount


def test_the_velocity_follows_from_the_stream_function_closed_form(flow):
    """``w = sin x sin 2y + cos(3x - y) / 2`` has ``psi = sin x sin 2y / 5 + cos(3x - y) / 20``
    (``laplace(psi) = -w``), so ``(u, v) = (psi_y, -psi_x)`` written out, divergence-free."""
    x, y = flow.grid.coordinates
    w = jnp.sin(x) * jnp.sin(2 * y) + 0.5 * jnp.cos(3 * x - y)
    u = 0.4 * jnp.sin(x) * jnp.cos(2 * y) + 0.05 * jnp.sin(3 * x - y)
    v = -0.2 * jnp.cos(x) * jnp.sin(2 * y) + 0.15 * jnp.sin(3 * x - y)
    np.testing.assert_allclose(flow.velocity(w), jnp.stack([u, v]), atol=1e-13)
    energy = 0.5 * (2 * np.pi) ** 2 * (0.4**2 / 4 + 0.05**2 / 2 + 0.2**2 / 4 + 0.15**2 / 2)
    np.testing.assert_allclose(float(flow.kinetic_energy(w)), energy, rtol=1e-12)


def test_unforced_kinetic_energy_never_grows(flow):
    rng = np.random.default_rng(0)
    w0 = jnp.asarray(rng.standard_normal(flow.grid.shape))
    traj = dl.simulate(flow, 1.0, dt=0.01, n_save=11, y0={"w": w0})
    energy = np.array([float(flow.kinetic_energy(w)) for w in traj["w"]])
    assert np.all(np.diff(energy) < 0) and energy[-1] < 0.95 * energy[0]


def test_kolmogorov_forcing_drives_its_laminar_closed_form_from_rest(flow):
    """From rest the flow stays the shear ``u = F (1 - e^{-nu n^2 t}) sin(n y) / (nu n^2)``,
    whose vorticity ``-u_y`` the run must match."""
    model = flow.replace(forcing=0.5, forcing_wavenumber=2.0)
    traj = dl.simulate(model, 1.0, dt=0.05, n_save=3, y0={"w": jnp.zeros(flow.grid.shape)})
    _, y = flow.grid.coordinates
    rate = 0.05 * 4
    growth = (1 - np.exp(-rate * np.asarray(traj.ts)))[:, None, None] * 0.5 / rate
    np.testing.assert_allclose(traj["w"], -growth * 2 * np.cos(2 * np.asarray(y)), atol=1e-8)


@pytest.mark.parametrize("points", [(16,), (16, 8)])
def test_advection_diffusion_translates_and_decays_its_fourier_modes(points):
    extent = [(0.0, 2.0), (-1.0, 1.0)][: len(points)]
    model = AdvectionDiffusion(D=0.05, cx=0.7, cy=-0.4, grid=Grid(extent, points))
    traj = dl.simulate(model, 2.0, dt=0.1, n_save=5)
    assert traj.solver == "etdrk4"
    np.testing.assert_allclose(traj["u"], model.exact(traj.ts)["u"], atol=1e-12)
    moved = np.max(np.abs(np.asarray(traj["u"][-1]) - np.asarray(traj["u"][0])))
    assert moved > 0.5  # it is not standing still
