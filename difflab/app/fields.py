"""Field models in the app, Qt-free: what to run, its frames, how to colour them, painting.

A :class:`FieldSession` holds one field model (its parameters and grid of one, two or
three axes), the frames of its run so far (frame 0 is the initial state), how they are
shown (fields shown, colour maps, held levels) and the commands that change them. A
run streams: :meth:`FieldSession.run_request` says what to advance, :func:`stream_frames`
advances it in chunks of frames off the GUI thread, :meth:`FieldSession.accept` takes each
chunk back. Painting a disc into a frame (:func:`paint_disc`) is undoable on the lab's
undo stack; the frames after it are dropped, and a run under way continues from it.
A brush stroke (:meth:`FieldSession.begin_stroke`, ``stroke``, ``end_stroke``) paints a
disc at every point of a drag and is one undo step.

The session is part of the lab's document: :meth:`FieldSession.snapshot` is its run as a
:class:`~difflab.solvers.FieldTrajectory`, :meth:`FieldSession.view_settings` how it is
shown, and :meth:`FieldSession.load` brings both back from a session file; its last field
sweep (:meth:`FieldSession.set_sweep`) is saved and read back with them. ``edits``
counts its changes, so a save writes the run only when it changed.

The session answers what :class:`difflab.gui.parameters.ParameterPanel` asks of a lab
(``model_name``, ``params``, ``specs``, ``set_param``, ``events.params``, ...), so the
same sliders edit a field model's parameters.
"""

import dataclasses
import itertools
import math
import time

import equinox as eqx
import jax
import numpy as np

import difflab as dl

from .events import EmitterGroup
from .field_frames import colour_map, disc_cells, levels, paint_disc
from .undo import Command, UndoStack

FIELD_EVENTS = {
    "model": "name: the field model or its grid was switched (frames reset)",
    "params": "changed: dict of parameter values that changed",
    "frames": "start: index of the first frame that changed (frames from it on are new); "
              "edited: True where a frame was painted (or its painting undone)",
    "log": "level, text",
    "view": "the fields shown, their colour maps, held levels or arrows changed",
    "sweep": "the session's field sweep was made or read from a file",
}
#: the name of the app's field run in a session file
FIELD_RUN = "fields"
#: the name of the app's field sweep in a session file
FIELD_SWEEP = "field_sweep"
DEFAULT_POINTS_BY_AXES = {1: 128, 2: 64, 3: 24}
DEFAULT_POINTS = 64
DEFAULT_FRAMES = 101
FRAMES_PER_CHUNK = 4
FRAME_MEMORY = 256 * 2**20  # bytes of frames a run keeps at most
#: (t1, dt) per model: long enough to see it happen; dt None: the solver's default
RUN_SPANS = {"gray_scott": (4000.0, 1.0), "diffusion": (5.0, None), "wave": (1.0, None),
             "allen_cahn": (20.0, None), "heat1d": (2.0, 0.002)}  # imex2: dt for accuracy
DEFAULT_SPAN = (10.0, None)


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
        arrays = {name: np.array(np.asarray(u)[1:]) for name, u in run.fields.items()}
        keep = [j for j, v in enumerate(ts) if v <= end]
        frames = tuple({name: a[j] for name, a in arrays.items()} for j in keep)
        yield FrameChunk(request.serial, tuple(ts[j] for j in keep), frames,
                         "" if run.ok else f"{run.message} after t = {t:g}")
        if not run.ok:
            return
        t, fields = ts[-1], frames[-1] if frames else fields


_LAST_STEPPER: list = []  # [(linear part's leaves, dt, stepper)] of the last run

#: ETDRK4's constructor as one compiled program, its step traced: a new linear part or
#: step costs the weights' arithmetic (7 ms at 128 x 128 on a CPU), not a dispatch per
#: operation (25 ms)
_make_etdrk4 = eqx.filter_jit(dl.solvers.ETDRK4)


