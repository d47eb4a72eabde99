"""The phase plane of the current model: nullclines, direction field, equilibria, orbits.

Qt-free. A :class:`PhasePlaneRequest` names two state axes, the box they span and the
values at which the other states are held; :func:`compute_plane` evaluates the vector
field on a grid (one compiled ``jax.vmap`` of ``model.vector_field``), traces the
nullclines (the zero contours of each of the two components, by marching squares), the
normalised direction field and the equilibria found in the box (:func:`difflab.equilibria`,
classified by the eigenvalues of the exact Jacobian). :func:`orbit_from` simulates from a
point forward (:func:`difflab.simulate` with the run settings) and backward (the same call
on the time-reversed field). With more than two states the plane is a slice: the field is
evaluated with the other states held, and the equilibria of the whole model in the box
are projected onto it.
"""

import dataclasses

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

import difflab as dl

from .runs import RunSettings

STABLE = ("stable node", "stable focus")
UNSTABLE = ("unstable node", "unstable focus")


def stability_group(kind: str) -> str:
    """``"stable"``, ``"unstable"``, ``"saddle"`` or ``"other"`` (centres, non-hyperbolic)."""
    if kind in STABLE:
        return "stable"
    if kind in UNSTABLE:
        return "unstable"
    return "saddle" if kind == "saddle" else "other"


def default_box(values_x, values_y, pad: float = 0.25) -> tuple[tuple[float, float], ...]:
    """A box around the given values of each axis and zero, padded by ``pad`` of its size
    (each axis at least 2 wide)."""
    box = []
    for values in (values_x, values_y):
        values = np.asarray(values, dtype=float)
        values = values[np.isfinite(values)]
        lo = min(0.0, float(values.min(initial=0.0)))
        hi = max(0.0, float(values.max(initial=0.0)))
        width = max(hi - lo, 2.0)
        mid = 0.5 * (lo + hi)
        half = 0.5 * width * (1 + 2 * pad)
        box.append((mid - half, mid + half))
    return tuple(box)


@dataclasses.dataclass(frozen=True)
class PhasePlaneRequest:
    """What to draw: the model at its current values, the run settings (``t0`` is the time
    the field is evaluated at, ``t1`` how long orbits run), the axes ``x`` and ``y``, their
    ``box`` ``((x_lo, x_hi), (y_lo, y_hi))`` and ``held``, the full state whose other
    components stay fixed (default: the model's initial state)."""

    model: dl.Model
    model_name: str
    settings: RunSettings
    x: str
    y: str
    box: tuple[tuple[float, float], tuple[float, float]]
    held: tuple[float, ...] | None = None
    n_grid: int = 101
    n_arrows: int = 21

    def __post_init__(self):
        names = tuple(self.model.state_names)
        if len(names) < 2:
            raise ValueError(f"{self.model_name} has one state; a phase plane needs two")
        for axis in (self.x, self.y):
            if axis not in names:
                raise ValueError(f"{self.model_name} has no state {axis!r}; "
                                 f"its states are {', '.join(names)}")
        if self.x == self.y:
            raise ValueError("choose two different states for the axes")
        box = tuple((float(lo), float(hi)) for lo, hi in self.box)
        if len(box) != 2 or not all(np.isfinite([lo, hi]).all() and lo < hi for lo, hi in box):
            raise ValueError(f"the box needs finite ranges with min < max, got {self.box}")
        object.__setattr__(self, "box", box)
        if self.held is not None and len(self.held) != len(names):
            raise ValueError(f"held: {len(self.held)} values for {len(names)} states")
        if self.n_grid < 3 or self.n_arrows < 2:
            raise ValueError("the grid needs at least 3 points a side, the arrows 2")

    @property
    def axes(self) -> tuple[int, int]:
        return self.model.state_index(self.x), self.model.state_index(self.y)

    def base_state(self) -> np.ndarray:
        held = self.model.initial_state() if self.held is None else self.held
        return np.array(held, dtype=float)

    def state_at(self, x: float, y: float) -> np.ndarray:
        """The full state at plane point ``(x, y)``, the other states held."""
        state = self.base_state()
        i, j = self.axes
        state[i], state[j] = x, y
        return state


