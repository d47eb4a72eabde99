"""The implicit field steppers' linear solves: GMRES that stops when it is done, and its
preconditioner (walled second differences inverted by cosine and sine transforms)."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.fft

import difflab as dl
from difflab.models import AbstractFieldModel, Dirichlet, Grid, Neumann, Periodic, laplace
from difflab.models._fields import second_derivative
from difflab.solvers._steppers.gmres import gmres
from difflab.solvers._steppers.preconditioner import (
    Preconditioner,
    _cosine,
    _cosine_inverse,
    forward,
    inverse,
)


@pytest.mark.parametrize("n", [1, 2, 7, 8, 33])
def test_the_cosine_transform_is_scipys_dct_ii_and_inverts_exactly(n):
    x = np.random.default_rng(n).standard_normal((3, n, 4))
    y = _cosine(jnp.asarray(x), 1)
    np.testing.assert_allclose(y, scipy.fft.dct(x, type=2, axis=1), atol=1e-12 * n)
    np.testing.assert_allclose(_cosine_inverse(y, 1), x, atol=1e-13)


def _rod(points: int) -> Grid:
    return Grid(((0.0, 1.0),), (points,), Dirichlet(0.0))


def test_the_modes_diagonalize_the_second_differences_between_walls():
    """Away from the ghost points' corrections (the rows next to a wall), each mode of
    the transforms is an eigenvector of the second difference: checked on the interior
    of a Neumann-by-Dirichlet plate and a periodic-by-Dirichlet strip."""
    for boundaries in ((Neumann(0.0), Dirichlet(0.0)), (Periodic(), Dirichlet(0.0))):
        grid = Grid(((0.0, 1.0), (0.0, 2.0)), (16, 24), boundaries)
        coefficients = jnp.zeros(grid.shape).at[3, 5].set(1.0)
        if grid.periodic(0):  # a real mode: e^{ikx} with e^{-ikx}
            coefficients = coefficients.at[13, 5].set(1.0).astype(complex)
        mode = inverse(coefficients, grid)
        h = grid.spacing
        expected = sum(-4 / h[a] ** 2 * _sin2(grid, a, k) for a, k in ((0, 3), (1, 5)))
        lap = laplace(mode, grid)
        np.testing.assert_allclose(lap[2:-2, 2:-2], expected * mode[2:-2, 2:-2], atol=1e-9)
        np.testing.assert_allclose(inverse(forward(mode, grid), grid), mode, atol=1e-13)


def _sin2(grid, axis, k):
    n = grid.points[axis]
    if grid.periodic(axis):
        return np.sin(np.pi * k / n) ** 2
    if isinstance(grid.boundaries[axis][0], Dirichlet):
        return np.cos(np.pi * k / (2 * n)) ** 2
    return np.sin(np.pi * k / (2 * n)) ** 2


def test_the_fit_recovers_an_anisotropic_operators_coefficients():
    grid = Grid(((0.0, 1.0), (0.0, 1.0)), (32, 48), Neumann(0.0))

    def operator(t, fields):
        u = fields["u"]
        return {"u": 0.3 * second_derivative(u, grid, 0) + 0.05 * second_derivative(u, grid, 1)
                - 2.0 * u}

    fitted = Preconditioner.fit(operator, grid, {"u": jnp.zeros(grid.shape)})
    np.testing.assert_allclose(fitted.coefficients["u"], [-2.0, 0.3, 0.05], rtol=1e-2)


def test_an_axis_too_short_to_probe_twice_keeps_the_fit_finite():
    """Three periodic points have one mode to probe (the middle one is the smoothest):
    that axis's coefficient is left at zero, the others are fitted (16 cells: the ghost
    points next to the walls move the fit by 1%)."""
    grid = Grid(((0.0, 1.0), (0.0, 1.0)), (3, 16), (Periodic(), Neumann(0.0)))
    fitted = Preconditioner.fit(lambda t, f: {"u": 0.1 * laplace(f["u"], grid) - f["u"]},
                                grid, {"u": jnp.zeros(grid.shape)})
    np.testing.assert_allclose(fitted.coefficients["u"], [-1.0, 0.0, 0.1], rtol=2e-2,
                               atol=1e-12)


def test_gmres_meets_its_tolerance_where_the_operator_is_large():
    """``I - c L`` with ``c L``'s largest eigenvalue about 50: the residual is within the
    tolerance asked for (``jax.scipy``'s early-stopping GMRES leaves 2.7e-10 here), and
    the solution is numpy's dense one."""
    grid = _rod(256)

    def matvec(x):
        return {"u": x["u"] - 1.5e-4 * laplace(x["u"], grid, t=0.0)}

    b = {"u": jnp.asarray(np.random.default_rng(0).standard_normal(256))}
    b = {"u": b["u"] / jnp.linalg.norm(b["u"])}
    x = jax.jit(lambda b: gmres(matvec, b, tol=1e-11, restart=30, cycles=20))(b)
    assert float(jnp.linalg.norm(matvec(x)["u"] - b["u"])) <= 1e-11
    dense = jax.jacfwd(lambda u: matvec({"u": u})["u"])(jnp.zeros(256))
    np.testing.assert_allclose(x["u"], np.linalg.solve(dense, b["u"]), atol=1e-10)


def test_imex2_takes_steps_whose_solves_plain_gmres_cannot_finish():
    """A rough start on a 512-point rod (``D = 1``, ``dt = 0.1``: the stages' ``c L``
    reach 1e5). Unpreconditioned, GMRES ran out of iterations and the run came back NaN
    ("diverged"); now every stage is solved and the run is the exact product of imex2's
    stage matrices (its linear part is all there is), formed densely by numpy."""
    rod = dl.models.from_equations("""
    name: RoughRod
    params: D = 1
    grid: x = dirichlet(0, 1, 512, 0)
    init: u = sin(pi*x)
    du/dt = D*laplace(u)
    """)()
    start = np.random.default_rng(0).standard_normal(512)
    run = dl.simulate(rod, 0.4, y0={"u": jnp.asarray(start)}, solver="imex2", dt=0.1,
                      n_save=2)
    lin = np.asarray(jax.jacfwd(lambda u: rod.linear_operator(0.0, {"u": u})["u"])(
        jnp.zeros(512)))
    g, z, eye = 1 - 1 / np.sqrt(2), 0.1 * lin, np.eye(512)
    stage = np.linalg.inv(eye - g * z)
    step = (eye + (1 - 2 * g) * z) @ stage @ stage
    exact = np.linalg.matrix_power(step, 4) @ start
    np.testing.assert_allclose(run["u"][-1], exact, atol=1e-8)
    assert np.max(np.abs(exact)) > 1e-4  # not all decayed to nothing


class _BareRod(AbstractFieldModel):
    """``u_t = laplace(u)`` between walls at zero, written as ``vector_field`` alone: no
    linear operator, so the implicit steppers' GMRES has no preconditioner."""

    grid: Grid = eqx.field(default_factory=lambda: _rod(512))
    field_names = ("u",)

    def linear_part(self):
        return None

    def vector_field(self, t, fields):
        return {"u": laplace(fields["u"], self.grid, t=t)}

    def nonlinear_part(self, t, fields):
        return self.vector_field(t, fields)

    def initial_fields(self):
        return {"u": jnp.asarray(np.random.default_rng(0).standard_normal(512))}


def test_a_stage_that_does_not_converge_is_named_as_a_possible_cause():
    """Unpreconditioned, the rough rod's stages run GMRES out of cycles and give NaN
    fields. The run used to say only that it diverged; an implicit run, simulated or
    streamed, now says a stage's solve may not have converged."""
    with pytest.raises(dl.SimulationError, match="Newton-Krylov solve did not converge"):
        dl.simulate(_BareRod(), 0.2, solver="sdirk2", dt=0.1, n_save=2)
    with pytest.raises(dl.SimulationError, match="Newton-Krylov solve did not converge"):
        list(dl.stream(_BareRod(), 0.2, solver="sdirk2", dt=0.1, n_save=2))
    with pytest.raises(dl.SimulationError, match="the run diverged; a smaller dt or finer"):
        dl.simulate(_BlowUp(), 2.0, solver="rk4", dt=0.01, n_save=2)  # an explicit run


class _BlowUp(_BareRod):
    """``u_t = u^2`` from 1 at every point: infinite at t = 1 whatever the step."""

    def vector_field(self, t, fields):
        return {"u": fields["u"] ** 2}

    def initial_fields(self):
        return {"u": jnp.ones(512)}
