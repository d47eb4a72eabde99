"""Field models in the app, Qt-free: what to run, its frames, how to colour them, painting.

A :class:`FieldSession` holds one 2-D field model (its parameters and grid), the frames
of its run so far (frame 0 is the initial state) and the commands that change them. A
run streams: :meth:`FieldSession.run_request` says what to advance, :func:`stream_frames`
advances it in chunks of frames off the GUI thread, :meth:`FieldSession.accept` takes each
chunk back. Painting a disc into a frame (:func:`paint_disc`) is undoable on the lab's
undo stack; the frames after it are dropped, and a run under way continues from it.

The session answers what :class:`difflab.gui.parameters.ParameterPanel` asks of a lab
(``model_name``, ``params``, ``specs``, ``set_param``, ``events.params``, ...), so the
same sliders edit a field model's parameters.
"""

import dataclasses
import itertools
import math

import numpy as np

import difflab as dl

from .events import EmitterGroup
from .undo import Command, UndoStack

FIELD_EVENTS = {
    "model": "name: the field model or its grid was switched (frames reset)",
    "params": "changed: dict of parameter values that changed",
    "frames": "start: index of the first frame that changed (frames from it on are new); "
              "edited: True where a frame was painted (or its painting undone)",
    "log": "level, text",
}
SEQUENTIAL_MAP = "viridis"
DIVERGING_MAP = "CET-D1A"  # blue-white-red, perceptually uniform (colorcet D1A)
SIGNED_SHARE = 0.01  # signed: its smaller side is more than this share of the larger
DEFAULT_POINTS = 64
DEFAULT_FRAMES = 101
FRAMES_PER_CHUNK = 4
FRAME_MEMORY = 256 * 2**20  # bytes of frames a run keeps at most
#: (t1, dt) per model: long enough to see it happen; dt None: the solver's default
RUN_SPANS = {"gray_scott": (4000.0, 1.0), "diffusion": (5.0, None), "wave": (1.0, None),
             "allen_cahn": (20.0, None)}
DEFAULT_SPAN = (10.0, None)


def plane_models() -> list[str]:
    """The registered field models written for grids of two axes."""
    return [name for name in dl.models.field_models()
            if 2 in dl.models.get(name).dimensions]


def is_signed(values: np.ndarray) -> bool:
    """Whether a field takes both signs in earnest (not a rounding error below zero)."""
    finite = values[np.isfinite(values)]
    if not finite.size:
        return False
    lo, hi = float(finite.min()), float(finite.max())
    return lo < 0.0 < hi and min(-lo, hi) > SIGNED_SHARE * max(-lo, hi)


def colour_map(values: np.ndarray) -> str:
    """A diverging map for a signed field (centred at 0), a sequential one otherwise."""
    return DIVERGING_MAP if is_signed(values) else SEQUENTIAL_MAP


def levels(values: np.ndarray) -> tuple[float, float]:
    """The colour range of a frame: its finite range, symmetric about 0 for a signed
    field; a constant field gets +-10 % around its value (+-1 around 0)."""
    finite = values[np.isfinite(values)]
    if not finite.size:
        return (0.0, 1.0)
    lo, hi = float(finite.min()), float(finite.max())
    if is_signed(values):
        top = max(-lo, hi)
        return (-top, top)
    if hi - lo > 1e-12 * max(abs(lo), abs(hi), 1e-300):
        return (lo, hi)
    half = 0.1 * abs(lo) if lo else 1.0
    return (lo - half, lo + half)


def image_rect(grid) -> tuple[float, float, float, float]:
    """``(x0, y0, width, height)`` of a 2-D grid's image: each cell centred on its point."""
    (x0, y0), (hx, hy) = (grid.axis_coordinates(0)[0], grid.axis_coordinates(1)[0]), grid.spacing
    return (float(x0 - hx / 2), float(y0 - hy / 2), grid.points[0] * hx, grid.points[1] * hy)


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


@dataclasses.dataclass(frozen=True)
class FieldRequest:
    """What to advance: ``model`` from ``fields`` at ``t0`` to ``t1``, a frame every
    ``interval``, ``chunk`` frames per program call; ``serial`` names it."""

    serial: int
    model: object
    fields: dict
    t0: float
    t1: float
    interval: float
    dt: float | None
    chunk: int = FRAMES_PER_CHUNK


@dataclasses.dataclass(frozen=True)
class FrameChunk:
    """Frames made for request ``serial``: ``ts`` and ``frames`` (dicts of arrays);
    ``failure``: why the run stopped, in words (``""`` when it did not)."""

    serial: int
    ts: tuple
    frames: tuple
    failure: str = ""


