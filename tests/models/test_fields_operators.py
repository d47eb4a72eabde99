"""Finite-difference and spectral operators against closed forms, and their order of
convergence under refinement."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from difflab.models import (
    Dirichlet,
    Grid,
    Neumann,
    Periodic,
    Robin,
    advection,
    derivative,
    divergence,
    gradient,
    laplace,
    spectral_derivative,
    wavenumbers,
)
from difflab.models._fields import dealias_mask, second_derivative, spectral_laplace

E = float(np.exp(1.0))
SIZES = (16, 32, 64)


def _line(n, kind):
    """``[0, 3]`` with ``u = exp(x/3)`` met exactly at its walls by ``kind``."""
    if kind is Periodic:
        return Grid(((0.0, 2 * np.pi),), (n,))
    if kind is Dirichlet:
        return Grid(((0.0, 3.0),), (n,), (Dirichlet(1.0), Dirichlet(E)))
    if kind is Robin:  # 2 u + 3 du/dn: 2 - 1 at x = 0, 2 e + e at x = 3
        return Grid(((0.0, 3.0),), (n,), (Robin(2.0, 3.0, 1.0), Robin(2.0, 3.0, 3 * E)))
    return Grid(((0.0, 3.0),), (n,), (Neumann(-1 / 3), Neumann(E / 3)))


def _profile(grid):
    (x,) = grid.coordinates
    if grid.periodic(0):
        return jnp.sin(x), jnp.cos(x), -jnp.sin(x)
    u = jnp.exp(x / 3)
    return u, u / 3, u / 9


def _orders(errors):
    errors = np.asarray(errors)
    return np.log2(errors[:-1] / errors[1:])


@pytest.mark.parametrize("kind", [Periodic, Dirichlet, Neumann, Robin])
@pytest.mark.parametrize("order", [2, 4])
def test_derivatives_converge_at_their_order_with_every_boundary(kind, order):
    first, second = [], []
    for n in SIZES:
        grid = _line(n, kind)
        u, du, d2u = _profile(grid)
        first.append(float(jnp.max(jnp.abs(derivative(u, grid, 0, order) - du))))
        second.append(float(jnp.max(jnp.abs(laplace(u, grid, order) - d2u))))
    assert _orders(first)[-1] == pytest.approx(order, abs=0.15)
    assert _orders(second)[-1] == pytest.approx(order, abs=0.15)
    assert second[-1] < (1e-3 if order == 2 else 1e-5)


def test_time_dependent_dirichlet_values_are_read_at_t():
    """``u = exp(x/3) + t`` on ``[0, 3]``: walls ``1 + t`` and ``e + t``."""
    grid = Grid(((0.0, 3.0),), (64,), (Dirichlet(lambda t: 1 + t), Dirichlet(lambda t: E + t)))
    (x,) = grid.coordinates
    u = jnp.exp(x / 3) + 2.0
    good = laplace(u, grid, 4, t=2.0)
    np.testing.assert_allclose(good, jnp.exp(x / 3) / 9, atol=1e-7)
    stale = laplace(u, grid, 4, t=0.0)
    assert float(jnp.max(jnp.abs(stale - good))) > 1.0


def test_laplace_in_2d_with_walls_that_vary_along_them():
    """``u = sin(x) exp(y/2)``: periodic in x, Dirichlet at ``y = 0, 1`` with the wall's
    values as arrays along x; ``laplace u = -3/4 u``."""
    errors = []
    for n in SIZES:
        grid = Grid(((0.0, 2 * np.pi), (0.0, 1.0)), (n, n), Periodic())
        x = grid.axis_coordinates(0)[:, None]
        walls = (Dirichlet(jnp.sin(x[:, 0])), Dirichlet(jnp.sin(x[:, 0]) * np.exp(0.5)))
        grid = Grid(grid.extent, grid.points, (Periodic(), walls))
        gx, gy = grid.coordinates
        u = jnp.sin(gx) * jnp.exp(gy / 2)
        errors.append(float(jnp.max(jnp.abs(laplace(u, grid, 4) + 0.75 * u))))
    assert _orders(errors)[-1] == pytest.approx(4, abs=0.2)


@pytest.mark.parametrize("order", [2, 4])
def test_laplace_is_the_sum_of_second_derivatives_on_a_3d_grid_with_mixed_walls(order):
    """``laplace`` assembles its walls' slabs into one array apart from the interior: it
    must equal the sum of ``second_derivative`` along each axis, and so must its gradient."""
    import jax

    grid = Grid(((0, 1), (0, 2), (0, 1)), (9, 12, 11),
                [(Neumann(0.5), Dirichlet(1.0)), Periodic(),
                 (Robin(1.0, 0.5, 0.2), Dirichlet(lambda t: 2 * t))])
    u = jnp.asarray(np.random.default_rng(3).random(grid.points))

    def by_axes(u):
        return sum(second_derivative(u, grid, i, order, t=0.3) for i in range(3))

    def values_and_gradient(f):
        return jax.jit(jax.value_and_grad(lambda u: jnp.sum(jnp.sin(f(u)))))(u)

    (a, grad_a), (b, grad_b) = (values_and_gradient(f) for f in
                                (lambda u: laplace(u, grid, order, t=0.3), by_axes))
    np.testing.assert_allclose(jax.jit(lambda u: laplace(u, grid, order, t=0.3))(u),
                               jax.jit(by_axes)(u), rtol=1e-13, atol=1e-9)
    np.testing.assert_allclose(a, b, rtol=1e-11)  # a sum of a thousand sines
    np.testing.assert_allclose(grad_a, grad_b, rtol=1e-12, atol=1e-9)


def test_gradient_divergence_and_advection_in_2d():
    """On a periodic square: ``u = sin(x) cos(2y)``; ``div grad u = laplace u``; a uniform
    velocity advects as ``a u_x + b u_y``."""
    grid = Grid(((0.0, 2 * np.pi),) * 2, (48, 48))
    x, y = grid.coordinates
    u = jnp.sin(x) * jnp.cos(2 * y)
    grad = gradient(u, grid, 4)
    exact = jnp.stack([jnp.cos(x) * jnp.cos(2 * y), -2 * jnp.sin(x) * jnp.sin(2 * y)])
    np.testing.assert_allclose(grad, exact, atol=5e-4)  # h^4 k^5 / 30 for k = 2
    np.testing.assert_allclose(divergence(grad, grid, 4), -5 * u, atol=3e-3)
    np.testing.assert_allclose(advection(u, (2.0, -1.0), grid, 4),
                               2 * exact[0] - exact[1], atol=1e-3)
    field_velocity = jnp.stack([jnp.ones_like(u), jnp.zeros_like(u)])
    np.testing.assert_allclose(advection(u, field_velocity, grid, 4), exact[0], atol=1e-5)


def test_operators_refuse_what_they_cannot_do():
    grid = Grid(((0.0, 1.0),), (3,), Dirichlet())
    with pytest.raises(ValueError, match="at least 5 points"):
        laplace(jnp.zeros(3), grid, 4)
    with pytest.raises(ValueError, match="order 2 or 4"):
        second_derivative(jnp.zeros(3), grid, 0, 6)
    with pytest.raises(ValueError, match="shape"):
        divergence(jnp.zeros((2, 3)), grid)


@pytest.mark.parametrize("order", [2, 4])
def test_the_rolled_periodic_laplace_an_accelerator_takes_is_the_assembled_one(order):
    """On a GPU a fully periodic grid sums shifted copies (one fused pass); on a CPU the
    interior and the slabs are assembled. Both are the same stencil, to rounding."""
    from difflab.models._fields.operators import SECOND, _stencil_sum

    grid = Grid(((0.0, 2 * np.pi), (0.0, 1.0), (0.0, 3.0)), (12, 10, 9))
    x, y, z = grid.coordinates
    u = jnp.exp(jnp.sin(x) + jnp.cos(2 * np.pi * y)) * jnp.cos(2 * np.pi * z / 3)
    stencils = [tuple(c / h**2 for c in SECOND[order]) for h in grid.spacing]
    assembled = _stencil_sum(u, grid, stencils, order, 0.0, rolled=False)
    rolled = _stencil_sum(u, grid, stencils, order, 0.0, rolled=True)
    np.testing.assert_allclose(rolled, assembled, rtol=1e-12, atol=1e-12)
    walled = Grid(grid.extent, grid.points, (Periodic(), Dirichlet(0.0), Periodic()))
    np.testing.assert_array_equal(_stencil_sum(u, walled, stencils, order, 0.0, rolled=True),
                                  _stencil_sum(u, walled, stencils, order, 0.0, rolled=False))


@pytest.mark.parametrize("order", [1, 2, 3])
def test_spectral_derivatives_are_exact_to_rounding_on_smooth_periodic_fields(order):
    grid = Grid(((0.0, 2 * np.pi),), (64,))
    (x,) = grid.coordinates
    u = jnp.exp(jnp.sin(x))
    exact = {1: jnp.cos(x) * u, 2: (jnp.cos(x) ** 2 - jnp.sin(x)) * u,
             3: (jnp.cos(x) ** 3 - 3 * jnp.sin(x) * jnp.cos(x) - jnp.cos(x)) * u}[order]
    np.testing.assert_allclose(spectral_derivative(u, grid, 0, order), exact, atol=1e-11)


def test_spectral_laplace_in_2d_and_along_one_periodic_axis():
    grid = Grid(((0.0, 2 * np.pi), (0.0, 1.0)), (32, 32))
    x, y = grid.coordinates
    u = jnp.exp(jnp.sin(x) + jnp.cos(2 * np.pi * y))
    lap = spectral_laplace(u, grid)
    s, c = jnp.sin(2 * np.pi * y), jnp.cos(2 * np.pi * y)
    exact = (jnp.cos(x) ** 2 - jnp.sin(x)) * u + 4 * np.pi**2 * (s**2 - c) * u
    np.testing.assert_allclose(lap, exact, atol=1e-9 * float(jnp.max(jnp.abs(exact))))
    walled = Grid(grid.extent, grid.points, (Periodic(), Dirichlet()))
    np.testing.assert_allclose(spectral_derivative(u, walled, 0), jnp.cos(x) * u, atol=1e-12)


def test_spectral_operators_refuse_a_walled_axis_saying_why():
    grid = Grid(((0.0, 1.0), (0.0, 1.0)), (8, 8), (Periodic(), Neumann()))
    with pytest.raises(ValueError, match="axis y has Neumann boundaries"):
        spectral_derivative(jnp.zeros((8, 8)), grid, 1)
    with pytest.raises(ValueError, match="need a periodic axis"):
        wavenumbers(grid)


def test_wavenumbers_and_the_two_thirds_mask():
    grid = Grid(((0.0, 2 * np.pi), (0.0, 4 * np.pi)), (6, 8))
    kx, ky = wavenumbers(grid)
    np.testing.assert_allclose(kx.ravel(), [0, 1, 2, -3, -2, -1])
    np.testing.assert_allclose(ky.ravel(), [0, 0.5, 1.0, 1.5, 2.0])
    mask = dealias_mask(grid)
    assert mask.shape == (6, 5)
    np.testing.assert_array_equal(mask[:, 0], [1, 1, 0, 0, 0, 1])  # |kx| < 2/3 * 3
    np.testing.assert_array_equal(mask[0], [1, 1, 1, 0, 0])  # |ky| < 2/3 * 2


def test_operators_run_under_jit_with_walls_that_depend_on_a_traced_time():
    grid = Grid(((0.0, 3.0),), (32,), (Dirichlet(lambda t: 1 + t), Neumann(lambda t: E / 3)))
    (x,) = grid.coordinates
    lap = eqx.filter_jit(lambda u, g, t: laplace(u, g, 4, t=t))
    got = lap(jnp.exp(x / 3) + 0.5, grid, jnp.asarray(0.5))
    np.testing.assert_allclose(got, jnp.exp(x / 3) / 9, atol=1e-6)


def test_a_robin_wall_s_coefficients_may_be_traced():
    """``alpha`` and ``beta`` as arrays (parameters to differentiate) give the same result."""
    def lap(alpha):
        walls = (Robin(alpha, 3.0, alpha - 1), Robin(alpha, 3.0, (alpha + 1) * E))
        grid = Grid(((0.0, 3.0),), (32,), walls)
        (x,) = grid.coordinates
        return laplace(jnp.exp(x / 3), grid, 4)

    traced = eqx.filter_jit(lap)(jnp.asarray(2.0))
    # the same to rounding, amplified by the 1 / h^2 (about 100) of the walls' ghost values
    # (a GPU's fused multiply-adds differ between the two programs: 4e-11 seen on one)
    np.testing.assert_allclose(traced, lap(2.0), rtol=1e-10)
    (x,) = Grid(((0.0, 3.0),), (32,), Dirichlet()).coordinates
    np.testing.assert_allclose(traced, jnp.exp(x / 3) / 9, atol=1e-6)


def test_a_walled_operator_is_traced_once_however_often_a_model_uses_it(monkeypatch):
    """An implicit solver traces a model's right-hand side many times over (the step, its
    linearization, the Jacobian-vector products): the walled stencil is traced once."""
    from difflab.models._fields import operators

    traced = []
    original = operators._stencil_sum
    monkeypatch.setattr(operators, "_stencil_sum",
                        lambda *args, **kw: traced.append(1) or original(*args, **kw))
    grid = Grid(((0.0, 1.0), (0.0, 2.0)), (13, 11), Neumann())  # a shape no other test has

    def rhs(u):
        return laplace(u, grid) - u * laplace(u, grid)

    u = jnp.cos(grid.coordinates[0]) * grid.coordinates[1]
    _, tangent = jax.jvp(rhs, (u,), (jnp.ones_like(u),))
    jax.make_jaxpr(lambda u: jax.linearize(rhs, u))(u)
    assert len(traced) == 1
    np.testing.assert_allclose(tangent, jax.jacfwd(rhs)(u).sum(axis=(2, 3)), atol=1e-9)


def test_walls_that_depend_on_time_are_read_at_each_time_when_called_eagerly():
    grid = Grid(((0.0, 3.0),), (32,), (Dirichlet(lambda t: 1 + t), Neumann(0.0)))
    (x,) = grid.coordinates
    at = [laplace(jnp.zeros(32), grid, t=t)[0] for t in (0.0, 0.5, 1.0)]
    np.testing.assert_allclose(np.diff(at), np.diff(at)[0], rtol=1e-12)  # linear in t
    assert at[1] > at[0]
