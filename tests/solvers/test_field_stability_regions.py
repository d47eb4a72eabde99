"""The explicit field steppers' stability regions, measured from their tableaus, against
the closed forms of their boundaries, and the step they allow a damped oscillation."""

import numpy as np
import pytest

import difflab as dl
from difflab.solvers._steppers.field_steppers import FieldEuler, FieldHeun, FieldRK4, stable_dt

ANGLES = np.linspace(np.pi / 2, np.pi, 7)


def test_euler_reaches_the_rim_of_its_disk_in_every_direction():
    """``|1 + z| <= 1``: along ``r exp(i angle)`` out to ``-2 cos(angle)``."""
    np.testing.assert_allclose(FieldEuler.reach(ANGLES), -2 * np.cos(ANGLES), atol=1e-3)
    np.testing.assert_allclose(FieldEuler.reach(np.pi), 2.0, rtol=1e-12)


@pytest.mark.parametrize("method", [FieldEuler, FieldHeun, FieldRK4])
def test_the_reach_is_where_one_step_neither_damps_nor_amplifies(method):
    reach = method.reach(ANGLES[1:])  # off the imaginary axis, where each has a reach
    z = reach * np.exp(1j * ANGLES[1:])  # between measured rays: interpolated
    np.testing.assert_allclose(np.abs(method.amplification(z)), 1.0, atol=1e-5)
    assert (np.abs(method.amplification(0.99 * z)) < 1).all()


def test_the_classical_reaches_of_rk4_and_none_of_euler_and_heun_on_the_imaginary_axis():
    np.testing.assert_allclose(FieldRK4.reach(np.pi / 2), 2 * np.sqrt(2), rtol=1e-12)
    np.testing.assert_allclose(FieldRK4.reach(np.pi), 2.785293563405, rtol=1e-11)
    assert FieldEuler.reach(np.pi / 2) == 0 and FieldHeun.reach(np.pi / 2) == 0


def test_euler_keeps_a_damped_oscillation_below_its_step_and_refuses_it_above():
    """Euler was refused for advection with diffusion "at any step": its modes oscillate
    more than they decay, and were held to Euler's reach along the imaginary axis, none.
    The disk holds them for ``dt <= -2 Re(lambda) / |lambda|^2``."""
    model = dl.models.from_equations(
        "params: c = 0.3, D = 0.01\ngrid: x = periodic(0, 1, 32)\ninit: u = sin(2*pi*x)\n"
        "du/dt = -c*d_dx(u) + D*laplace(u)\n")()
    lam = np.asarray(model.linear_part()["u"])
    moving = lam != 0
    limit = np.min(-2 * lam[moving].real / np.abs(lam[moving]) ** 2)
    assert stable_dt(FieldEuler, [lam]) == pytest.approx(limit, rel=1e-3)
    traj = dl.simulate(model, 2.0, solver="euler", dt=0.99 * limit, n_save=2)
    assert float(np.max(np.abs(traj["u"][-1]))) < 1.0
    with pytest.raises(ValueError, match="is unstable for euler"):
        dl.simulate(model, 2.0, solver="euler", dt=1.05 * limit)
