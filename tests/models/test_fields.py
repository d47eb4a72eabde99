"""The heat equation against the exact decay of the modes of its discretisation."""

import jax.numpy as jnp
import numpy as np
import pytest
from scipy.fft import dst

import difflab as dl
from difflab.models import get

pytestmark = pytest.mark.slow


def _decay_rates(n, diffusivity):
    """Eigenvalues of the central-difference Laplacian on n interior points, Dirichlet ends."""
    dx = 1.0 / (n + 1)
    k = np.arange(1, n + 1)
    return diffusivity * 4.0 / dx**2 * np.sin(k * np.pi * dx / 2.0) ** 2


def _solve(model, y0=None):
    return dl.simulate(model, 1.0, y0=y0, solver="kvaerno5", rtol=1e-9, atol=1e-12, n_save=11)


def test_heat1d_sine_mode_decays_at_its_discrete_rate():
    model = get("heat1d")(D=0.5, n=30)
    traj = _solve(model)
    x = np.arange(1, 31) / 31
    rate = _decay_rates(30, 0.5)[0]
    expected = np.exp(-rate * np.asarray(traj.ts))[:, None] * np.sin(np.pi * x)
    np.testing.assert_allclose(traj.ys, expected, atol=1e-8)
    # and the discrete rate approaches the continuum D pi^2 to O(dx^2)
    assert abs(rate / (0.5 * np.pi**2) - 1.0) < (np.pi / 31) ** 2 / 12 * 1.01


def test_heat1d_general_profile_matches_sine_series():
    n, diffusivity = 30, 0.5
    model = get("heat1d")(D=diffusivity, n=n)
    x = np.arange(1, n + 1) / (n + 1)
    u0 = np.minimum(x, 1.0 - x) + 0.3 * (x > 0.7)  # a tent plus a step: many modes
    traj = _solve(model, y0=jnp.asarray(u0))
    coefficients = dst(u0, type=1)
    decay = np.exp(-np.outer(np.asarray(traj.ts), _decay_rates(n, diffusivity)))
    expected = dst(decay * coefficients, type=1, axis=1) / (2 * (n + 1))
    np.testing.assert_allclose(traj.ys, expected, atol=1e-8)


def test_heat1d_is_solved_with_a_stiff_solver_unless_told_otherwise():
    model = get("heat1d")(D=1.0, n=50)  # fastest mode ~ 10^4 / s: RK4 at dt = 1e-3 diverges
    traj = dl.simulate(model, 1.0)
    assert traj.ok
    x = model.grid()
    np.testing.assert_allclose(traj.ys[-1], np.exp(-np.pi**2) * np.sin(np.pi * x), rtol=1e-2,
                               atol=1e-8)  # the discrete rate is pi^2 (1 - 3e-4)
    assert not dl.simulate(model, 1.0, solver="rk4", dt=1e-3, throw=False).ok
    explicit = dl.simulate(model, 1.0, solver="rk4", n_save=2)  # the automatic step: stable
    np.testing.assert_allclose(explicit.ys[-1], traj.ys[-1], rtol=1e-4, atol=1e-9)
