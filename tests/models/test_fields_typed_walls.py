"""Typed field models on grids with walls: the parser's linear constant-coefficient terms
are ``linear_operator`` (finite differences meeting the walls), so ``imex2`` takes them
implicitly at steps far past the explicit limit."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.linalg

import difflab as dl
from difflab.models import from_equations
from difflab.models._fields import operators as fd
from difflab.solvers._steppers.imex import IMEX2


def _typed(grid: str, rate: str, init: str, params: str = "D = 0.1"):
    return from_equations(f"params: {params}\ngrid: {grid}\ninit: u = {init}\n"
                          f"du/dt = {rate}\n")()


def _matrix(model, t=0.0):
    """``linear_operator`` as a matrix, column by column (walls held at zero)."""
    u0 = model.initial_fields()["u"]
    operator = jax.jacfwd(lambda u: model.linear_operator(t, {"u": u})["u"])
    return np.asarray(jax.jit(operator)(u0))


def _rate(D, h, k):
    """The second-order difference Laplacian's rate for ``sin(k x)`` between walls."""
    return 4 * D / h**2 * np.sin(k * h / 2) ** 2


@pytest.fixture(scope="module")
def rod():
    return _typed("x = dirichlet(0, 1, 32, 0)", "D*laplace(u)", "sin(pi*x)")


def test_linear_operator_is_the_walled_difference_laplacian(rod):
    u = rod.initial_fields()["u"] ** 2
    got = rod.linear_operator(0.3, {"u": u})["u"]
    np.testing.assert_array_equal(got, 0.1 * fd.laplace(u, rod.grid, t=0.3))
    assert not rod.linear_operator_is_multiplier()
    assert float(jnp.max(jnp.abs(rod.nonlinear_part(0.3, {"u": u})["u"]))) == 0.0


@pytest.mark.slow
def test_walled_diffusion_by_imex2_converges_at_second_order_past_the_explicit_limit(rod):
    u0, h = np.asarray(rod.initial_fields()["u"]), 1 / 32
    matrix = _matrix(rod)
    fastest = np.max(np.abs(np.linalg.eigvals(matrix)))
    reference = scipy.linalg.expm(1.0 * matrix) @ u0  # the grid's ODE, solved exactly
    closed = np.exp(-_rate(0.1, h, np.pi)) * u0
    assert np.max(np.abs(reference - closed)) < 1e-6  # sin(pi x) decays at the grid's rate
    errors = []
    for dt in (0.25, 0.125):
        traj = dl.simulate(rod, 1.0, solver="imex2", dt=dt, n_save=2)
        errors.append(np.max(np.abs(np.asarray(traj["u"][-1]) - reference)))
    assert 0.25 * fastest > 50 * 2.0  # 50 times explicit Euler's limit 2/|lambda|
    assert errors[0] < 1.5e-3
    assert 3.6 < errors[0] / errors[1] < 4.4  # order 2 in dt
    # the same discretisation written in Python: the built-in heat1d
    heat = dl.models.get("heat1d")().with_points(32)
    theirs = dl.simulate(heat, 1.0, solver="imex2", dt=0.25, n_save=2)
    ours = dl.simulate(rod, 1.0, solver="imex2", dt=0.25, n_save=2)
    np.testing.assert_allclose(ours["u"], theirs["u"], rtol=0, atol=1e-14)


def _imex2_factor(z):
    """What ``imex2`` multiplies an eigenvector of its implicit part by in one step of
    ``z = dt lambda``: its implicit half, the L-stable SDIRK2 of ``gamma = 1 - 1/sqrt 2``."""
    g = 1 - 1 / np.sqrt(2)
    return (1 + (1 - g) * z / (1 - g * z)) / (1 - g * z)


@pytest.mark.slow
def test_walled_reaction_diffusion_decays_as_the_product_of_its_two_decays():
    model = _typed("x = dirichlet(0, 1, 24, 0), y = dirichlet(0, 2, 48, 0)",
                   "D*laplace(u) - k*u", "sin(pi*x)*sin(pi*y/2)", "D = 0.1, k = 0.5")
    diffusion = _rate(0.1, 1 / 24, np.pi) + _rate(0.1, 1 / 24, np.pi / 2)
    fastest = 4 * 0.1 * (24**2 + 24**2)  # the checkerboard mode's rate, 4 D sum 1/h^2
    assert 0.25 * fastest > 50 * 2.0
    traj = dl.simulate(model, 1.0, solver="imex2", dt=0.25, n_save=2)
    u0, u = np.asarray(model.initial_fields()["u"]), np.asarray(traj["u"][-1])
    exact = np.exp(-diffusion) * np.exp(-0.5) * u0  # diffusion's decay times reaction's
    assert np.max(np.abs(u - exact)) < 4e-3
    stepped = _imex2_factor(-0.25 * (diffusion + 0.5)) ** 4 * u0  # the steps' own decay
    assert np.max(np.abs(u - stepped)) < 1e-6


