"""Mechanical models against analytic periods, normal modes and conservation laws."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.special import ellipk

import difflab as dl
from difflab.models import get

pytestmark = pytest.mark.slow

G_EARTH = 9.81


def _along(f, ys):
    """``f`` of each saved state, jitted (eager dispatch of many small ops is slow)."""
    return jax.jit(jax.vmap(f))(ys)


def test_pendulum_small_angle_period(crossings):
    model = get("pendulum")(theta0=1e-3, length=2.0)
    traj = dl.simulate(model, 12.0, dt=1e-3, solver="leapfrog", n_save=12001)
    period = np.diff(crossings(traj.ts, traj["omega"]))
    np.testing.assert_allclose(period, 2 * np.pi * np.sqrt(2.0 / G_EARTH), rtol=1e-5)


def test_pendulum_large_angle_period_and_energy(crossings):
    model = get("pendulum")(theta0=2.0)
    traj = dl.simulate(model, 12.0, dt=1e-3, solver="leapfrog", n_save=12001)
    exact = 4 * np.sqrt(1 / G_EARTH) * ellipk(np.sin(1.0) ** 2)
    np.testing.assert_allclose(np.diff(crossings(traj.ts, traj["omega"])), exact, rtol=1e-5)
    energy = _along(model.energy, traj.ys)
    np.testing.assert_allclose(energy, energy[0], rtol=1e-5)  # bounded O(dt^2) error


@jax.jit
def _lagrangian_accelerations(m1, m2, l1, l2, g, y):
    """Euler-Lagrange accelerations derived by autodiff from the Cartesian Lagrangian."""

    def lagrangian(q, qdot):
        def positions(q):
            p1 = l1 * jnp.array([jnp.sin(q[0]), -jnp.cos(q[0])])
            return p1, p1 + l2 * jnp.array([jnp.sin(q[1]), -jnp.cos(q[1])])

        (r1, r2), (v1, v2) = jax.jvp(positions, (q,), (qdot,))
        kinetic = 0.5 * m1 * v1 @ v1 + 0.5 * m2 * v2 @ v2
        return kinetic - g * (m1 * r1[1] + m2 * r2[1])

    q, qdot = y[:2], y[2:]
    mass = jax.hessian(lagrangian, argnums=1)(q, qdot)
    mixed = jax.jacfwd(jax.grad(lagrangian, argnums=1), argnums=0)(q, qdot)
    force = jax.grad(lagrangian, argnums=0)(q, qdot) - mixed @ qdot
    return jnp.linalg.solve(mass, force)


def test_double_pendulum_matches_euler_lagrange():
    rng = np.random.default_rng(0)
    vector_field = jax.jit(lambda model, y: model.vector_field(0.0, y))
    for _ in range(3):
        m1, m2, l1, l2 = rng.uniform(0.3, 3.0, size=4)
        model = get("double_pendulum")(m1=m1, m2=m2, l1=l1, l2=l2)
        y = jnp.asarray(rng.uniform(-3.0, 3.0, size=4))
        expected = _lagrangian_accelerations(m1, m2, l1, l2, G_EARTH, y)
        np.testing.assert_allclose(vector_field(model, y)[2:], expected, rtol=1e-10)


def test_double_pendulum_conserves_energy_while_chaotic():
    model = get("double_pendulum")()
    traj = dl.simulate(model, 10.0, dt=1e-3, n_save=8001)
    energy = _along(model.energy, traj.ys)
    np.testing.assert_allclose(energy, energy[0], atol=1e-7 * abs(float(energy[0])))
    assert float(jnp.ptp(traj["theta2"])) > 1.0  # it really moved


def test_double_pendulum_slow_normal_mode(crossings):
    model = get("double_pendulum")()
    eps = 1e-4
    y0 = jnp.array([eps, np.sqrt(2) * eps, 0.0, 0.0])
    traj = dl.simulate(model, 8.0, dt=1e-3, y0=y0, n_save=8001)
    period = 2 * np.pi / np.sqrt((2 - np.sqrt(2)) * G_EARTH)
    np.testing.assert_allclose(np.diff(crossings(traj.ts, traj["omega1"])), period, rtol=1e-5)
    np.testing.assert_allclose(traj["theta2"], np.sqrt(2) * traj["theta1"], atol=1e-9)


def test_duffing_linear_limit_reaches_driven_steady_state():
    delta, omega, gamma = 0.4, 1.3, 0.7
    model = get("duffing")(alpha=1.0, beta=0.0, delta=delta, gamma=gamma, omega=omega)
    traj = dl.simulate(model, 100.0, dt=0.01, n_save=1001)
    amplitude = gamma / np.hypot(1.0 - omega**2, delta * omega)
    phase = np.arctan2(delta * omega, 1.0 - omega**2)
    late = traj.ts > 85.0
    expected = amplitude * np.cos(omega * traj.ts[late] - phase)
    np.testing.assert_allclose(traj["x"][late], expected, atol=1e-6)


def _spring_mode(n, j):
    return np.sin(j * np.pi * np.arange(1, n + 1) / (n + 1))


@pytest.mark.parametrize("j", [1, 3])
def test_spring_chain_normal_mode_is_standing_wave(j):
    n, k, m = 6, 2.0, 0.5
    model = get("spring_chain")(n=n, k=k, m=m)
    shape = 0.1 * _spring_mode(n, j)
    y0 = jnp.concatenate([jnp.asarray(shape), jnp.zeros(n)])
    traj = dl.simulate(model, 10.0, dt=1e-3, y0=y0, n_save=201)
    omega = 2 * np.sqrt(k / m) * np.sin(j * np.pi / (2 * (n + 1)))
    expected = np.cos(omega * np.asarray(traj.ts))[:, None] * shape
    np.testing.assert_allclose(traj.ys[:, :n], expected, atol=1e-9)


def test_spring_chain_pluck_conserves_energy():
    model = get("spring_chain")(n=6, pluck=0.1)
    traj = dl.simulate(model, 100.0, dt=0.01, n_save=201)
    energy = _along(model.energy, traj.ys)
    assert float(energy[0]) == pytest.approx(0.5 * 2 * 0.1**2)  # two springs stretched
    np.testing.assert_allclose(energy, energy[0], rtol=1e-7)
    assert float(jnp.max(jnp.abs(traj["x5"]))) > 0.02  # the pulse reached the far end


def test_nbody_two_body_circular_orbit_obeys_kepler():
    model = get("nbody")(n=2, G=2.0, mass=0.5, softening=0.0)
    separation, total_mass = 2.0, 1.0
    period = 2 * np.pi * np.sqrt(separation**3 / (model.G * total_mass))
    traj = dl.simulate(model, period, dt=1e-3, n_save=51)
    q = traj.ys[:, :4].reshape(-1, 2, 2)
    np.testing.assert_allclose(np.linalg.norm(q[:, 0] - q[:, 1], axis=-1), separation, rtol=1e-8)
    np.testing.assert_allclose(traj.final, traj.ys[0], atol=1e-7)


def test_nbody_figure_eight_returns_after_its_period():
    model = get("nbody")(softening=0.0)
    traj = dl.simulate(model, 6.32591398, dt=1e-3, n_save=51)
    np.testing.assert_allclose(traj.final, traj.ys[0], atol=1e-5)
    np.testing.assert_allclose(_along(model.angular_momentum, traj.ys), 0.0, atol=1e-7)


def test_nbody_conserves_momentum_and_energy():
    model = get("nbody")(softening=0.05)
    y0 = jnp.asarray(np.random.default_rng(1).normal(size=12))
    traj = dl.simulate(model, 5.0, dt=1e-3, y0=y0, n_save=51)
    p = _along(model.total_momentum, traj.ys)
    np.testing.assert_allclose(p, np.broadcast_to(p[0], p.shape), atol=1e-12)
    l = _along(model.angular_momentum, traj.ys)
    np.testing.assert_allclose(l, l[0], atol=1e-10)
    energy = _along(model.energy, traj.ys)
    np.testing.assert_allclose(energy, energy[0], rtol=1e-3)
