"""Cartesian grids in 1, 2 and 3 dimensions: extent, points and boundaries per axis.

Where the points lie depends on the axis's boundaries:

- periodic: ``n`` points ``a + i h`` with ``h = (b - a) / n``; ``b`` is ``a`` again.
- Dirichlet or Neumann: ``n`` cell centres ``a + (i + 1/2) h`` with ``h = (b - a) / n``;
  the walls ``a`` and ``b`` lie half a cell outside the first and last points, where ghost
  points meet the condition (see ``boundaries``).
"""

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from .boundaries import AbstractBoundary, Periodic, as_sides

AXIS_NAMES = ("x", "y", "z")


def _as_extent(extent, ndim: int) -> tuple[tuple[float, float], ...]:
    pairs = tuple((float(a), float(b)) for a, b in extent)
    if len(pairs) != ndim:
        raise ValueError(f"extent has {len(pairs)} axes but points has {ndim}")
    for axis, (a, b) in zip(AXIS_NAMES, pairs, strict=False):
        if not b > a:
            raise ValueError(f"the extent of axis {axis} must be (low, high) with "
                             f"high > low, not ({a}, {b})")
    return pairs


def _as_boundaries(boundaries, ndim: int):
    if not isinstance(boundaries, (AbstractBoundary, tuple, list)):
        as_sides(boundaries)  # raises, naming what a boundary is
    if isinstance(boundaries, AbstractBoundary):
        boundaries = (boundaries,) * ndim
    elif ndim == 1 and len(boundaries) == 2 and not isinstance(boundaries[0], (tuple, list)):
        boundaries = (tuple(boundaries),)  # a 1-D grid's (low, high)
    if len(boundaries) != ndim:
        raise ValueError(f"boundaries has {len(boundaries)} axes but points has {ndim}")
    return tuple(as_sides(b) for b in boundaries)


class Grid(eqx.Module):
    """A Cartesian grid: ``extent`` ``((a, b), ...)``, ``points`` ``(n, ...)`` per axis and
    ``boundaries``, one per axis (both sides alike) or a ``(low, high)`` pair per axis
    (a 1-D grid also takes its ``(low, high)`` pair alone).

    ``Grid(((0, 1), (0, 1)), (128, 128))`` is periodic in x and y. The grid is structure,
    not a parameter: it is static under ``jax.jit``, and its boundary values (numbers or
    functions of time) are read when an operator runs.
    """

    extent: tuple[tuple[float, float], ...] = eqx.field(static=True)
    points: tuple[int, ...] = eqx.field(static=True)
    boundaries: tuple[tuple[AbstractBoundary, AbstractBoundary], ...]

    def __init__(self, extent, points, boundaries=Periodic()):
        points = (points,) if isinstance(points, int) else tuple(int(n) for n in points)
        if not 1 <= len(points) <= 3 or min(points) < 1:
            raise ValueError(f"a grid has 1 to 3 axes of at least one point each, not "
                             f"{points}")
        self.points = points
        self.extent = _as_extent(extent, len(points))
        self.boundaries = _as_boundaries(boundaries, len(points))

    @property
    def ndim(self) -> int:
        """The number of axes."""
        return len(self.points)

    @property
    def shape(self) -> tuple[int, ...]:
        """A field's shape on this grid."""
        return self.points

    @property
    def size_text(self) -> str:
        """``"64x64"``: the points per axis (``"64-point"`` on a line), as messages name
        a grid."""
        return f"{self.points[0]}-point" if self.ndim == 1 else "x".join(map(str, self.points))

    @property
    def axis_names(self) -> tuple[str, ...]:
        """``("x",)``, ``("x", "y")`` or ``("x", "y", "z")``."""
        return AXIS_NAMES[: self.ndim]

    def periodic(self, axis: int) -> bool:
        """True where ``axis`` wraps around."""
        return self.boundaries[axis][0].periodic

    def length(self, axis: int) -> float:
        """``b - a`` of ``axis``."""
        a, b = self.extent[axis]
        return b - a

    @property
    def spacing(self) -> tuple[float, ...]:
        """``h`` per axis: the length over the number of points (or of cells)."""
        return tuple(self.length(i) / n for i, n in enumerate(self.points))

    def axis_coordinates(self, axis: int) -> np.ndarray:
        """The points of ``axis`` (1-D, float64)."""
        a, _ = self.extent[axis]
        h = self.spacing[axis]
        shift = 0.0 if self.periodic(axis) else 0.5
        return a + (np.arange(self.points[axis]) + shift) * h

    @property
    def coordinates(self) -> tuple[jnp.ndarray, ...]:
        """The coordinates of every point, one array of the grid's shape per axis."""
        axes = [self.axis_coordinates(i) for i in range(self.ndim)]
        return tuple(jnp.asarray(c) for c in np.meshgrid(*axes, indexing="ij"))

    @property
    def cell_volume(self) -> float:
        """The product of the spacings: sums times this are integrals."""
        return float(np.prod(self.spacing))

    def integrate(self, u):
        """The integral of ``u`` (a field of the grid's shape) over the domain."""
        return jnp.sum(u) * self.cell_volume
