"""Derivatives through matrix-free implicit and IMEX field runs (issue 29), and stages
whose Krylov space closes early.

A loss on one grid value gives a cotangent that is a unit vector: its GMRES transpose
solve must converge (its Krylov space may close, an exact solve) at any step, and a step
after the loss's frame gets a cotangent that is exactly zero. References: central finite
differences of the run, and dense solves of the operator's matrix.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difflab as dl

HEAT = dl.models.get("heat1d")
CELLS = 16


def _point(d, solver, t1=0.05, dt=1e-3, frame=-1, n_save=None):
    """``u`` at one cell of a heat1d run of diffusivity ``d`` on 16 cells."""
    traj = dl.simulate(HEAT(D=d).with_points((CELLS,)), t1, dt=dt, solver=solver,
                       n_save=n_save)
    return traj["u"][frame, CELLS // 4]


def _central(f, x, h=1e-4):
    return (f(x + h) - f(x - h)) / (2 * h)


@pytest.mark.parametrize("solver", ["imex2", "sdirk2"])
def test_a_one_point_loss_differentiates_at_a_small_step_as_finite_differences(solver):
    def loss(d):
        return _point(d, solver)

    assert float(jax.grad(loss)(0.5)) == pytest.approx(float(_central(loss, 0.5)), rel=1e-6)


@pytest.mark.exhaustive  # compiles for half a minute: run with -m exhaustive
def test_a_loss_on_an_earlier_frame_differentiates_in_both_modes():
    def loss(d):  # the steps after frame 1 see a cotangent that is exactly zero
        return _point(d, "imex2", t1=0.04, dt=2e-3, frame=1, n_save=3)

    fd = float(_central(loss, 0.5))
    assert float(jax.grad(loss)(0.5)) == pytest.approx(fd, rel=1e-6)
    _, tangent = jax.jvp(loss, (0.5,), (1.0,))  # forward mode: the tangent solve itself
    assert float(tangent) == pytest.approx(fd, rel=1e-6)


@pytest.mark.slow
def test_the_default_heat1d_differentiates_at_a_thousandth_step():
    def loss(d):  # 50 cells, to t = 0.2: the run of the report
        return dl.simulate(HEAT(D=d), 0.2, dt=1e-3)["u"][-1, 10]

    assert float(jax.grad(loss)(0.5)) == pytest.approx(float(_central(loss, 0.5)), rel=1e-6)


def _matrix(model) -> np.ndarray:
    """The operator's matrix, column by column."""
    unit = np.eye(CELLS)
    return np.stack([np.asarray(model.vector_field(0.0, {"u": jnp.asarray(e)})["u"])
                     for e in unit], axis=1)


@pytest.mark.parametrize("solver", ["implicit_euler", "imex_euler"])
def test_a_field_zero_but_in_one_cell_steps_as_the_dense_solve(solver):
    # the Krylov space of one cell fills the 16 cells before GMRES restarts: it closes
    model, dt, steps = HEAT(D=0.5).with_points((CELLS,)), 1e-3, 5
    bump = np.zeros(CELLS)
    bump[3] = 1.0
    traj = dl.simulate(model, steps * dt, dt=dt, solver=solver, y0={"u": jnp.asarray(bump)},
                       n_save=2)
    step = np.linalg.inv(np.eye(CELLS) - dt * _matrix(model))
    np.testing.assert_allclose(traj["u"][-1], np.linalg.matrix_power(step, steps) @ bump,
                               rtol=1e-9, atol=1e-12)


def test_a_zero_field_stays_zero_and_its_gradient_is_zero():
    zero = {"u": jnp.zeros(CELLS)}

    def loss(d):  # every stage solves a zero right-hand side
        traj = dl.simulate(HEAT(D=d).with_points((CELLS,)), 0.01, dt=1e-3, solver="sdirk2",
                           y0=zero, n_save=2)
        return traj["u"][-1, 3], traj.ok

    (value, ok), grad = jax.value_and_grad(loss, has_aux=True)(0.5)
    assert bool(ok) and float(value) == 0.0 and float(grad) == 0.0


def test_a_gradient_through_an_implicit_run_lowers_for_gpus_without_host_calls():
    def loss(d):
        return _point(d, "imex2", t1=0.01)

    text = jax.jit(jax.grad(loss)).trace(0.5).lower(lowering_platforms=("cuda",)).as_text()
    assert "callback" not in text
