"""Orthographic views of three states: the box they are drawn in and its rotation.

The three chosen states are scaled into the cube ``[-1, 1]^3`` (each over the range of
the data drawn), turned by an azimuth and an elevation, and projected on the screen.
Azimuth 0 and elevation 0 look along +y, with x to the right and z up; the azimuth turns
the scene about z (at 90 degrees y is to the right), the elevation tilts it (at 90
degrees the view looks down on the x-y plane, x to the right and y up).
"""

import itertools

import numpy as np

#: The 12 edges of the cube ``[-1, 1]^3``: shape (12, 2, 3), each edge (start, end).
BOX_EDGES = np.array([
    [corner, np.where(np.arange(3) == axis, 1.0, corner)]
    for axis in range(3)
    for corner in (np.array(c, float) for c in itertools.product((-1, 1), repeat=3))
    if corner[axis] == -1
])


def view_matrix(azimuth: float, elevation: float) -> np.ndarray:
    """The rotation (3 x 3) of the view from ``azimuth`` and ``elevation`` in degrees.

    Its rows are the screen's right, the screen's up and the direction to the viewer, in
    the coordinates of the scene.
    """
    a, e = np.radians(azimuth), np.radians(elevation)
    right = np.array([np.cos(a), np.sin(a), 0.0])
    up = np.array([-np.sin(e) * np.sin(a), np.sin(e) * np.cos(a), np.cos(e)])
    return np.stack([right, up, np.cross(right, up)])


def project(points: np.ndarray, azimuth: float, elevation: float) -> np.ndarray:
    """Screen coordinates (n x 2) of ``points`` (n x 3) seen from the given angles."""
    points = np.asarray(points, float)
    if points.ndim != 2 or points.shape[1] != 3:
        raise ValueError(f"points must have shape (n, 3), not {points.shape}")
    return points @ view_matrix(azimuth, elevation)[:2].T


def box_bounds(arrays) -> tuple[np.ndarray, np.ndarray]:
    """The lowest and highest finite value of each of the 3 columns over ``arrays``
    (each n x 3); a column with no finite value, or a single one, gets a span of 1."""
    arrays = [np.asarray(a, float).reshape(-1, 3) for a in arrays]
    stacked = np.concatenate(arrays) if arrays else np.empty((0, 3))
    finite = np.where(np.isfinite(stacked), stacked, np.nan)
    lo, hi = np.zeros(3), np.zeros(3)
    for k in range(3):
        column = finite[:, k][~np.isnan(finite[:, k])]
        lo[k], hi[k] = (column.min(), column.max()) if column.size else (0.0, 0.0)
    flat = hi <= lo
    return np.where(flat, lo - 0.5, lo), np.where(flat, hi + 0.5, hi)


def to_box(points: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``points`` (n x 3) scaled so that ``lo`` goes to -1 and ``hi`` to +1 on each axis."""
    return 2.0 * (np.asarray(points, float) - lo) / (hi - lo) - 1.0


def label_edges(azimuth: float, elevation: float) -> np.ndarray:
    """The edge of the box along which each axis is labelled (3 x 2 x 3): of the four
    edges along an axis, one on the outline of the box as seen, the lowest on screen
    (the leftmost for the axis that is most upright)."""
    matrix = view_matrix(azimuth, elevation)[:2]
    edges = []
    for axis in range(3):
        along = BOX_EDGES[axis * 4:(axis + 1) * 4]
        middle = along.mean(axis=1) @ matrix.T
        direction = np.abs(matrix[:, axis])
        side = 0 if direction[1] > direction[0] else 1  # upright axes go left, others down
        distance = np.round(np.hypot(*middle.T), 9)
        best = np.lexsort((middle[:, side], -distance))[0]
        edges.append(along[best])
    return np.array(edges)
