"""Frames of field models, Qt-free: which models the app offers, how a frame is coloured
and placed, its slices and space-time pictures, and painting a disc into it."""

import math

import numpy as np

import difflab as dl

COLOUR_MAPS = ("viridis", "inferno", "cividis", "CET-D1A", "CET-L1")
SEQUENTIAL_MAP = "viridis"
DIVERGING_MAP = "CET-D1A"  # blue-white-red, perceptually uniform (colorcet D1A)
SIGNED_SHARE = 0.01  # signed: its smaller side is more than this share of the larger


def plane_models() -> list[str]:
    """The registered field models written for grids of two axes."""
    return [name for name in dl.models.field_models()
            if 2 in dl.models.get(name).dimensions]


def model_choices() -> list[tuple[str, int]]:
    """Every registered field model with each number of axes it is written for."""
    return [(name, ndim) for name in dl.models.field_models()
            for ndim in dl.models.get(name).dimensions]


def finite_range(values: np.ndarray) -> tuple[float, float] | None:
    """The least and greatest finite values (None if there are none): two passes over
    the array when all are finite, as in a healthy run."""
    if not np.size(values):
        return None
    lo, hi = float(np.min(values)), float(np.max(values))
    if math.isfinite(lo) and math.isfinite(hi):
        return lo, hi
    finite = values[np.isfinite(values)]
    return (float(finite.min()), float(finite.max())) if finite.size else None


def is_signed(values: np.ndarray) -> bool:
    """Whether a field takes both signs in earnest (not a rounding error below zero)."""
    span = finite_range(values)
    return span is not None and _signed(*span)


def _signed(lo: float, hi: float) -> bool:
    return lo < 0.0 < hi and min(-lo, hi) > SIGNED_SHARE * max(-lo, hi)


def colour_map(values: np.ndarray) -> str:
    """A diverging map for a signed field (centred at 0), a sequential one otherwise."""
    return DIVERGING_MAP if is_signed(values) else SEQUENTIAL_MAP


def levels(values: np.ndarray) -> tuple[float, float]:
    """The colour range of a frame: its finite range, symmetric about 0 for a signed
    field; a constant field gets +-10 % around its value (+-1 around 0)."""
    span = finite_range(values)
    if span is None:
        return (0.0, 1.0)
    lo, hi = span
    if _signed(lo, hi):
        top = max(-lo, hi)
        return (-top, top)
    if hi - lo > 1e-12 * max(abs(lo), abs(hi), 1e-300):
        return (lo, hi)
    half = 0.1 * abs(lo) if lo else 1.0
    return (lo - half, lo + half)


def image_rect(grid, axes=(0, 1)) -> tuple[float, float, float, float]:
    """``(x0, y0, width, height)`` of the image of a grid's two ``axes``: each cell
    centred on its point."""
    a, b = axes
    (x0, y0) = grid.axis_coordinates(a)[0], grid.axis_coordinates(b)[0]
    hx, hy = grid.spacing[a], grid.spacing[b]
    return (float(x0 - hx / 2), float(y0 - hy / 2), grid.points[a] * hx, grid.points[b] * hy)


#: the slices of a 3-D field: plane -> (axis across, axis up, axis cut)
PLANES = {"xy": (0, 1, 2), "xz": (0, 2, 1), "yz": (1, 2, 0)}


def plane_slice(values: np.ndarray, plane: str, index: int) -> np.ndarray:
    """The slice of a 3-D field in ``plane`` at ``index`` along the axis it cuts."""
    return np.take(values, index, axis=PLANES[plane][2])


def slice_point(grid, plane: str, index: int, point) -> tuple[float, float, float]:
    """The point of space under ``point`` (its coordinates in ``plane``) on the slice of a
    3-D grid in ``plane`` at ``index`` along the axis it cuts."""
    first, second, cut = PLANES[plane]
    centre = [0.0, 0.0, 0.0]
    centre[first], centre[second] = (float(p) for p in point)
    centre[cut] = float(grid.axis_coordinates(cut)[index])
    return tuple(centre)


