"""Boundary conditions of a grid's sides: periodic, Dirichlet (a value), Neumann (a flux)
and Robin (a combination).

A value is a number, an array along the wall (the grid's shape without the axis), or a
function of time ``f(t)`` giving either. Non-periodic sides are met by ghost
points: a polynomial through the condition at the wall and the nearest interior points,
evaluated outside the domain, of the degree the stencil's order needs.
"""

from collections.abc import Callable

import equinox as eqx
import jax.numpy as jnp
import numpy as np

Value = float | np.ndarray | Callable  # or a jax.Array along the wall


class AbstractBoundary(eqx.Module):
    """The condition on one side of one axis of a grid."""

    periodic = False

    def value_at(self, t):
        """The condition's value at time ``t`` (a number, or what ``f(t)`` gives)."""
        value = self.value
        return value(t) if callable(value) else value


class Periodic(AbstractBoundary):
    """The axis wraps around: the high side's neighbour is the low side's first point."""

    periodic = True

    def value_at(self, t):
        raise ValueError("a periodic side has no value")


def _unit(degree: int, power: int) -> np.ndarray:
    return 1.0 * (np.arange(degree + 1) == power)


class Dirichlet(AbstractBoundary):
    """The field takes ``value`` (a number, an array along the wall or ``f(t)``) on the
    wall."""

    value: Value = 0.0

    def wall_row(self, degree: int, h: float):
        """The condition on the ghost polynomial's coefficients (in cells from the wall)."""
        return _unit(degree, 0)


class Neumann(AbstractBoundary):
    """The field's outward normal derivative is ``value`` (a number, an array along the
    wall or ``f(t)``) on the wall."""

    value: Value = 0.0

    def wall_row(self, degree: int, h: float):
        return -_unit(degree, 1) / h  # outward: towards negative cells


class Robin(AbstractBoundary):
    """``alpha u + beta du/dn = value`` on the wall (``du/dn`` outward; ``value`` a number,
    an array along the wall or ``f(t)``)."""

    alpha: float = 1.0
    beta: float = 1.0
    value: Value = 0.0

    def wall_row(self, degree: int, h: float):
        static = all(isinstance(v, (int, float)) for v in (self.alpha, self.beta))
        xp = np if static else jnp
        return self.alpha * xp.asarray(_unit(degree, 0)) - self.beta / h * xp.asarray(
            _unit(degree, 1))


def as_sides(boundary) -> tuple[AbstractBoundary, AbstractBoundary]:
    """``(low, high)`` from one boundary (both sides) or a pair; periodic needs both sides."""
    sides = tuple(boundary) if isinstance(boundary, (tuple, list)) else (boundary, boundary)
    if len(sides) != 2 or not all(isinstance(s, AbstractBoundary) for s in sides):
        raise TypeError(f"a boundary must be a Periodic, Dirichlet, Neumann or Robin (or "
                        f"a pair of them), not {boundary!r}")
    if sides[0].periodic != sides[1].periodic:
        raise ValueError("an axis is periodic on both sides or on neither")
    return sides


def ghost_weights(wall_row, degree: int, width: int):
    """Weights giving ``width`` ghost values from ``[condition, u_0, ..., u_{degree-1}]``.

    The ghost polynomial ``P`` of ``degree`` meets ``wall_row . coefficients = condition``
    and the interior values. Coordinates are in cells from the wall, interior points at
    ``0.5, 1.5, ...`` and ghost points at ``-0.5, -1.5, ...`` (nearest first). NumPy's
    arithmetic for a NumPy row, JAX's for a traced one (a Robin wall's parameters).
    """
    xp = np if isinstance(wall_row, np.ndarray) else jnp
    powers = np.arange(degree + 1)
    inside = (np.arange(degree) + 0.5)[:, None] ** powers
    system = xp.concatenate([xp.asarray(wall_row)[None], xp.asarray(inside)])
    ghosts = (-(np.arange(width) + 0.5))[:, None] ** powers
    return xp.asarray(ghosts) @ xp.linalg.inv(system)


def extrapolation_degree(order: int) -> int:
    """The ghost polynomial's degree for a stencil of ``order``: its error stays ``O(h^order)``
    in second derivatives."""
    return order + 1


def check_points(kind: str, points: int, order: int) -> None:
    """Refuse an axis too short for the ghost polynomial of a stencil of ``order``."""
    need = extrapolation_degree(order)
    if points < need:
        raise ValueError(f"{kind} boundaries with order-{order} stencils need at least "
                         f"{need} points on the axis, not {points}")