def stream_frames(request: FieldRequest, stop=lambda: False):
    """Advance ``request`` chunk by chunk, yielding a :class:`FrameChunk` each. Every
    chunk is one call of the same compiled program (only ``t0`` and the fields change);
    frames past ``t1`` are dropped."""
    t, fields = request.t0, request.fields
    end = request.t1 + 1e-9 * request.interval
    advance = _chunk_runner(request)
    while t < end - request.interval and not stop():
        run = advance(t, fields)
        ts = [float(v) for v in np.asarray(run.ts)[1:]]
        arrays = {name: np.array(u[1:]) for name, u in run.fields.items()}
        keep = [j for j, v in enumerate(ts) if v <= end]
        frames = tuple({name: a[j] for name, a in arrays.items()} for j in keep)
        yield FrameChunk(request.serial, tuple(ts[j] for j in keep), frames,
                         "" if run.ok else f"{run.message} after t = {t:g}")
        if not run.ok:
            return
        t, fields = ts[-1], frames[-1] if frames else fields


def _chunk_runner(request: FieldRequest):
    """``advance(t, fields)``: the run of one chunk from ``t``. An exponential stepper's
    weights are computed once per request, not at every chunk, where the frames fall on
    whole steps of a fixed ``dt``."""
    model, span, frames = request.model, request.chunk * request.interval, request.chunk + 1
    steps = request.interval / request.dt if request.dt else 0.5
    if model.default_solver == "etdrk4" and abs(steps - round(steps)) < 1e-9 * steps:
        stepper = dl.solvers.ETDRK4(model.linear_part(), request.dt)
        return lambda t, fields: dl.solvers.simulate_fields(
            model, t + span, t0=t, fields=fields, dt=request.dt, frames=frames,
            solver=stepper, throw=False)
    return lambda t, fields: dl.simulate(model, t + span, t0=t, y0=fields, dt=request.dt,
                                         n_save=frames, throw=False)


