"""Vector fields of field models, Qt-free: a frame's velocity and the arrows that draw it.

A 2-D model gives a velocity in one of two ways: it computes it from its one field (a
``velocity(field)`` method, as Navier-Stokes does from the vorticity through the stream
function, spectrally), or it has two fields named as the components of a vector
(``vx``/``vy``, ``u_x``/``u_y``). :func:`arrow_lines` draws a velocity as arrows on a
coarse subsampled grid, as one set of line segments.
"""

import math

import equinox as eqx
import numpy as np

ARROWS_PER_AXIS = 16  # about this many arrows across each axis
ARROW_FILL = 0.9  # the longest arrow spans this share of the arrows' spacing
HEAD_SHARE = 0.3  # an arrow head's barbs, as a share of the arrow's length
HEAD_ANGLE = math.radians(25)  # between a barb and the shaft


@eqx.filter_jit
def _model_velocity(model, field):
    return model.velocity(field)


def component_fields(names) -> tuple[str, str] | None:
    """The two of ``names`` that are the x and y components of one vector (``vx`` and
    ``vy``, ``u_x`` and ``u_y``), ``None`` where there are none."""
    for name in names:
        if name.endswith("x") and len(name) > 1 and name[:-1] + "y" in names:
            return name, name[:-1] + "y"
    return None


def velocity_source(model) -> str | None:
    """What a 2-D model's velocity comes from, in words; ``None`` where it has none."""
    if model.grid.ndim != 2:
        return None
    names = tuple(model.field_names)
    if len(names) == 1 and callable(getattr(model, "velocity", None)):
        return f"velocity from {names[0]}"
    pair = component_fields(names)
    return f"velocity ({pair[0]}, {pair[1]})" if pair else None


def frame_velocity(model, frame: dict) -> tuple[np.ndarray, np.ndarray] | None:
    """``(u, v)`` of a frame (a dict of fields) of ``model``, ``None`` where the model
    has no velocity (see :func:`velocity_source`)."""
    source = velocity_source(model)
    if source is None:
        return None
    pair = component_fields(tuple(model.field_names))
    if pair is not None:
        return np.asarray(frame[pair[0]], float), np.asarray(frame[pair[1]], float)
    u, v = np.asarray(_model_velocity(model, frame[model.field_names[0]]), dtype=float)
    return u, v


def arrow_points(grid, per_axis: int = ARROWS_PER_AXIS) -> tuple[slice, slice]:
    """The grid points that carry arrows: every ``step``-th point of each axis (about
    ``per_axis`` of them), the first half a step in."""
    steps = [max(1, n // per_axis) for n in grid.points]
    return tuple(slice(s // 2, None, s) for s in steps)


def arrow_lines(grid, u: np.ndarray, v: np.ndarray, per_axis: int = ARROWS_PER_AXIS):
    """``(x, y)``: segments as pairs of points (shaft, two barbs per arrow) of arrows of
    the velocity ``(u, v)`` centred on :func:`arrow_points`, lengths in proportion to the
    speed, the longest :data:`ARROW_FILL` of the arrows' spacing. Empty where all is still."""
    cut = arrow_points(grid, per_axis)
    xs, ys = (np.asarray(c)[cut].ravel() for c in np.meshgrid(
        grid.axis_coordinates(0), grid.axis_coordinates(1), indexing="ij"))
    du, dv = np.asarray(u)[cut].ravel(), np.asarray(v)[cut].ravel()
    speed = np.hypot(du, dv)
    top = float(speed.max()) if speed.size else 0.0
    if not top > 0 or not math.isfinite(top):
        return np.zeros(0), np.zeros(0)
    spacing = min(grid.spacing[a] * (cut[a].step or 1) for a in range(2))
    scale = ARROW_FILL * spacing / top
    ax, ay = du * scale, dv * scale
    tail, tip = (xs - ax / 2, ys - ay / 2), (xs + ax / 2, ys + ay / 2)
    barbs = [_rotated(-HEAD_SHARE * ax, -HEAD_SHARE * ay, s * HEAD_ANGLE) for s in (1, -1)]
    x = np.stack([tail[0], tip[0]] + [c for b in barbs for c in (tip[0], tip[0] + b[0])], 1)
    y = np.stack([tail[1], tip[1]] + [c for b in barbs for c in (tip[1], tip[1] + b[1])], 1)
    return x.ravel(), y.ravel()


def _rotated(x, y, angle: float):
    c, s = math.cos(angle), math.sin(angle)
    return c * x - s * y, s * x + c * y
