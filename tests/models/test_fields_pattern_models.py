"""Burgers, Swift-Hohenberg and Cahn-Hilliard against closed forms and what they keep."""

import jax.numpy as jnp
import numpy as np

import difflab as dl
from difflab.models import Grid
from difflab.models._fields import Burgers, CahnHilliard, SwiftHohenberg


def test_burgers_follows_the_cole_hopf_closed_form():
    model = Burgers(nu=0.1, a=0.8, grid=Grid(((0.0, 2 * np.pi),), (64,)))
    traj = dl.simulate(model, 2.0, dt=0.01, n_save=5)
    assert traj.solver == "etdrk4"
    np.testing.assert_allclose(traj["u"], model.exact(traj.ts)["u"], atol=1e-8)
    assert float(jnp.max(jnp.abs(traj["u"][-1]))) < 0.8 * float(jnp.max(traj["u"][0]))


def test_a_small_swift_hohenberg_mode_grows_at_its_linear_rate():
    """``u = eps cos(k x)`` with ``eps = 1e-7``: the cubic term is ``1e-14`` of it."""
    grid = Grid(((0.0, 8 * np.pi), (0.0, 8 * np.pi)), (16, 8))
    model = SwiftHohenberg(r=0.3, grid=grid)
    x, _ = grid.coordinates
    for k in (0.75, 1.0, 1.25):
        u0 = 1e-7 * jnp.cos(k * x) * jnp.ones(grid.shape)
        traj = dl.simulate(model, 4.0, dt=0.1, n_save=2, y0={"u": u0})
        rate = np.log(float(jnp.max(traj["u"][-1])) / 1e-7) / 4.0
        np.testing.assert_allclose(rate, model.growth_rate(k), atol=1e-7)


def test_cahn_hilliard_keeps_its_mass_and_never_raises_its_free_energy():
    model = CahnHilliard(gamma=0.05, grid=Grid(((0.0, 2 * np.pi),) * 2, (16, 16)))
    traj = dl.simulate(model, 2.0, dt=0.005, n_save=21)
    mass = np.array([float(jnp.mean(c)) for c in traj["c"]])
    np.testing.assert_allclose(mass, mass[0], atol=1e-12, rtol=0)
    energy = np.array([float(model.free_energy(c)) for c in traj["c"]])
    assert np.all(np.diff(energy) <= 1e-12) and energy[-1] < 0.9 * energy[0]
    assert float(jnp.max(jnp.abs(traj["c"][-1]))) > 0.5  # the phases separated
