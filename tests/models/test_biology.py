"""Biological models against conserved quantities, final sizes and mean-field theory."""

import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import brentq

import difflab as dl
from difflab.models import get


@pytest.mark.slow
def test_lotka_volterra_conserves_its_first_integral():
    alpha, beta, gamma, delta = 1.1, 0.4, 0.4, 0.1
    traj = dl.simulate(get("lotka_volterra")(), 50.0, dt=1e-3, n_save=2001)
    x, y = np.asarray(traj["prey"]), np.asarray(traj["predator"])
    invariant = delta * x - gamma * np.log(x) + beta * y - alpha * np.log(y)
    np.testing.assert_allclose(invariant, invariant[0], rtol=1e-10)
    assert x.max() / x.min() > 5.0  # a genuine, large cycle


@pytest.mark.slow
def test_lotka_volterra_small_cycles_have_linearised_period(crossings):
    alpha, beta, gamma, delta = 2.0, 0.5, 1.5, 0.25
    model = get("lotka_volterra")(alpha=alpha, beta=beta, gamma=gamma, delta=delta)
    y0 = jnp.array([1.001 * gamma / delta, alpha / beta])
    traj = dl.simulate(model, 20.0, dt=1e-3, y0=y0, n_save=2001)
    period = np.diff(crossings(traj.ts, traj["prey"] - gamma / delta))
    np.testing.assert_allclose(period, 2 * np.pi / np.sqrt(alpha * gamma), rtol=1e-5)


@pytest.mark.slow
def test_sir_conserves_population_and_reaches_final_size():
    beta, gamma, n, infected0 = 0.3, 0.1, 1000.0, 1.0
    traj = dl.simulate(get("sir")(), 400.0, dt=0.05, n_save=101)
    np.testing.assert_allclose(np.sum(traj.ys, axis=1), n, rtol=1e-12)
    r0, s0 = beta / gamma, n - infected0
    s_inf = brentq(lambda s: s - s0 * np.exp(-r0 * (1.0 - s / n)), 1e-9, s0 * 0.999)
    np.testing.assert_allclose(traj.final, [s_inf, 0.0, n - s_inf], rtol=1e-6, atol=1e-6)


def test_kuramoto_frequencies_are_lorentzian_quantiles():
    gamma, omega0 = 0.7, 1.5
    omega = np.asarray(get("kuramoto")(n=300, gamma=gamma, omega0=omega0).natural_frequencies())
    quartiles = np.percentile(omega, [25, 50, 75])
    np.testing.assert_allclose(quartiles, [omega0 - gamma, omega0, omega0 + gamma], atol=0.01)


def _simulate_kuramoto(model, t1):
    return dl.simulate(model, t1, dt=0.05, n_save=201)


@pytest.mark.slow
def test_kuramoto_uncoupled_phases_drift_at_natural_frequencies():
    model = get("kuramoto")(n=300, K=0.0, gamma=0.3, omega0=1.0)
    traj = _simulate_kuramoto(model, 10.0)
    expected = traj.ys[0] + np.outer(traj.ts, model.natural_frequencies())
    np.testing.assert_allclose(traj.ys, expected, rtol=1e-12, atol=1e-9)


def _late_order_parameter(model, t1=60.0):
    traj = _simulate_kuramoto(model, t1)
    r = np.abs(np.mean(np.exp(1j * np.asarray(traj.ys)), axis=1))
    return float(np.mean(r[traj.ts > 0.5 * t1]))


@pytest.mark.slow
@pytest.mark.parametrize("ratio", [2.0, 4.0])
def test_kuramoto_synchronises_above_critical_coupling(ratio):
    gamma = 0.5
    model = get("kuramoto")(n=300, gamma=gamma, K=ratio * 2 * gamma)
    assert _late_order_parameter(model) == pytest.approx(np.sqrt(1 - 1 / ratio), rel=0.03)


def test_kuramoto_stays_incoherent_below_critical_coupling():
    model = get("kuramoto")(n=300, gamma=0.5, K=0.5)
    assert _late_order_parameter(model) < 0.1