def space_time(frames, name: str, last: int) -> np.ndarray:
    """Field ``name`` of a 1-D run as ``(time, x)``: frames ``0..last`` stacked."""
    return np.stack([frame[name] for frame in frames[:last + 1]])


def choice_label(name: str, ndim: int) -> str:
    """How a model is listed: its name for two axes, with ``(1-D)`` or ``(3-D)`` else."""
    return name if ndim == 2 else f"{name} ({ndim}-D)"


def parse_choice(label: str) -> tuple[str, int]:
    """``(name, ndim)`` of a :func:`choice_label`."""
    name, _, rest = label.partition(" (")
    return name, int(rest[0]) if rest else 2


def nearest_cell(grid, point) -> tuple[int, ...] | None:
    """The index of the grid point nearest ``point`` (coordinates), ``None`` outside."""
    index = []
    for axis, p in enumerate(point):
        x0, h = grid.axis_coordinates(axis)[0], grid.spacing[axis]
        i = math.floor((p - x0) / h + 0.5)
        if not 0 <= i < grid.points[axis]:
            return None
        index.append(i)
    return tuple(index)


def disc_cells(grid, centre, radius: float) -> np.ndarray:
    """Flat indices of the points within ``radius`` of ``centre`` (across periodic edges),
    or of the point nearest it where the disc holds none."""
    distance2 = np.zeros(grid.shape)
    for axis, c in enumerate(centre):
        d = grid.axis_coordinates(axis) - c
        if grid.periodic(axis):
            length = grid.length(axis)
            d = d - length * np.round(d / length)
        shape = [1] * grid.ndim
        shape[axis] = -1
        distance2 = distance2 + d.reshape(shape) ** 2
    cells = np.flatnonzero(distance2 <= radius**2)
    if not cells.size:
        cells = np.array([int(np.argmin(distance2))])
    return cells


def paint_disc(field: np.ndarray, grid, centre, radius: float, value: float):
    """``(painted, cells)``: a copy of ``field`` with the disc of ``radius`` around
    ``centre`` set to ``value``, and the flat indices of the cells it set."""
    cells = disc_cells(grid, centre, radius)
    painted = np.array(field, dtype=float, copy=True)
    painted.flat[cells] = value
    return painted, cells


def point_series(frames, name: str, index) -> np.ndarray:
    """Field ``name`` at grid ``index`` in each of ``frames``: one value per frame."""
    return np.array([frame[name][tuple(index)] for frame in frames], dtype=float)


def fractional_index(grid, axis: int, p) -> np.ndarray:
    """Where coordinates ``p`` fall on ``axis``, in (fractional) grid indices; within
    1e-9 of a grid point counts as on it, so a line through grid points samples them."""
    f = (np.asarray(p, dtype=float) - grid.axis_coordinates(axis)[0]) / grid.spacing[axis]
    near = np.round(f)
    return np.where(np.abs(f - near) < 1e-9, near, f)


def line_profile(values: np.ndarray, grid, start, end, n: int) -> np.ndarray:
    """A 2-D field sampled bilinearly at ``n`` evenly spaced points from ``start`` to
    ``end`` (coordinates); points beyond the grid's outer points take its edge values."""
    t = np.arange(n) / max(n - 1, 1)
    weights, lows = [], []
    for axis in range(2):
        f = fractional_index(grid, axis, start[axis] + (end[axis] - start[axis]) * t)
        f = np.clip(f, 0, grid.points[axis] - 1)
        low = np.minimum(np.floor(f).astype(int), grid.points[axis] - 2)
        lows.append(low)
        weights.append(f - low)
    (i, j), (wx, wy) = lows, weights
    v = np.asarray(values, dtype=float)
    return ((1 - wx) * (1 - wy) * v[i, j] + wx * (1 - wy) * v[i + 1, j]
            + (1 - wx) * wy * v[i, j + 1] + wx * wy * v[i + 1, j + 1])


def profile_samples(grid, start, end) -> int:
    """How many samples a profile from ``start`` to ``end`` takes: one per grid step
    along the axis it crosses most cells of (at least 2)."""
    steps = [abs(e - s) / h for s, e, h in zip(start, end, grid.spacing, strict=False)]
    return max(2, round(max(steps)) + 1)
