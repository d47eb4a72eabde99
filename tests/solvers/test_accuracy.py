"""Solver accuracy against analytic solutions, SciPy and conservation laws."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import difflab as dl
from tests.models_for_tests import Spring

OSCILLATOR = Spring(c=0.0)  # x'' = -x: x(t) = cos t, v(t) = -sin t


def _error(solver, dt, t1=2.0):
    traj = dl.simulate(OSCILLATOR, t1, dt=dt, solver=solver, n_save=2)
    return float(jnp.abs(traj.ys[-1, 0] - jnp.cos(t1)))


@pytest.mark.parametrize("solver, order", [("euler", 1), ("heun", 2), ("rk4", 4)])
def test_convergence_order_from_error_slope(solver, order):
    dts = np.array([0.04, 0.02, 0.01, 0.005])
    errors = np.array([_error(solver, dt) for dt in dts])
    slope = np.polyfit(np.log(dts), np.log(errors), 1)[0]
    assert slope == pytest.approx(order, abs=0.15)


@pytest.mark.slow
def test_leapfrog_is_second_order():
    model = dl.models.get("pendulum")(theta0=0.3)
    ref = dl.simulate(model, 3.0, solver="dopri8", rtol=1e-13, atol=1e-13, n_save=2).ys[-1]
    errs = [
        float(jnp.abs(dl.simulate(model, 3.0, dt=dt, solver="leapfrog", n_save=2).ys[-1] - ref).max())
        for dt in (0.02, 0.01, 0.005)
    ]
    slope = np.log(errs[0] / errs[-1]) / np.log(4.0)
    assert slope == pytest.approx(2.0, abs=0.15)


@pytest.mark.slow
def test_leapfrog_energy_stays_bounded_where_rk4_drifts():
    model = dl.models.get("pendulum")(theta0=1.0)
    kw = dict(t1=5_000.0, dt=0.05, n_save=1001)  # 10^5 steps
    drift = {}
    for solver in ("leapfrog", "rk4"):
        traj = dl.simulate(model, solver=solver, **kw)
        energy = np.asarray(jax.vmap(model.energy)(traj.ys))
        drift[solver] = energy - energy[0]
    leap, rk4 = drift["leapfrog"], drift["rk4"]
    # Leapfrog's energy error oscillates without growing: the second half is no worse.
    assert np.abs(leap[500:]).max() < 1.5 * np.abs(leap[:500]).max()
    # RK4 dissipates steadily: its error grows roughly linearly in time...
    assert abs(rk4[-1]) > 1.8 * abs(rk4[500])
    # ...and ends far beyond the leapfrog's bounded oscillation.
    assert abs(rk4[-1]) > 2 * np.abs(leap).max()


@pytest.mark.slow
def test_dopri8_agrees_with_scipy_dop853():
    model = dl.models.get("lorenz")()
    traj = dl.simulate(model, 2.0, solver="dopri8", rtol=1e-12, atol=1e-12, n_save=21)
    ref = solve_ivp(
        lambda t, y: np.asarray(model.vector_field(t, jnp.asarray(y))),
        (0.0, 2.0), np.asarray(model.initial_state()), method="DOP853",
        t_eval=np.asarray(traj.ts), rtol=1e-12, atol=1e-12,
    )
    np.testing.assert_allclose(traj.ys, ref.y.T, rtol=0, atol=1e-7)


@pytest.mark.slow
@pytest.mark.parametrize("solver", ["tsit5", "dopri5", "kvaerno5"])
def test_adaptive_solvers_meet_their_tolerance(solver):
    traj = dl.simulate(OSCILLATOR, 10.0, solver=solver, rtol=1e-9, atol=1e-9, n_save=11)
    np.testing.assert_allclose(traj["x"], np.cos(traj.ts), atol=1e-6)


def test_fixed_steps_end_exactly_at_t1():
    traj = dl.simulate(OSCILLATOR, 1.0, dt=0.3, solver="rk4")
    assert int(traj.steps) == 4  # 0.3 does not divide 1.0: four steps of 0.25
    assert float(traj.ts[-1]) == pytest.approx(1.0)
    np.testing.assert_allclose(traj.ts, [0.0, 0.25, 0.5, 0.75, 1.0])
