"""A failed run counts the steps it took before the failure, not the steps it planned."""

import jax.numpy as jnp
import pytest

import difflab as dl

# x' = x**2 from x(0) = 1/19.5 blows up at t = 19.5 exactly
BLOW_UP = dl.models.from_equations("init: x = 1/19.5\ndx/dt = x**2\n", name="BlowUp")


@pytest.mark.parametrize("events", [None, dl.Event("x")])  # the plain and the watched loop
def test_a_diverged_fixed_step_run_counts_the_steps_to_its_failure(events):
    """dt = 0.01 to t1 = 1500 diverging at t = 19.5 said '150000 steps accepted'."""
    run = dl.simulate(BLOW_UP(), 1500.0, dt=0.01, solver="rk4", n_save=15001, events=events,
                      throw=False)
    steps = int(run.accepted_steps)
    assert run.result == dl.Result.DIVERGED and int(run.rejected_steps) == 0
    assert 1950 <= steps <= 1960  # the blow-up's 1950 steps, to the first NaN saved
    assert int(run.steps) == steps and float(run.stats["t_reached"]) == pytest.approx(
        steps * 0.01)
    assert f"step size 0.01, {steps} steps accepted, 0 rejected" in run.message
    assert jnp.isfinite(run.ys[steps // 10 - 1]).all()  # the state before it was finite
