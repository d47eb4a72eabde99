"""Barkley's excitable medium: fronts at Nagumo's speed, and spirals that keep their period."""

import numpy as np
import pytest

import difflab as dl
from difflab.models import Grid
from difflab.models._fields import Barkley


def _front_speed(model, traj) -> float:
    """The speed of the foremost ``u = 1/2`` crossing between the last two frames."""
    x = model.grid.axis_coordinates(0)
    where = []
    for u in np.asarray(traj["u"])[-2:]:
        i = np.nonzero((u[:-1] >= 0.5) & (u[1:] < 0.5))[0].max()
        where.append(x[i] + (u[i] - 0.5) / (u[i] - u[i + 1]) * (x[1] - x[0]))
    return (where[1] - where[0]) / float(traj.ts[-1] - traj.ts[-2])


def test_a_front_travels_at_nagumos_speed_up_to_a_first_order_term_in_eps():
    """``sqrt(Du / 2 eps) (1 - 2 b / a)`` is the limit as ``eps -> 0``: the recovery
    variable grows inside the front by ``O(eps)``, so a quarter of ``eps`` leaves a
    quarter of the deficit."""
    deficits = []
    for eps, points in ((0.02, 128), (0.005, 256)):
        model = Barkley(eps=eps, grid=Grid(((0.0, 10.0),), (points,)))
        traj = dl.simulate(model, 4.0 / model.front_speed(), dt=0.2 * eps, n_save=3)
        deficits.append(1.0 - _front_speed(model, traj) / model.front_speed())
    assert 0.0 < deficits[1] < 0.02
    assert 3.5 < deficits[0] / deficits[1] < 4.5


def _crossings(ts, u):
    """Times where ``u`` rises through 1/2, interpolated."""
    u = u - 0.5
    k = np.nonzero((u[:-1] < 0) & (u[1:] >= 0))[0]
    return ts[k] - u[k] * (ts[k + 1] - ts[k]) / (u[k + 1] - u[k])


@pytest.mark.slow
def test_a_broken_wave_curls_into_spirals_that_rotate_at_one_steady_period():
    """The built-in initial fields on a 96x96 grid; at three points far from the cores the
    waves pass at one period, steady to a percent once the spirals have formed."""
    model = Barkley(b=0.1, grid=Grid(((0.0, 30.0), (0.0, 30.0)), (96, 96)))
    traj = dl.simulate(model, 50.0, dt=0.025, n_save=201)
    ts = np.asarray(traj.ts)
    periods = [np.diff(_crossings(ts, np.asarray(traj["u"][:, i, j])))[-4:]
               for i, j in ((24, 24), (72, 24), (12, 60))]
    mean = np.mean(periods)
    assert 4.0 < mean < 7.0
    np.testing.assert_allclose(periods, mean, rtol=0.015)
    assert 0.9 < float(np.max(traj["u"][-1])) and float(np.min(traj["u"][-1])) < 0.01
