"""Nonlinear models against their known fixed points, limit cycles and asymptotics."""

import jax.numpy as jnp
import numpy as np
import pytest

import difflab as dl
from difflab.models import get


def test_lorenz_below_onset_decays_to_origin():
    traj = dl.simulate(get("lorenz")(rho=0.5), 20.0, dt=0.01, n_save=11)
    np.testing.assert_allclose(traj.final, 0.0, atol=1e-4)


@pytest.mark.parametrize("rho", [5.0, 10.0])
def test_lorenz_converges_to_convection_fixed_point(rho):
    beta = 8.0 / 3.0
    traj = dl.simulate(get("lorenz")(rho=rho), 30.0, dt=0.01, n_save=11)
    x, y, z = np.asarray(traj.final)
    c = np.sqrt(beta * (rho - 1.0))
    np.testing.assert_allclose([abs(x), abs(y), z], [c, c, rho - 1.0], rtol=1e-5)
    assert x * y > 0


@pytest.mark.slow
def test_van_der_pol_limit_cycle_amplitude_is_about_two():
    model = get("van_der_pol")()
    traj = dl.simulate(model, 60.0, dt=0.01, y0=jnp.array([0.1, 0.0]), n_save=3001)
    late = np.asarray(traj["x"])[traj.ts > 30.0]
    assert late.max() == pytest.approx(2.0, abs=0.02)
    assert late.min() == pytest.approx(-2.0, abs=0.02)


@pytest.mark.slow
def test_van_der_pol_relaxation_period_at_large_mu(crossings):
    mu = 1000.0
    model = get("van_der_pol")(mu=mu)
    traj = dl.simulate(model, 2600.0, solver="kvaerno5", rtol=1e-5, atol=1e-7, n_save=521)
    down = crossings(traj.ts, traj["x"], direction=-1)
    up = crossings(traj.ts, traj["x"])
    assert len(down) == 2 and len(up) == 1  # at 0.5 and 1.5 periods; up at 1 period
    period = (3.0 - 2.0 * np.log(2.0)) * mu
    np.testing.assert_allclose(np.diff(down), period, rtol=0.02)
    np.testing.assert_allclose(up - down[0], period / 2, rtol=0.02)


def _fhn_fixed_point(a, b, current):
    """The rest state: v solves -v^3/3 + (1 - 1/b) v + I - a/b = 0, w = (v + a) / b."""
    roots = np.roots([-1.0 / 3.0, 0.0, 1.0 - 1.0 / b, current - a / b])
    v = roots[np.abs(roots.imag) < 1e-9].real
    assert v.size == 1
    return np.array([v[0], (v[0] + a) / b])


@pytest.mark.slow
def test_fitzhugh_nagumo_rests_without_stimulus():
    model = get("fitzhugh_nagumo")(current=0.0)
    traj = dl.simulate(model, 200.0, dt=0.05, n_save=4001)
    np.testing.assert_allclose(traj.final, _fhn_fixed_point(0.7, 0.8, 0.0), atol=1e-6)


@pytest.mark.slow
def test_fitzhugh_nagumo_fires_periodically_with_stimulus(crossings):
    model = get("fitzhugh_nagumo")(current=0.5)
    traj = dl.simulate(model, 400.0, dt=0.05, n_save=4001)
    v = np.asarray(traj["v"])
    spikes = crossings(traj.ts, v)
    assert len(spikes) >= 8
    periods = np.diff(spikes[2:])
    np.testing.assert_allclose(periods, periods.mean(), rtol=1e-3)
    late = traj.ts > 200.0
    assert v[late].max() - v[late].min() > 3.0
    rest = _fhn_fixed_point(0.7, 0.8, 0.5)
    assert not np.allclose(traj.final, rest, atol=0.1)