def test_a_neumann_wall_keeps_the_weighted_sum_its_laplacian_conserves():
    model = _typed("x = neumann(0, 1, 12)", "D*laplace(u)", "1 + cos(2*pi*x) + x")
    matrix = _matrix(model)
    # the ghost cubic through the zero flux conserves this sum, not the plain one
    weights = np.ones(12)
    weights[[0, -1]], weights[[1, -2]] = 23 / 24, 25 / 24
    assert np.max(np.abs(weights @ matrix)) < 1e-12 * np.max(np.abs(matrix))
    assert np.max(np.abs(np.ones(12) @ matrix)) > 0.1
    traj = dl.simulate(model, 2.0, solver="imex2", dt=0.2, n_save=3)
    u = np.asarray(traj["u"])
    assert np.max(np.abs(u[-1] - u[0])) > 0.1  # it diffused
    np.testing.assert_allclose(u @ weights, u[0] @ weights, rtol=1e-12)
    assert abs(u[-1].sum() - u[0].sum()) > 1e-4


def test_time_and_space_dependent_coefficients_stay_explicit():
    mixed = _typed("x = dirichlet(0, 1, 16, 0)", "D*laplace(u) - t*u - x*u", "sin(pi*x)")
    u, x = mixed.initial_fields()["u"], mixed.grid.coordinates[0]
    np.testing.assert_array_equal(mixed.linear_operator(0.7, {"u": u})["u"],
                                  0.1 * fd.laplace(u, mixed.grid, t=0.7))
    np.testing.assert_allclose(mixed.nonlinear_part(0.7, {"u": u})["u"], -0.7 * u - x * u,
                               rtol=0, atol=1e-15)
    model = _typed("x = dirichlet(0, 1, 16, 0)", "D*laplace(u) - t*u", "sin(pi*x)")
    traj = dl.simulate(model, 1.0, solver="imex2", dt=0.05, n_save=2)
    expected = np.exp(-_rate(0.1, 1 / 16, np.pi) - 0.5) * np.asarray(u)  # int t dt = 1/2
    assert np.max(np.abs(np.asarray(traj["u"][-1]) - expected)) < 2e-3 * np.max(expected)


def test_a_periodic_typed_model_keeps_its_fourier_multiplier_for_imex():
    periodic = _typed("x = periodic(0, 1, 16)", "D*laplace(u) - u", "sin(2*pi*x)")
    walled = _typed("x = dirichlet(0, 1, 16, 0)", "D*laplace(u) - u", "sin(pi*x)")
    assert periodic.linear_operator_is_multiplier()
    assert IMEX2(periodic, 0.1).multipliers is not None
    assert IMEX2(walled, 0.1).multipliers is None
    u = periodic.initial_fields()["u"]
    rate = 0.1 * (2 * np.pi) ** 2 + 1
    np.testing.assert_allclose(periodic.linear_operator(0.0, {"u": u})["u"], -rate * u,
                               rtol=0, atol=1e-12)


def test_explicit_steps_past_the_walls_limit_are_refused_naming_imex2():
    model = _typed("x = dirichlet(0, 1, 12, 1), y = neumann(0, 2, 10, 0.3)",
                   "D*laplace(u) - k*u + u*u", "sin(pi*x)*sin(pi*y/2)", "D = 0.1, k = 0.5")
    def run(u0):
        return dl.simulate(model, 1.0, solver="rk4", dt=0.1, y0={"u": u0})["u"]

    jax.jit(run).trace(model.initial_fields()["u"])  # traced, the limit is not asked for
    ours = np.sort_complex(np.ravel(np.asarray(model.linear_eigenvalues()[0])))
    assembled = np.sort_complex(np.linalg.eigvals(_matrix(model).reshape(120, 120)))
    np.testing.assert_allclose(ours, assembled, rtol=0, atol=1e-10)  # walls at rest
    limit = 2.785293563405 / np.max(np.abs(assembled))  # rk4 reach, negative real axis
    with pytest.raises(ValueError, match=rf"dt = 0.1 is unstable for rk4 on this 12x10 grid: "
                                         rf"its fastest mode needs dt <= {limit:.4g}; use dt "
                                         rf"= .* or solver='imex2'"):
        dl.simulate(model, 1.0, solver="rk4", dt=0.1)