def _etdrk4(linear, dt: float):
    """The ETDRK4 stepper of ``linear`` and ``dt``: the last run's where they are the
    same (a slider that moves a reaction rate leaves ``L`` as it was), so a re-solve
    does not compute the weights' contour integrals again."""
    leaves = [np.asarray(leaf) for leaf in jax.tree.leaves(linear)]
    for old, old_dt, stepper in _LAST_STEPPER:
        if old_dt == dt and len(old) == len(leaves) and all(
                a.shape == b.shape and np.array_equal(a, b) for a, b in zip(old, leaves)):
            return stepper
    stepper = _make_etdrk4(linear, np.asarray(dt, dtype=float))
    _LAST_STEPPER[:] = [(leaves, dt, stepper)]
    return stepper


def _chunk_runner(request: FieldRequest):
    """``advance(t, fields)``: the run of one chunk from ``t``. An exponential stepper's
    weights are computed once per request, not at every chunk, where the frames fall on
    whole steps of a fixed ``dt``."""
    model, span, frames = request.model, request.chunk * request.interval, request.chunk + 1
    steps = request.interval / request.dt if request.dt else 0.5
    if model.default_solver == "etdrk4" and abs(steps - round(steps)) < 1e-9 * steps:
        stepper = _etdrk4(model.linear_part(), request.dt)
        return lambda t, fields: dl.solvers.simulate_fields(
            model, t + span, t0=t, fields=fields, dt=request.dt, frames=frames,
            solver=stepper, throw=False)
    return lambda t, fields: dl.simulate(model, t + span, t0=t, y0=fields, dt=request.dt,
                                         n_save=frames, throw=False)