@dataclasses.dataclass(frozen=True)
class PhasePlane:
    """The plane drawn for ``request``: the grid ``xs`` (nx,), ``ys`` (ny,) and the two
    field components ``u``, ``v`` (ny, nx) on it; ``nullclines[state]``, the segments
    (k, 2, 2) where that component of the field is zero; ``arrows``, segments (m, 2, 2)
    of the direction field (shafts and heads, scaled to the grid spacing);
    ``equilibria`` (a :class:`difflab.Equilibria`) and ``points`` (k, 2) their place in
    the plane."""

    request: PhasePlaneRequest
    xs: np.ndarray
    ys: np.ndarray
    u: np.ndarray
    v: np.ndarray
    nullclines: dict
    arrows: np.ndarray
    equilibria: object
    points: np.ndarray

    @property
    def stability(self) -> tuple[str, ...]:
        return tuple(self.equilibria.stability) if self.equilibria is not None else ()


@eqx.filter_jit
def _field_on(model, t, states):
    return jax.vmap(lambda y: model.vector_field(t, y))(states)


def field_on_grid(request: PhasePlaneRequest, xs, ys) -> tuple[np.ndarray, np.ndarray]:
    """The x and y components of the field on the grid ``xs`` x ``ys``, each (ny, nx)."""
    gx, gy = np.meshgrid(xs, ys)
    states = np.tile(request.base_state(), (gx.size, 1))
    i, j = request.axes
    states[:, i], states[:, j] = gx.ravel(), gy.ravel()
    field = np.asarray(_field_on(request.model, jnp.asarray(float(request.settings.t0)),
                                 jnp.asarray(states)))
    return field[:, i].reshape(gx.shape), field[:, j].reshape(gx.shape)


def zero_contour(xs, ys, f) -> np.ndarray:
    """Marching squares: the segments (k, 2, 2) of ``f = 0`` for ``f`` (ny, nx) sampled on
    ``xs`` x ``ys``, interpolated linearly along the cell edges."""
    xs, ys, f = np.asarray(xs, float), np.asarray(ys, float), np.asarray(f, float)
    corners = (f[:-1, :-1], f[:-1, 1:], f[1:, 1:], f[1:, :-1])  # counter-clockwise
    gx, gy = np.meshgrid(xs, ys)
    x0, x1, y0, y1 = gx[:-1, :-1], gx[:-1, 1:], gy[:-1, :-1], gy[1:, :-1]
    corner_xy = ((x0, y0), (x1, y0), (x1, y1), (x0, y1))
    points, crossing = [], []
    for k in range(4):  # edge k runs from corner k to corner k + 1
        a, b = corners[k], corners[(k + 1) % 4]
        (ax, ay), (bx, by) = corner_xy[k], corner_xy[(k + 1) % 4]
        crossing.append(np.isfinite(a) & np.isfinite(b) & ((a > 0) != (b > 0)))
        with np.errstate(divide="ignore", invalid="ignore"):
            s = np.where(a != b, a / (a - b), 0.5)
        points.append(np.stack([ax + s * (bx - ax), ay + s * (by - ay)], axis=-1))
    points = np.stack(points, axis=-2).reshape(-1, 4, 2)
    crossing = np.stack(crossing, axis=-1).reshape(-1, 4)
    count = crossing.sum(axis=1)
    two = np.flatnonzero(count == 2)
    order = np.argsort(~crossing[two], axis=1, kind="stable")[:, :2]
    segments = [points[two[:, None], order]]
    four = np.flatnonzero(count == 4)
    if len(four):
        f00 = corners[0].ravel()[four]
        centre = sum(c.ravel()[four] for c in corners) / 4
        joined = (centre > 0) == (f00 > 0)  # the corner-0 sign joins corners 0 and 2
        pairs = np.where(joined[:, None, None], [[0, 1], [2, 3]], [[3, 0], [1, 2]])
        segments.append(points[four[:, None, None], pairs].reshape(-1, 2, 2))
    return np.concatenate(segments).reshape(-1, 2, 2)


def direction_segments(xs, ys, u, v, box) -> np.ndarray:
    """Arrows of the normalised field at the grid points: a shaft and two head strokes
    each, as segments (3 m, 2, 2), scaled so an arrow spans most of a grid cell."""
    (x_lo, x_hi), (y_lo, y_hi) = box
    sx, sy = (x_hi - x_lo) / max(len(xs) - 1, 1), (y_hi - y_lo) / max(len(ys) - 1, 1)
    gx, gy = np.meshgrid(xs, ys)
    du, dv = np.asarray(u) / sx, np.asarray(v) / sy  # in cells per unit time
    norm = np.hypot(du, dv)
    keep = np.isfinite(norm) & (norm > 0)
    du, dv = du[keep] / norm[keep] * 0.4, dv[keep] / norm[keep] * 0.4
    cx, cy = gx[keep], gy[keep]
    tail = np.stack([cx - du * sx, cy - dv * sy], axis=-1)
    head = np.stack([cx + du * sx, cy + dv * sy], axis=-1)
    strokes = [np.stack([tail, head], axis=1)]
    for angle in (2.6, -2.6):  # two strokes back from the head, about 150 degrees off
        c, s = np.cos(angle), np.sin(angle)
        bx, by = (c * du - s * dv) * 0.5, (s * du + c * dv) * 0.5
        strokes.append(np.stack([head, head + np.stack([bx * sx, by * sy], -1)], axis=1))
    return np.concatenate(strokes)


