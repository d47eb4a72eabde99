"""The Oregonator of the Test Set for IVP Solvers at tight tolerances: ``kvaerno5`` takes
about as many steps as SciPy's Radau (RADAU5) and lands on the Test Set's reference state.

Before: each stage's Newton iteration was stopped after two iterations and any stage not
yet converged rejected the step (diffrax 0.7.2's ``VeryChord``), so near t = 24 the step
size collapsed: over 200,000 steps, 40 % rejected, never reaching t = 30."""

import jax.numpy as jnp
import numpy as np
import optimistix as optx
import pytest
from scipy.integrate import solve_ivp

import difflab as dl

# white-box: the stage root finder itself, on scalar equations with closed-form roots
from difflab.solvers._steppers.chord import StageChord

T1 = 360.0
#: the Test Set's reference state at t = 360 (Mazzia & Magherini, OREGO)
REFERENCE = np.array([0.1000814870318523e1, 0.1228178521549917e4, 0.1320554942846706e3])


def orego(y, xp):
    return xp.stack([
        77.27 * (y[1] + y[0] * (1.0 - 8.375e-6 * y[0] - y[1])),
        (y[2] - (1.0 + y[0]) * y[1]) / 77.27,
        0.161 * (y[0] - y[2]),
    ])


class Oregonator(dl.Model):
    state_names = ("y1", "y2", "y3")

    def vector_field(self, t, y):
        return orego(y, jnp)

    def initial_state(self):
        return jnp.array([1.0, 2.0, 3.0])


@pytest.mark.slow
def test_kvaerno5_on_the_oregonator_at_rtol_1e9_takes_radaus_order_of_steps():
    rtol, atol = 1e-9, 1e-13
    traj = dl.simulate(Oregonator(), T1, solver="kvaerno5", rtol=rtol, atol=atol, n_save=2,
                       max_steps=50_000)
    radau = solve_ivp(lambda t, y: orego(y, np), (0.0, T1), [1.0, 2.0, 3.0], method="Radau",
                      rtol=rtol, atol=atol)
    radau_steps = len(radau.t) - 1  # 5,827 (scipy 1.17)
    steps, rejected = int(traj.steps), int(traj.rejected_steps)
    assert traj.ok
    assert radau_steps / 3 < steps < 2 * radau_steps  # 3,534 steps
    assert rejected < 0.1 * steps  # 218
    # The global error of a relaxation oscillator after 20 periods: about 10 rtol.
    np.testing.assert_allclose(traj.final, radau.y[:, -1], rtol=50 * rtol)
    np.testing.assert_allclose(traj.final, REFERENCE, rtol=50 * rtol)


def _chord(finder, target):
    """A chord iteration on ``arctan(y) = target`` from 0 (Jacobian 1, frozen there)."""
    return optx.root_find(lambda y, args: jnp.arctan(y) - target, finder, jnp.array(0.0),
                          max_steps=20, throw=False)


def test_the_stage_iteration_goes_on_while_it_contracts_and_gives_up_when_it_cannot():
    # rate 1 - 1/(1 + y*^2) = 0.23 at the root tan(0.5): contracting, 12 iterations needed
    sol = _chord(StageChord(rtol=1e-6, atol=1e-6, max_steps=20), 0.5)
    assert sol.result == optx.RESULTS.successful
    assert abs(float(sol.value) - np.tan(0.5)) < 1e-7
    assert 3 <= int(sol.stats["num_steps"]) <= 20
    # rate 0.97 at tan(1.4): 20 iterations cannot converge, so it stops at once
    slow = _chord(StageChord(rtol=1e-6, atol=1e-6, max_steps=20), 1.4)
    assert slow.result == optx.RESULTS.nonlinear_divergence
    assert int(slow.stats["num_steps"]) <= 3