class FieldSession:
    """A field model, its parameters and grid, and the frames of its run (see the module)."""

    def __init__(self, lab=None, model: str | None = "gray_scott",
                 points: int = DEFAULT_POINTS, ndim: int = 2):
        """``model`` ``None``: nothing is selected until :meth:`load` brings a run."""
        self.lab = lab
        self.undo_stack = lab.undo_stack if lab is not None else UndoStack()
        self.events = EmitterGroup(FIELD_EVENTS)
        self._ids = itertools.count()
        self._serial = 0
        self.edits, self.saved_edits = 1, 0  # unsaved until saved or loaded
        self.run_name = FIELD_RUN  # the run's name in the file it was saved to or read from
        self._stroke = None
        self.failure, self.run_seconds = "", None  # of the last run: why it stopped, its wall time
        self._run_started = None
        self.model_name, self.params, self.ndim = None, {}, int(ndim)
        self.shown, self.maps, self.held_levels = (), {}, {}
        self.arrows = False  # the velocity drawn as arrows (where the model has one)
        self.sweep, self.sweep_name, self.sweep_saved = None, FIELD_SWEEP, True
        self.points = int(points)
        if lab is not None:
            lab.field_session = self  # saved and opened with the lab's file
        if model is not None:
            self.select_model(model, ndim=ndim)
            self.saved_edits = 0

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

    def select_model(self, name: str, points: int | None = None,
                     ndim: int | None = None) -> None:
        """Switch to field model ``name`` (at its defaults; the same model keeps its
        values) on ``points`` per axis of ``ndim`` axes (default: as now, where the model
        allows it, else its first)."""
        cls = self.model_class(name)
        ndim = int(ndim or self.ndim)
        if ndim not in cls.dimensions:
            if ndim == self.ndim and points is None:
                ndim = 2 if 2 in cls.dimensions else cls.dimensions[0]
            else:
                raise ValueError(f"{name} is written for {cls.dimensions} axes, not {ndim}")
        if ndim != self.ndim and points is None:
            points = DEFAULT_POINTS_BY_AXES[ndim]
        self.points, self.ndim = int(points or self.points), ndim
        defaults = {n: float(s.default) for n, s in cls.parameter_specs().items()}
        same = name == self.model_name
        self.params = self.params if same else defaults  # a new grid
        self.model_name = name
        self._base = cls().with_points((self.points,) * ndim)
        self.t1, self.dt = RUN_SPANS.get(name, DEFAULT_SPAN)
        self.n_frames = self._frames_that_fit()
        if not same:
            self.shown, self.maps, self.held_levels = self.field_names, {}, {}
        self._set_frames([0.0], [{k: np.array(v, dtype=float) for k, v in
                                  self._base.initial_fields().items()}], name)

    def start_afresh(self) -> None:
        """A new session (File > New, or another file opened): the model's defaults and
        initial fields, with nothing to save until they change."""
        self.set_sweep(None, saved=True)
        if self.model_name is not None:
            name, self.model_name = self.model_name, None
            self.select_model(name)
        self.saved_edits = self.edits

    def set_sweep(self, result, *, saved: bool = False, name: str = FIELD_SWEEP) -> None:
        """Keep ``result`` (a field sweep, ``None``: none) as the session's sweep, saved
        with it as ``/sweeps/<name>``; ``saved``: as read from the file."""
        self.sweep, self.sweep_name, self.sweep_saved = result, name, saved
        if not saved:
            self._changed(run=False)
        self.events.sweep.emit()

    def _set_frames(self, ts, frames, name: str, loaded: bool = False) -> None:
        """New frames of model ``name``; ``loaded``: read from a file, not to re-solve."""
        self.ts, self.frames = list(ts), list(frames)
        self.frame_ids = [next(self._ids) for _ in self.frames]
        self._changed()
        self.events.model.emit(name=name, catalog=False)
        self.events.params.emit(changed=dict(self.params), loaded=loaded)
        self.events.frames.emit(start=0, edited=False)
        self.events.view.emit()

    def _frames_that_fit(self) -> int:
        frame = 8 * len(self._base.field_names) * int(np.prod(self.grid.shape))
        return int(max(2, min(DEFAULT_FRAMES, FRAME_MEMORY // frame)))

    def _changed(self, run: bool = True) -> None:
        """Count a change of the run (or only of its view): the lab's file is unsaved."""
        self.edits += run
        if self.lab is not None:
            self.lab.mark_dirty()

    # -- how the fields are shown ----------------------------------------------------------

    def set_view(self, *, shown=None, maps: dict | None = None,
                 held_levels: dict | None = None, arrows: bool | None = None) -> None:
        """Choose the fields shown, colour maps by field (``None``: automatic), held
        levels by field (``None``: each frame's range) and whether arrows are drawn."""
        if shown is not None:
            unknown = set(shown) - set(self.field_names)
            if unknown or not shown:
                raise ValueError(f"show some of {', '.join(self.field_names)}, not {shown}")
            self.shown = tuple(n for n in self.field_names if n in shown)
        for store, values in ((self.maps, maps), (self.held_levels, held_levels)):
            for name, value in (values or {}).items():
                if value is None:
                    store.pop(name, None)
                else:
                    store[name] = value if isinstance(value, str) else tuple(map(float, value))
        if arrows is not None:
            self.arrows = bool(arrows)
        self._changed(run=False)
        self.events.view.emit()

    def colour_map(self, name: str, values: np.ndarray) -> str:
        """The colour map of field ``name``: the one chosen, else by the sign of ``values``."""
        return self.maps.get(name) or colour_map(values)

    def levels(self, name: str, values: np.ndarray) -> tuple[float, float]:
        """The colour range of field ``name``: held, else that of ``values``."""
        return self.held_levels.get(name) or levels(values)

    # -- the session file --------------------------------------------------------------------

    def view_settings(self) -> dict:
        """Model, grid, parameters, run span and view as JSON-ready values."""
        return {"run": self.run_name, "model": self.model_name, "points": list(self.grid.points),
                "params": dict(self.params), "t1": self.t1, "dt": self.dt,
                "n_frames": self.n_frames, "shown": list(self.shown), "maps": dict(self.maps),
                "levels": {n: list(v) for n, v in self.held_levels.items()},
                "arrows": self.arrows}

    def snapshot(self):
        """The frames as a :class:`~difflab.solvers.FieldTrajectory` of the current model."""
        settings = {"t1": float(self.t1), "n_save": len(self.ts),
                    **({"dt": float(self.dt)} if self.dt else {})}
        return dl.solvers.FieldTrajectory(
            np.asarray(self.ts, dtype=float),
            {n: np.stack([f[n] for f in self.frames]) for n in self.field_names},
            self.grid, self.model.default_solver, model=self.model,
            settings=tuple(settings.items()))

    @property
    def unsaved(self) -> bool:
        """Whether the run changed since it was saved or read."""
        return self.edits != self.saved_edits

    def load(self, run, settings: dict | None = None, name: str = FIELD_RUN) -> None:
        """Show the field run ``run`` (a ``FieldTrajectory`` of a built-in model, as read
        from a file) with the view ``settings`` of :meth:`view_settings`; the run counts
        as saved, under ``name``. ``ValueError`` if DiffLab cannot build its model."""
        settings = settings if isinstance(settings, dict) else {}
        model = run.model
        model_name = getattr(type(model), "registry_name", None)
        if model_name not in dl.models.field_models():
            raise ValueError(f"the field run's model {getattr(model, 'name', model_name)!r} "
                             "is not a built-in field model")
        cls = self.model_class(model_name)
        self.model_name, self.ndim = model_name, run.grid.ndim
        self.points = int(run.grid.points[0])
        self.params = {n: float(np.asarray(getattr(model, n))) for n in cls.parameter_specs()}
        self._base = model
        spans = RUN_SPANS.get(model_name, DEFAULT_SPAN)
        ts = [float(t) for t in np.asarray(run.ts)]
        self.t1 = float(settings.get("t1") or dict(run.settings or ()).get("t1") or ts[-1])
        self.dt = settings.get("dt", spans[1])
        self.n_frames = int(settings.get("n_frames") or len(ts))
        arrays = {n: np.asarray(run.fields[n][:], dtype=float) for n in self.field_names}
        frames = [{n: a[k] for n, a in arrays.items()} for k in range(len(ts))]
        shown = [n for n in settings.get("shown") or () if n in self.field_names]
        self.shown = tuple(shown) or self.field_names
        self.maps = {n: m for n, m in (settings.get("maps") or {}).items()
                     if n in self.field_names and isinstance(m, str)}
        self.held_levels = {n: tuple(map(float, v)) for n, v in
                            (settings.get("levels") or {}).items()
                            if n in self.field_names and len(v) == 2}
        self.arrows = settings.get("arrows") is True
        self._set_frames(ts, frames, cls.registry_name, loaded=True)
        self.saved_edits, self.run_name = self.edits, name

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
        self._changed()
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
        self.failure, self.run_seconds, self._run_started = "", None, time.perf_counter()
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
        if chunk.frames:
            self._changed()
        self.run_seconds = time.perf_counter() - self._run_started
        self.failure = chunk.failure
        if chunk.failure:
            self.events.log.emit(level="error", text=f"{self.model_name}: {chunk.failure}")
        if chunk.frames:
            self.events.frames.emit(start=start, edited=False)
        return True

    def status_text(self, running: bool = False) -> str:
        """The status line of the run: model and grid, frames and time reached (of t1),
        steps of a fixed dt, solver, wall time; why it stopped if it failed."""
        head = f"{self.model_name} on {' x '.join(map(str, self.grid.points))}"
        if self.failure:
            return f"{head}: {self.failure}"
        t, frames = self.ts[-1], len(self.frames)
        reached = f"{frames} frame{'s' * (frames != 1)} to t = {t:.6g}" + (
            "" if self.complete else f" of {self.t1:g}")
        steps = (f", {round((t - self.ts[0]) / self.dt)} steps of dt = {self.dt:g}"
                 if self.dt else "")
        wall = f" in {self.run_seconds:.2f} s" if self.run_seconds and not running else ""
        state = "running, " if running else ""
        return f"{head}: {state}{reached}{steps}{wall}, {self.model.default_solver}"

    def _truncate(self, keep: int) -> None:
        if keep + 1 < len(self.frames):
            del self.ts[keep + 1:], self.frames[keep + 1:], self.frame_ids[keep + 1:]
            self._changed()
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

    def begin_stroke(self, frame: int, name: str, centre, radius: float,
                     value: float) -> None:
        """Start a brush stroke in field ``name`` of ``frame`` with a disc at ``centre``;
        :meth:`stroke` paints on along the drag, :meth:`end_stroke` makes it one undo step."""
        if not math.isfinite(float(value)) or not radius >= 0:
            raise ValueError(f"a brush needs a finite value and a radius >= 0, not "
                             f"{value} and {radius}")
        self._stroke = {"token": self.frame_ids[frame], "field": name, "radius": float(radius),
                        "value": float(value), "before": self.frames[frame][name],
                        "cells": set(), "last": tuple(map(float, centre))}
        self._stroke_to(centre)

    def stroke(self, point) -> None:
        """Paint along the drag to ``point``: discs along the way, none far apart."""
        if self._stroke is not None:
            self._stroke_to(point)

    def end_stroke(self) -> int:
        """Finish the stroke as one undoable step; returns the number of cells painted."""
        stroke, self._stroke = self._stroke, None
        if stroke is None or stroke["token"] not in self.frame_ids or not stroke["cells"]:
            return 0
        frame = self.frame_ids.index(stroke["token"])
        cells = np.array(sorted(stroke["cells"]), dtype=np.int64)
        state = {"token": stroke["token"], "field": stroke["field"], "cells": cells}
        after = self.frames[frame][stroke["field"]].flat[cells]
        self.undo_stack.push(Command(f"Paint {stroke['field']} = {stroke['value']:g} (stroke)",
                                     {**state, "values": stroke["before"].flat[cells]},
                                     {**state, "values": after}, self._put_cells))
        return int(cells.size)

    def _stroke_to(self, point) -> None:
        stroke = self._stroke
        if stroke["token"] not in self.frame_ids:  # the frame was dropped meanwhile
            self._stroke = None
            return
        start, end = np.asarray(stroke["last"]), np.asarray(point, dtype=float)
        step = max(min(self.grid.spacing), stroke["radius"] / 2)
        n = max(1, math.ceil(np.linalg.norm(end - start) / step))
        cells = np.unique(np.concatenate([
            disc_cells(self.grid, start + (end - start) * k / n, stroke["radius"])
            for k in range(n + 1)]))
        stroke["cells"].update(cells.tolist())
        stroke["last"] = tuple(end)
        frame = self.frame_ids.index(stroke["token"])
        field = np.array(self.frames[frame][stroke["field"]], dtype=float, copy=True)
        field.flat[cells] = stroke["value"]
        self.frames[frame] = {**self.frames[frame], stroke["field"]: field}
        self._changed()
        self._truncate(frame)
        self.events.frames.emit(start=frame, edited=True)

    def _put_cells(self, state: dict) -> None:
        if state["token"] not in self.frame_ids:
            self._stale(f"the frame of {state['field']} painted")
            return
        frame = self.frame_ids.index(state["token"])
        field = np.array(self.frames[frame][state["field"]], copy=True)
        field.flat[state["cells"]] = state["values"]
        self.frames[frame] = {**self.frames[frame], state["field"]: field}
        self._changed()
        self._truncate(frame)
        self.events.frames.emit(start=frame, edited=True)

    def _stale(self, what: str) -> None:
        self.events.log.emit(level="warning",
                             text=f"nothing to undo: {what} is no longer shown")