class FieldSession:
    """A field model, its parameters and grid, and the frames of its run (see the module)."""

    def __init__(self, lab=None, model: str = "gray_scott", points: int = DEFAULT_POINTS):
        self.lab = lab
        self.undo_stack = lab.undo_stack if lab is not None else UndoStack()
        self.events = EmitterGroup(FIELD_EVENTS)
        self._ids = itertools.count()
        self._serial = 0
        self.model_name, self.params = None, {}
        self.points = int(points)
        self.select_model(model)

    # -- the model (what ParameterPanel asks of a lab) ----------------------------------

    def model_class(self, name: str):
        return dl.models.get(name)

    @property
    def specs(self) -> dict:
        return self.model_class(self.model_name).parameter_specs()

    @property
    def model(self):
        """The chosen model with the current parameters, on the session's grid."""
        return self._base.replace(**self.params)

    @property
    def grid(self):
        return self._base.grid

    @property
    def field_names(self) -> tuple[str, ...]:
        return tuple(self._base.field_names)

    def select_model(self, name: str, points: int | None = None) -> None:
        """Switch to field model ``name`` (at its defaults; the same model keeps its
        values) on ``points`` per axis."""
        cls = self.model_class(name)
        if 2 not in cls.dimensions:
            raise ValueError(f"{name} is written for {cls.dimensions} axes; the field view "
                             "shows models of two axes")
        self.points = int(points or self.points)
        defaults = {n: float(s.default) for n, s in cls.parameter_specs().items()}
        self.params = self.params if name == self.model_name else defaults  # a new grid
        self.model_name = name
        self._base = cls().with_points((self.points, self.points))
        self.t1, self.dt = RUN_SPANS.get(name, DEFAULT_SPAN)
        self.n_frames = self._frames_that_fit()
        self.ts = [0.0]
        self.frames = [{k: np.array(v, dtype=float) for k, v in
                        self._base.initial_fields().items()}]
        self.frame_ids = [next(self._ids)]
        self.events.model.emit(name=name, catalog=False)
        self.events.params.emit(changed=dict(self.params))
        self.events.frames.emit(start=0, edited=False)

    def _frames_that_fit(self) -> int:
        frame = 8 * len(self._base.field_names) * self.points**2
        return int(max(2, min(DEFAULT_FRAMES, FRAME_MEMORY // frame)))

    @property
    def interval(self) -> float:
        """The time between frames."""
        return self.t1 / (self.n_frames - 1)

    # -- parameters (undoable) -----------------------------------------------------------

    def set_param(self, name: str, value: float, *, merge_key=None) -> None:
        self.set_params({name: value}, merge_key=merge_key)

    def set_params(self, values: dict, *, merge_key=None, text: str | None = None) -> None:
        """Set parameters as one undoable step (``merge_key``: a slider drag is one step)."""
        specs = self.specs
        for name, value in values.items():
            if name not in specs:
                raise ValueError(f"{self.model_name} has no parameter {name!r}")
            if not math.isfinite(float(value)):
                raise ValueError(f"{name} must be a finite number, got {value}")
        changed = {n: float(v) for n, v in values.items() if float(v) != self.params[n]}
        if not changed:
            return
        state = {"model": self.model_name, "token": self.frame_ids[0]}
        before = {**state, "params": {n: self.params[n] for n in changed}}
        text = text or "Set " + ", ".join(f"{n} = {v:.6g}" for n, v in changed.items())
        command = Command(f"{text} ({self.model_name})", before, {**state, "params": changed},
                          self._restore_params, merge_key)
        command.redo()
        self.undo_stack.push(command)

    def reset_params(self) -> None:
        cls = self.model_class(self.model_name)
        self.set_params({n: float(s.default) for n, s in cls.parameter_specs().items()},
                        text="Reset parameters")

    def _restore_params(self, state: dict) -> None:
        if state["token"] != self.frame_ids[0]:
            self._stale(f"parameters of {state['model']}")
            return
        self.params.update(state["params"])
        self.events.params.emit(changed=dict(state["params"]))

    # -- runs ----------------------------------------------------------------------------

    @property
    def complete(self) -> bool:
        """Whether the frames reach ``t1``."""
        return self.ts[-1] >= self.t1 - 1e-9 * self.interval

    def run_request(self, start: int = 0) -> FieldRequest:
        """Advance from frame ``start`` (0: the initial state) to ``t1``; the frames after
        it are dropped, and chunks of earlier requests are refused from now on."""
        self._truncate(start)
        self._serial += 1
        return FieldRequest(self._serial, self.model, dict(self.frames[start]),
                            self.ts[start], self.t1, self.interval, self.dt)

    def accept(self, chunk: FrameChunk) -> bool:
        """Append the frames of the newest request's chunk; False for an older request's."""
        if chunk.serial != self._serial:
            return False
        start = len(self.frames)
        self.ts.extend(chunk.ts)
        self.frames.extend(chunk.frames)
        self.frame_ids.extend(next(self._ids) for _ in chunk.frames)
        if chunk.failure:
            self.events.log.emit(level="error", text=f"{self.model_name}: {chunk.failure}")
        if chunk.frames:
            self.events.frames.emit(start=start, edited=False)
        return True

    def _truncate(self, keep: int) -> None:
        if keep + 1 < len(self.frames):
            del self.ts[keep + 1:], self.frames[keep + 1:], self.frame_ids[keep + 1:]
            self.events.frames.emit(start=keep + 1, edited=False)

    # -- painting (undoable) -------------------------------------------------------------

    def paint(self, frame: int, name: str, centre, radius: float, value: float) -> int:
        """Paint a disc of ``value`` into field ``name`` of ``frame`` (undoable); the frames
        after it are dropped. Returns the number of cells painted."""
        if not math.isfinite(float(value)) or not radius >= 0:
            raise ValueError(f"a brush needs a finite value and a radius >= 0, not "
                             f"{value} and {radius}")
        old = self.frames[frame][name]
        painted, cells = paint_disc(old, self.grid, centre, float(radius), float(value))
        state = {"token": self.frame_ids[frame], "field": name, "cells": cells}
        command = Command(f"Paint {name} = {value:g}", {**state, "values": old.flat[cells]},
                          {**state, "values": painted.flat[cells]}, self._put_cells)
        command.redo()
        self.undo_stack.push(command)
        return int(cells.size)

    def _put_cells(self, state: dict) -> None:
        if state["token"] not in self.frame_ids:
            self._stale(f"the frame of {state['field']} painted")
            return
        frame = self.frame_ids.index(state["token"])
        field = np.array(self.frames[frame][state["field"]], copy=True)
        field.flat[state["cells"]] = state["values"]
        self.frames[frame] = {**self.frames[frame], state["field"]: field}
        self._truncate(frame)
        self.events.frames.emit(start=frame, edited=True)

    def _stale(self, what: str) -> None:
        self.events.log.emit(level="warning",
                             text=f"nothing to undo: {what} is no longer shown")
