"""Finite-difference operators of order 2 or 4 that honour the grid's boundaries.

Each operator pads the field along the axis it differentiates: periodic axes wrap, and
Dirichlet and Neumann sides get ghost points from a polynomial through the wall's
condition and the nearest interior points (``boundaries.ghost_weights``). ``t`` is the
time at which boundary values that depend on time are read.
"""

import functools

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .boundaries import check_points, extrapolation_degree, ghost_weights

#: central stencils, offsets -w..w: first and second derivatives, by order
FIRST = {2: (-0.5, 0.0, 0.5), 4: (1 / 12, -2 / 3, 0.0, 2 / 3, -1 / 12)}
SECOND = {2: (1.0, -2.0, 1.0), 4: (-1 / 12, 4 / 3, -5 / 2, 4 / 3, -1 / 12)}


def _check_order(order: int) -> int:
    if order not in FIRST:
        raise ValueError(f"finite differences come in order 2 or 4, not {order}")
    return order // 2


@functools.lru_cache(maxsize=None)
def _cached(wall_row: tuple, order: int) -> np.ndarray:
    return ghost_weights(np.array(wall_row), extrapolation_degree(order), order // 2)


def _weights(side, order: int, h: float):
    """The ghost weights of ``side`` (cached where they are plain numbers)."""
    degree = extrapolation_degree(order)
    row = side.wall_row(degree, h)
    if isinstance(row, np.ndarray):
        return _cached(tuple(row.tolist()), order)
    return ghost_weights(row, degree, order // 2)


def _ghosts(u_inner, side, grid, axis: int, order: int, t):
    """The ghost layers beyond one wall, nearest first; ``u_inner`` starts at the wall."""
    check_points(type(side).__name__, u_inner.shape[axis], order)
    weights = _weights(side, order, grid.spacing[axis])
    degree = weights.shape[1] - 1
    condition = side.value_at(t)
    interior = lax.slice_in_dim(u_inner, 0, degree, axis=axis)
    return [w[0] * condition + jnp.tensordot(w[1:], interior, axes=([0], [axis]))
            for w in weights]


def _ghost_layers(u, grid, axis: int, width: int, order: int, t):
    """The ``width`` layers before and after ``u`` along ``axis``, as the boundaries say."""
    n = u.shape[axis]
    if grid.periodic(axis):
        return (lax.slice_in_dim(u, n - width, n, axis=axis),
                lax.slice_in_dim(u, 0, width, axis=axis))
    low, high = grid.boundaries[axis]
    before = _ghosts(u, low, grid, axis, order, t)[:width][::-1]
    after = _ghosts(jnp.flip(u, axis=axis), high, grid, axis, order, t)[:width]
    return jnp.stack(before, axis=axis), jnp.stack(after, axis=axis)


def pad(u, grid, axis: int, width: int, order: int = 2, t=0.0):
    """``u`` with ``width`` extra points on both sides of ``axis``, as the boundaries say."""
    before, after = _ghost_layers(u, grid, axis, width, order, t)
    return jnp.concatenate([before, u, after], axis=axis)


def _combine(padded, stencil, count: int, axis: int):
    """``count`` stencil sums over ``padded`` along ``axis``, as sums of its slices."""
    total = 0.0
    for k, c in enumerate(stencil):
        if c:
            total = total + c * lax.slice_in_dim(padded, k, k + count, axis=axis)
    return total


def _apply(u, grid, axis: int, stencil, order: int, t):
    """The stencil along ``axis``."""
    width = len(stencil) // 2
    if u.shape[axis] < 2 * width:
        return _combine(pad(u, grid, axis, width, order, t), stencil, u.shape[axis], axis)
    return _assemble(u, _ghost_layers(u, grid, axis, width, order, t), stencil, axis)


def _assemble(u, ghosts, stencil, axis: int):
    """The stencil along ``axis`` given the ghost layers beyond both ends. The interior is
    summed from slices of ``u`` itself and only the ``width`` points at each end from
    thin padded slabs: padding the whole field first costs an extra pass over memory."""
    width, n = len(stencil) // 2, u.shape[axis]
    low, high = _ends(u, ghosts, width, axis)
    parts = [_combine(low, stencil, width, axis), _combine(u, stencil, n - 2 * width, axis),
             _combine(high, stencil, width, axis)]
    return jnp.concatenate(parts, axis=axis)


def _ends(u, ghosts, width: int, axis: int):
    """The ``2 width`` points at each end of ``axis`` with the ghost layers beyond them."""
    n = u.shape[axis]
    return (jnp.concatenate([ghosts[0], lax.slice_in_dim(u, 0, 2 * width, axis=axis)], axis=axis),
            jnp.concatenate([lax.slice_in_dim(u, n - 2 * width, n, axis=axis), ghosts[1]],
                            axis=axis))


def _traced_once(operator):
    """``operator(u, grid, *rest, t)`` traced once per shape, grid and ``rest``, then
    reused. A model's right-hand side is traced many times over (the step, its
    linearization, an implicit solver's Jacobian-vector products and their transposes),
    and an operator with walls is a few hundred operations each time. ``t`` is passed
    only where a wall's value depends on it, and then traced."""
    jitted = eqx.filter_jit(operator)

    @functools.wraps(operator)
    def call(u, grid, *rest, t=0.0):
        timed = any(callable(getattr(side, "value", None))
                    for sides in grid.boundaries for side in sides)
        return jitted(u, grid, *rest, jnp.asarray(t) if timed else 0.0)

    return call


def derivative(u, grid, axis: int, order: int = 2, t=0.0):
    """``du/dx_axis`` by central differences of ``order`` (2 or 4)."""
    _check_order(order)
    return _derivative(u, grid, axis, order, t=t)


@_traced_once
def _derivative(u, grid, axis: int, order: int, t):
    return _apply(u, grid, axis, FIRST[order], order, t) / grid.spacing[axis]


def second_derivative(u, grid, axis: int, order: int = 2, t=0.0):
    """``d2u/dx_axis2`` by central differences of ``order`` (2 or 4)."""
    _check_order(order)
    return _second_derivative(u, grid, axis, order, t=t)


@_traced_once
def _second_derivative(u, grid, axis: int, order: int, t):
    return _apply(u, grid, axis, SECOND[order], order, t) / grid.spacing[axis] ** 2


def laplace(u, grid, order: int = 2, t=0.0):
    """The Laplacian of the scalar field ``u``: the sum of second derivatives."""
    _check_order(order)
    return _laplace(u, grid, order, t=t)


@_traced_once
def _laplace(u, grid, order: int, t):
    return _stencil_sum(u, grid, [tuple(c / h**2 for c in SECOND[order]) for h in grid.spacing],
                        order, t)


def _stencil_sum(u, grid, stencils, order: int, t, rolled: bool | None = None):
    """The sum over axes of ``stencils[axis]`` along each, assembled in one array: the
    interior (every point ``width`` or more from each wall) summed from slices of ``u`` in
    one pass, then the thin slabs along the walls written into it in place. Summing whole
    per-axis results instead costs a pass over memory each.

    ``rolled`` (by default on an accelerator, on a grid periodic along every axis): the
    sum of shifted copies of ``u`` instead, which XLA fuses with what follows into one
    pass; writing the slabs in place keeps the sum in memory, a pass more on a GPU,
    where a CPU's caches absorb it (there rolling costs more than it saves)."""
    width = len(stencils[0]) // 2
    if rolled is None:
        rolled = jax.default_backend() != "cpu"
    if rolled and all(grid.periodic(axis) for axis in range(u.ndim)):
        return sum(c * jnp.roll(u, width - k, axis) for axis, stencil in enumerate(stencils)
                   for k, c in enumerate(stencil) if c)
    if min(u.shape) <= 2 * width:
        return sum(_apply(u, grid, axis, s, order, t) for axis, s in enumerate(stencils))
    ghosts = [_ghost_layers(u, grid, axis, width, order, t) for axis in range(u.ndim)]
    interior = tuple(slice(width, n - width) for n in u.shape)
    total = 0.0
    for axis, stencil in enumerate(stencils):
        rows = interior[:axis] + (slice(None),) + interior[axis + 1:]
        total = total + _combine(u[rows], stencil, u.shape[axis] - 2 * width, axis)
    out = jnp.pad(total, width)
    for axis, stencil in enumerate(stencils):
        n = u.shape[axis]
        for end, start in zip(_ends(u, ghosts[axis], width, axis), (0, n - width)):
            def part(x, start=start, axis=axis):
                return lax.slice_in_dim(x, start, start + width, axis=axis)

            slab = _combine(end, stencil, width, axis) + sum(
                _assemble(part(u), [part(g) for g in ghosts[other]], s, other)
                for other, s in enumerate(stencils) if other != axis)
            out = out.at[(slice(None),) * axis + (slice(start, start + width),)].set(slab)
    return out


def gradient(u, grid, order: int = 2, t=0.0):
    """The gradient of ``u``: shape ``(ndim, *grid.shape)``."""
    return jnp.stack([derivative(u, grid, i, order, t) for i in range(grid.ndim)])


def divergence(v, grid, order: int = 2, t=0.0):
    """The divergence of the vector field ``v`` of shape ``(ndim, *grid.shape)``; each
    component meets the grid's boundaries."""
    _check_vector(v, grid)
    return sum(derivative(v[i], grid, i, order, t) for i in range(grid.ndim))


def advection(u, velocity, grid, order: int = 2, t=0.0):
    """``(velocity . grad) u`` with central differences; ``velocity`` has shape
    ``(ndim, *grid.shape)`` (or ``(ndim,)`` for a uniform one)."""
    velocity = jnp.asarray(velocity)
    if velocity.shape == (grid.ndim,):
        velocity = velocity.reshape((grid.ndim,) + (1,) * grid.ndim)
    return sum(velocity[i] * derivative(u, grid, i, order, t) for i in range(grid.ndim))


def _check_vector(v, grid) -> None:
    if v.shape != (grid.ndim, *grid.shape):
        raise ValueError(f"a vector field on this grid has shape {(grid.ndim, *grid.shape)}, "
                         f"not {v.shape}")