def plane_equilibria(request: PhasePlaneRequest, n_starts: int = 128):
    """The equilibria with both plane coordinates in the box (``None`` if none could be
    computed) and their plane coordinates (k, 2)."""
    (x_box, y_box), (i, j) = request.box, request.axes
    try:
        found = dl.equilibria(request.model, box={request.x: x_box, request.y: y_box},
                              n_starts=n_starts, t=float(request.settings.t0))
    except (ValueError, TypeError, ArithmeticError, RuntimeError):
        return None, np.zeros((0, 2))
    states = np.asarray(found.states, dtype=float).reshape(-1, len(request.model.state_names))
    return found, states[:, [i, j]]


def compute_plane(request: PhasePlaneRequest, stop=lambda: False) -> PhasePlane | None:
    """The field, nullclines, arrows and equilibria of ``request`` (``None`` if stopped)."""
    (x_lo, x_hi), (y_lo, y_hi) = request.box
    xs, ys = np.linspace(x_lo, x_hi, request.n_grid), np.linspace(y_lo, y_hi, request.n_grid)
    u, v = field_on_grid(request, xs, ys)
    ax, ay = np.linspace(x_lo, x_hi, request.n_arrows), np.linspace(y_lo, y_hi, request.n_arrows)
    arrows = direction_segments(ax, ay, *field_on_grid(request, ax, ay), request.box)
    if stop():
        return None
    nullclines = {request.x: zero_contour(xs, ys, u), request.y: zero_contour(xs, ys, v)}
    found, points = plane_equilibria(request)
    return PhasePlane(request, xs, ys, u, v, nullclines, arrows, found, points)


_BACKWARD: dict[type, type] = {}


def backward_model(model: dl.Model) -> dl.Model:
    """The same model with its vector field negated: its runs go back in time."""
    cls = type(model)
    back = _BACKWARD.get(cls)
    if back is None:
        body = {"__module__": __name__, "__qualname__": f"{cls.__qualname__}Backward"}
        if cls.vector_field is dl.HamiltonianModel.vector_field:
            # leapfrog steps these two directly; the vector field is made of them
            body["dq_dt"] = lambda self, p: -cls.dq_dt(self, p)
            body["dp_dt"] = lambda self, q: -cls.dp_dt(self, q)
        else:
            body["vector_field"] = lambda self, t, y: -cls.vector_field(self, t, y)
        back = _BACKWARD[cls] = type(f"{cls.__name__}Backward", (cls,), body)
    fields = [f.name for f in dataclasses.fields(model)]
    new = object.__new__(back)
    for name in fields:
        object.__setattr__(new, name, getattr(model, name))
    return new


@dataclasses.dataclass(frozen=True)
class Orbit:
    """The runs from ``state`` forward and backward in time (the backward run's ``ts``
    count time back from ``t0``)."""

    state: np.ndarray
    forward: dl.Trajectory
    backward: dl.Trajectory

    def xy(self, request: PhasePlaneRequest, which: str = "forward"):
        """The plane coordinates of one run, non-finite points dropped."""
        run = getattr(self, which)
        i, j = request.axes
        ys = np.asarray(run.ys, dtype=float)
        keep = np.all(np.isfinite(ys[:, [i, j]]), axis=1)
        return ys[keep, i], ys[keep, j]


def orbit_from(request: PhasePlaneRequest, x: float, y: float) -> Orbit:
    """Simulate from plane point ``(x, y)`` (other states held) forward and backward for
    the run settings' time span, as :func:`difflab.simulate` does for a run."""
    state = request.state_at(x, y)
    settings = request.settings
    kwargs = {k: v for k, v in settings.simulate_kwargs(request.model).items() if v is not None}
    forward = dl.simulate(request.model, settings.t1, y0=state, throw=False, **kwargs)
    backward = dl.simulate(backward_model(request.model), settings.t1, y0=state, throw=False,
                           **kwargs)
    return Orbit(state, forward, backward)
