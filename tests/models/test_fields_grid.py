"""Grids and boundaries: where the points lie, and the ghost polynomials at the walls."""

import numpy as np
import pytest

from difflab.models import Dirichlet, Grid, Neumann, Periodic, Robin
from difflab.models._fields.boundaries import ghost_weights


def test_periodic_points_leave_out_the_far_end():
    grid = Grid(((0.0, 2.0),), (4,))
    np.testing.assert_allclose(grid.axis_coordinates(0), [0.0, 0.5, 1.0, 1.5])
    assert grid.spacing == (0.5,) and grid.periodic(0)


def test_walled_points_are_cell_centres():
    grid = Grid(((1.0, 2.0),), (4,), (Dirichlet(0.0), Neumann(1.0)))
    np.testing.assert_allclose(grid.axis_coordinates(0), [1.125, 1.375, 1.625, 1.875])
    assert not grid.periodic(0)


def test_coordinates_have_the_grid_s_shape_and_index_as_ij():
    grid = Grid(((0, 1), (0, 2), (0, 3)), (2, 3, 4), (Periodic(), Dirichlet(), Neumann()))
    x, y, z = grid.coordinates
    assert x.shape == y.shape == z.shape == grid.shape == (2, 3, 4)
    assert float(x[1, 0, 0]) == 0.5 and float(y[0, 1, 0]) == 1.0
    assert grid.axis_names == ("x", "y", "z")


def test_integrate_sums_cells():
    grid = Grid(((0.0, 2.0), (0.0, 3.0)), (8, 6), Dirichlet())
    assert np.isclose(float(grid.integrate(np.ones(grid.shape))), 6.0)


@pytest.mark.parametrize("extent, points, boundaries, message", [
    (((0, 1),), (0,), Periodic(), "at least one point"),
    (((0, 1),) * 4, (2,) * 4, Periodic(), "1 to 3 axes"),
    (((1, 0),), (4,), Periodic(), "high > low"),
    (((0, 1),), (4, 4), Periodic(), "extent has 1 axes"),
    (((0, 1),) * 2, (4, 4), (Periodic(),) * 3, "boundaries has 3 axes"),
    (((0, 1),), (4,), (Periodic(), Dirichlet()), "both sides or on neither"),
])
def test_bad_grids_are_refused_in_words(extent, points, boundaries, message):
    with pytest.raises(ValueError, match=message):
        Grid(extent, points, boundaries)


def test_a_boundary_must_be_a_boundary():
    with pytest.raises(TypeError, match="Periodic, Dirichlet, Neumann or Robin"):
        Grid(((0, 1),), (4,), "periodic")


def test_boundary_values_may_depend_on_time():
    assert Dirichlet(lambda t: 2 * t).value_at(3.0) == 6.0
    assert Neumann(1.5).value_at(3.0) == 1.5


@pytest.mark.parametrize("kind, degree", [(Dirichlet, 3), (Neumann, 3), (Dirichlet, 5),
                                          (Neumann, 5), (Robin, 3), (Robin, 5)])
def test_ghost_weights_reproduce_polynomials_of_their_degree(kind, degree):
    """A polynomial of the ghost's degree is extrapolated exactly from the wall's condition
    (here ``h = 0.5``: the derivative per cell is half the derivative per unit length)."""
    coefficients = np.random.default_rng(degree).normal(size=degree + 1)
    p = np.polynomial.Polynomial(coefficients)
    side = Robin(alpha=2.0, beta=3.0) if kind is Robin else kind()
    outward = -p.deriv()(0.0) / 0.5
    wall = {Dirichlet: p(0.0), Neumann: outward, Robin: 2 * p(0.0) + 3 * outward}[kind]
    inside = p(np.arange(degree) + 0.5)
    weights = ghost_weights(side.wall_row(degree, 0.5), degree, 2)
    ghosts = weights @ np.concatenate([[wall], inside])
    # degree 5: the solve loses about three digits to the system's conditioning
    np.testing.assert_allclose(ghosts, p(np.array([-0.5, -1.5])), rtol=1e-12, atol=1e-11)
