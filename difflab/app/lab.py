"""The lab: the Qt-free state of one app session and the commands that change it.

The GUI draws a :class:`Lab` and calls its commands; tests and scripts drive the same
object without a display::

    lab = Lab("pendulum")
    lab.events.current.connect(lambda e: print(e.run.ys[-1]))
    lab.set_param("g", 3.7)       # undoable
    lab.solve_now()               # what the app's worker does off the GUI thread
    lab.undo()

State: the chosen model and its parameter values, the run settings, the current run
(the curve of the current values), the named runs kept for comparison, the sweep, fit
and sensitivity results, the plot layout, the file the session belongs to and whether it
has unsaved changes. Each change emits an event on ``lab.events`` (see :data:`EVENTS`).
Runs and results are the classes the solvers return and session files store
(:class:`difflab.Trajectory`, :class:`difflab.SweepResult`, :class:`difflab.FitResult`,
:class:`difflab.Sensitivity`); what only the app knows of them (which runs are hidden)
the lab keeps beside them.

The session is a document of named objects (``("run", "base")``, ``("fit", "fit0")``):
``changed`` and ``deleted`` say which the lab added, replaced or deleted since its file
was read or written, so a save touches only those (:mod:`difflab.app.session_io`).
"""

import dataclasses
import math
import re

import numpy as np

import difflab as dl

from .events import EmitterGroup
from .layout import PlotLayout
from .runs import (
    RunSettings,
    SolveRequest,
    complete,
    describe_failure,
    format_params,
    on_host,
    solve,
)
from .undo import Command, UndoStack

#: Events a Lab emits, and their fields.
EVENTS = {
    "model": "name: the model was switched (parameters reset to its values)",
    "params": "changed: dict of parameter values that changed",
    "settings": "settings: the new RunSettings",
    "current": "run: the current run was replaced (partial while streaming)",
    "runs": "names: the kept runs were added, deleted, renamed or shown/hidden",
    "layout": "layout: the plot layout changed",
    "dirty": "dirty: bool, unsaved changes or not",
    "path": "path: the session file (None for a new session)",
    "undo": "can_undo, can_redo, undo_text, redo_text",
    "log": "level ('info', 'warning', 'error'), text",
    "results": "kind ('sweep', 'fit', 'sensitivity', 'analysis'), name: a result was added "
               "or deleted (kind None: all were cleared)",
}
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]{0,63}")
DEFAULT_MODEL = "pendulum"


class Lab:
    """One app session: model, parameters, settings, runs, layout, undo history, file."""

    def __init__(self, model: str = DEFAULT_MODEL, settings: RunSettings | None = None):
        self.events = EmitterGroup(EVENTS, error_handler=self._observer_failed)
        self.undo_stack = UndoStack(changed=self._undo_changed)
        self.user_models: dict[str, type[dl.Model]] = {}
        self.settings = settings or RunSettings()
        self.runs: dict[str, dl.Trajectory] = {}
        self.hidden: set[str] = set()  # kept runs not drawn
        self.results: dict[str, dict] = {"sweep": {}, "fit": {}, "sensitivity": {},
                                         "analysis": {}}
        self.current: dl.Trajectory | None = None
        self.changed: set[tuple[str, str]] = set()  # (kind, name) added or replaced
        self.deleted: set[tuple[str, str]] = set()  # (kind, name) deleted by the user
        self._removed: dict = {}  # (kind, name) -> the deleted object, which undo brings back
        self.path = None
        self.dirty = False
        self.field_session = None  # the field view's (difflab.app.fields), made when shown
        self.edits = 0  # counts the changes, so a save taken in the background knows its own
        self.messages: list[tuple[str, str]] = []
        self.gui_layout: dict = {}
        self.plot_points: int | None = None  # saved points on auto: what the plot shows
        self._last_failure: str | None = None  # logged once while it repeats
        self._bases: dict[str, dl.Model] = {}
        self._serial = 0
        self._applied = -1
        self._restore_model({"model": model, "params": None})
        self.settings = dataclasses.replace(self.settings, **self._unfit_settings())
        self.layout = PlotLayout.for_states(self.state_names)

    # -- models ---------------------------------------------------------------------

    def model_class(self, name: str) -> type[dl.Model]:
        """The class of a built-in or user model (``ValueError`` for unknown names)."""
        if name in self.user_models:
            return self.user_models[name]
        return dl.models.get(name)

    def catalog(self) -> dict[str, list[str]]:
        """Model names grouped by domain: the built-in library, then the user's models."""
        groups: dict[str, list[str]] = {}
        for name in dl.models.available():
            groups.setdefault(dl.models.get(name).domain, []).append(name)
        groups = dict(sorted(groups.items()))
        if self.user_models:
            groups["user"] = sorted(self.user_models)
        return groups

    def add_user_model(self, cls: type[dl.Model], name: str | None = None) -> str:
        """Make a user's model class available in the browser; returns its name.

        A class under a name already taken by a user model replaces it (a reloaded file).
        """
        name = name or cls.registry_name or cls.__name__
        if self.user_models.get(name) not in (None, cls):
            self.replace_user_model(name, cls)
            return name
        self.user_models[name] = cls
        self._bases.pop(name, None)
        self.events.model.emit(name=self.model_name, catalog=True)
        return name

    def replace_user_model(self, name: str, cls: type[dl.Model]) -> None:
        """A new class for user model ``name`` (its file changed), keeping the values of the
        parameters that still exist. The undo history is cleared when it is the current
        model: its edits may name parameters the new class does not have."""
        self.user_models[name] = cls
        self._bases.pop(name, None)
        if name != self.model_name:
            self.events.model.emit(name=self.model_name, catalog=True)
            return
        kept = dl.models.carry_parameters(self.params, cls).parameters()
        params = {k: float(v) for k, v in kept.items() if getattr(v, "ndim", 0) == 0}
        self.model_name = None  # a new class: rebuild what shows the model
        self._restore_model({"model": name, "params": params})
        self.undo_stack.clear()

    def model_from_record(self, record) -> dl.Model | None:
        """The model a session file's :class:`~difflab.io.ModelRecord` describes, or None.

        Built-in and equation models are rebuilt (equations are parsed, never run). A
        Python model file's class is the one loaded here, else its stored text is run only
        if the user trusts that content (``difflab trust``, the app's prompt); its class
        then joins the user models. Otherwise None: DiffLab runs no code from a file. A
        built-in model whose settings changed since the file was written is None too (logged).
        """
        if record.origin == "builtin":
            try:
                return record.build()
            except ValueError as error:
                self.log(f"{error}: its data is shown", "warning")
                return None
        cls = self.user_models.get(record.name)
        if cls is None:
            from .trust import TrustStore

            try:
                cls = dl.models.from_source(record, trust=TrustStore())
            except (ValueError, PermissionError, OSError):  # untrusted, or it fails to load
                return None
            self.add_user_model(cls, record.name)
        return record.build(cls())

    def name_of(self, model) -> str:
        """The name under which the lab knows a model's class (or a stored model record)."""
        if isinstance(model, dl.io.ModelRecord):
            return model.name
        cls = type(model)
        for name, user in self.user_models.items():
            if user is cls:
                return name
        return cls.registry_name or cls.__name__

    def base_model(self, name: str) -> dl.Model:
        if name not in self._bases:
            self._bases[name] = self.model_class(name)()
        return self._bases[name]

    @property
    def specs(self) -> dict[str, dl.models.ParamSpec]:
        return self.model_class(self.model_name).parameter_specs()

    @property
    def model(self) -> dl.Model:
        """The chosen model with the current parameter values."""
        return self.base_model(self.model_name).replace(**self.params)

    @property
    def state_names(self) -> tuple[str, ...]:
        return tuple(self.base_model(self.model_name).state_names)

    def select_model(self, name: str) -> None:
        """Switch to model ``name`` at its default values (undoable)."""
        if name == self.model_name:
            return
        cls = self.model_class(name)
        before = {"model": self.model_name, "params": dict(self.params)}
        after = {"model": name, "params": self._defaults(cls)}
        self._do(Command(f"Select model {name}", before, after, self._restore_model))

    def _defaults(self, cls) -> dict[str, float]:
        return {n: float(s.default) for n, s in cls.parameter_specs().items()}

    def _restore_model(self, state: dict) -> None:
        name = state["model"]
        cls = self.model_class(name)
        switched = getattr(self, "model_name", None) != name
        self.model_name = name
        self.params = dict(state["params"] or self._defaults(cls))
        if switched:
            self.current = None
            if hasattr(self, "layout"):  # a switch, not the start
                self._settings_for_model()
            self.events.current.emit(run=None)
            if hasattr(self, "layout"):  # the new model's own states, the same view in front
                self.set_layout(PlotLayout.for_states(self.state_names, self.layout.view))
            self.events.model.emit(name=name, catalog=False)
        self.events.params.emit(changed=dict(self.params))

    # -- parameters (undoable) -------------------------------------------------------

    def set_param(self, name: str, value: float, *, merge_key=None) -> None:
        """Set one parameter; edits with the same ``merge_key`` undo as one step."""
        self.set_params({name: value}, merge_key=merge_key)

    def set_params(self, values: dict[str, float], *, merge_key=None, text: str | None = None) -> None:
        """Set several parameters at once, as one undoable step."""
        self.set_point(values, merge_key=merge_key, text=text)

    def set_point(self, params: dict[str, float], initial: dict[str, float] | None = None, *,
                  merge_key=None, text: str | None = None) -> None:
        """Set parameters and components of the initial state (by state name) at once, as
        one undoable step: a sweep's point."""
        clean = self._changed_params(params)
        before = {"model": self.model_name, "params": {n: self.params[n] for n in clean}}
        after = {"model": self.model_name, "params": clean}
        y0 = self._initial_with(initial) if initial else None
        if y0 is not None and y0 != self.initial_state:
            before["y0"], after["y0"] = self.settings.y0, y0
        if not clean and "y0" not in after:
            return
        starts = {f"{s}(0)": v for s, v in (initial or {}).items()} if "y0" in after else {}
        text = text or "Set " + ", ".join(f"{n} = {v:.6g}" for n, v in {**clean, **starts}.items())
        self._do(Command(text, before, after, self._restore_params, merge_key))

    def _changed_params(self, values: dict[str, float]) -> dict[str, float]:
        """``values`` checked, those that differ from the current ones."""
        specs, clean = self.specs, {}
        for name, value in values.items():
            if name not in specs:
                raise ValueError(f"{self.model_name} has no parameter {name!r}; its parameters "
                                 f"are {', '.join(specs) or 'none'}")
            value = float(value)
            if not math.isfinite(value):
                raise ValueError(f"{name} must be a finite number, got {value}")
            if value != self.params[name]:
                clean[name] = value
        return clean

    def _initial_with(self, values: dict[str, float]) -> tuple[float, ...]:
        """The initial state with the components ``values`` (by state name) replaced."""
        names, y0 = self.state_names, list(self.initial_state)
        for state, value in values.items():
            if state not in names:
                raise ValueError(f"{self.model_name} has no state {state!r}")
            if not math.isfinite(float(value)):
                raise ValueError(f"{state}(0) must be a finite number, got {value}")
            y0[names.index(state)] = float(value)
        return tuple(y0)

    def reset_params(self) -> None:
        """All parameters back to the model's defaults (undoable)."""
        self.set_params(self._defaults(self.model_class(self.model_name)), text="Reset parameters")

    def _restore_params(self, state: dict) -> None:
        if state["model"] != self.model_name:
            self._restore_model({"model": state["model"], "params": None})
        self.params.update(state["params"])
        self.events.params.emit(changed=dict(state["params"]))
        if "y0" in state:
            self.set_settings(y0=state["y0"])

    def _do(self, command: Command) -> None:
        command.redo()
        self.undo_stack.push(command)
        self.mark_dirty()

    def undo(self) -> str | None:
        """Take back the last parameter edit, model switch or delete; returns what it was."""
        text = self.undo_stack.undo()
        if text is not None:
            self.mark_dirty()
        return text

    def redo(self) -> str | None:
        text = self.undo_stack.redo()
        if text is not None:
            self.mark_dirty()
        return text

    def _undo_changed(self) -> None:
        s = self.undo_stack
        self.events.undo.emit(can_undo=s.can_undo, can_redo=s.can_redo,
                              undo_text=s.undo_text, redo_text=s.redo_text)

    # -- settings and layout --------------------------------------------------------

    def set_settings(self, **changes) -> None:
        """Change run settings (``t1``, ``dt``, ``solver``, ``n_save``, ``seed``, ``t0``)."""
        settings = dataclasses.replace(self.settings, **changes)
        if settings != self.settings:
            self.settings = settings
            self.events.settings.emit(settings=settings)
            self.mark_dirty()

    def _settings_for_model(self) -> None:
        """Drop the settings another model needed: its initial state, a solver this one
        cannot take."""
        changes = self._unfit_settings()
        if "solver" in changes:
            self.log(f"{self.settings.solver} cannot solve {self.model_name}: back to its "
                     "default solver", "warning")
        if changes:
            self.set_settings(**changes)

    def _unfit_settings(self) -> dict:
        """The settings changes the current model needs (``y0=None``, ``solver=None``)."""
        changes, y0 = {}, self.settings.y0
        if y0 is not None and (getattr(self, "layout", None) is not None
                               or len(y0) != len(self.state_names)):
            changes["y0"] = None
        solver, cls = self.settings.solver, self.model_class(self.model_name)
        if solver is not None and solver not in dl.solvers.solvers_for(cls):
            changes["solver"] = None
        return changes

    @property
    def initial_state(self) -> tuple[float, ...]:
        """The state runs start from: the settings' ``y0``, else the model's own."""
        if self.settings.y0 is not None:
            return self.settings.y0
        return tuple(float(v) for v in np.asarray(self.model.initial_state()))

    def set_initial(self, state: str, value: float) -> None:
        """Start runs with ``state`` at ``value`` (the other states kept)."""
        names = self.state_names
        if state not in names:
            raise ValueError(f"{self.model_name} has no state {state!r}")
        y0 = list(self.initial_state)
        y0[names.index(state)] = float(value)
        self.set_settings(y0=tuple(y0))

    def set_layout(self, layout: PlotLayout | None = None, **changes) -> None:
        layout = dataclasses.replace(layout or self.layout, **changes)
        if layout.time_states:
            layout.time_states = tuple(layout.time_states)
        if layout != getattr(self, "layout", None):
            self.layout = layout
            self.events.layout.emit(layout=layout)

    # -- the current run -------------------------------------------------------------

    def solve_request(self) -> SolveRequest:
        """A snapshot of what to simulate now, for a worker thread."""
        self._serial += 1
        return SolveRequest(self._serial, self.model, self.model_name, self.settings,
                            self.plot_points)

    def accept(self, run: dl.Trajectory, request: SolveRequest) -> bool:
        """Make ``run`` (made for ``request``) the current run unless a newer request's
        run is already shown."""
        if request.serial < self._applied or request.model_name != self.model_name:
            return False
        self._applied = request.serial
        self.current = run
        self._touch("run", "current")
        if complete(run) and not run.ok:
            self._log_failure(describe_failure(run, request.model_name))
        elif complete(run):
            self._last_failure = None
        self.events.current.emit(run=run)
        return True

    def _log_failure(self, text: str) -> None:
        """Log a failed run, once: the same failure again (another request) is not news."""
        if text != self._last_failure:
            self._last_failure = text
            self.log(text, "error")

    def solve_now(self) -> dl.Trajectory:
        """Simulate the current state on this thread and make it the current run."""
        request = self.solve_request()
        run = solve(request)
        self.accept(run, request)
        return run

    # -- kept runs -------------------------------------------------------------------

    def keep_current(self, name: str | None = None) -> str:
        """Keep the current run under ``name`` (default ``run0``, ``run1``, ...) for overlays."""
        if self.current is None:
            raise ValueError("there is no current run to keep; simulate first")
        name = self._check_new_name(name or self._free_name("run"))
        return self.add_run(self.current, name)

    def add_run(self, run: dl.Trajectory, name: str | None = None, *,
                visible: bool = True) -> str:
        """Keep ``run`` under ``name`` (default its own, else a free ``runN``)."""
        name = name or run.name
        name = self._check_new_name(name if name and name not in self.runs
                                    else self._free_name("run"))
        self.runs[name] = on_host(run, name, ts=np.array(run.ts), ys=np.array(run.ys))
        (self.hidden.discard if visible else self.hidden.add)(name)
        self._touch("run", name)
        self.events.runs.emit(names=list(self.runs))
        self.mark_dirty()
        return name

    def rename_run(self, old: str, new: str) -> None:
        if new == old:
            return
        self._check_new_name(new)
        self.runs = {new if k == old else k: (on_host(r, new) if k == old else r)
                     for k, r in self.runs.items()}
        if old in self.hidden:
            self.hidden.remove(old)
            self.hidden.add(new)
        self._forget("run", old)
        self._touch("run", new)
        self.events.runs.emit(names=list(self.runs))
        self.mark_dirty()

    def is_visible(self, name: str) -> bool:
        return name not in self.hidden

    def set_run_visible(self, name: str, visible: bool) -> None:
        if name not in self.runs:
            raise KeyError(f"no kept run named {name!r}")
        if self.is_visible(name) != visible:
            (self.hidden.discard if visible else self.hidden.add)(name)
            self.events.runs.emit(names=list(self.runs))
            self.mark_dirty()

    def _check_new_name(self, name: str) -> str:
        if not NAME.fullmatch(name or ""):
            raise ValueError(f"invalid run name {name!r}: use letters, digits, '_', '.', '-' "
                             "(at most 64, not starting with a digit)")
        if name in self.runs or name == "current":
            raise ValueError(f"a run named {name!r} already exists")
        return name

    def _free_name(self, prefix: str, taken=None) -> str:
        taken = self.runs if taken is None else taken
        i = 0
        while f"{prefix}{i}" in taken:
            i += 1
        return f"{prefix}{i}"

    # -- results of sweeps, fits, sensitivities ----------------------------------------

    def add_result(self, kind: str, result, name: str | None = None) -> str:
        """Keep a sweep, fit, sensitivity or analysis result (saved with the session)."""
        store = self.results[kind]
        name = name or self._free_name(kind, store)
        store[name] = result
        self._touch(kind, name)
        self.events.results.emit(kind=kind, name=name)
        self.mark_dirty()
        return name

    def set_analyses(self, prefix: str, results) -> None:
        """Keep analysis ``results`` (a bifurcation diagram's branches) as the analyses
        ``<prefix>_0``, ``<prefix>_1``, ..., in place of those kept under ``prefix``
        before (named so or, read from an older file, ``<prefix>.<i>``); they are saved
        with the session."""
        store = self.results["analysis"]
        for name in [n for n in store if _numbered(n, prefix) is not None]:
            store.pop(name)
            self._forget("analysis", name)
        for i, result in enumerate(results):
            store[f"{prefix}_{i}"] = result
            self._touch("analysis", f"{prefix}_{i}")
        self.events.results.emit(kind="analysis", name=prefix)
        self.mark_dirty()

    def analyses(self, prefix: str) -> tuple:
        """The analysis results kept under ``prefix`` (:meth:`set_analyses`), in order."""
        store = self.results["analysis"]
        numbered = {_numbered(n, prefix): n for n in store}
        return tuple(store[numbered[i]] for i in sorted(k for k in numbered if k is not None))

    # -- the document: deleting, and what changed since the file ------------------------

    def _store(self, kind: str) -> dict:
        return self.runs if kind == "run" else self.results[kind]

    def delete(self, kind: str, name: str) -> None:
        """Delete the kept run or the result ``name`` of ``kind`` (undoable); a save
        removes it from the file."""
        store = self._store(kind)
        before = {"kind": kind, "name": name, "value": store[name],
                  "index": list(store).index(name), "changed": (kind, name) in self.changed}
        self._do(Command(f"Delete {kind} {name}", before, {**before, "value": None},
                         self._put))

    def _put(self, state: dict) -> None:
        kind, name, value = state["kind"], state["name"], state["value"]
        store = self._store(kind)
        if value is None:
            self._removed[kind, name] = store.pop(name)
            self._forget(kind, name)
        else:  # back in its place; written again if the file lost it at a save since
            items = list(store.items())
            items.insert(state["index"], (name, value))
            store.clear()
            store.update(items)
            self._removed.pop((kind, name), None)
            if state["changed"] or (kind, name) not in self.deleted:
                self.changed.add((kind, name))
            self.deleted.discard((kind, name))
        if kind == "run":
            self.events.runs.emit(names=list(self.runs))
        else:
            self.events.results.emit(kind=kind, name=name)

    def _touch(self, kind: str, name: str) -> None:
        self.changed.add((kind, name))
        self.deleted.discard((kind, name))

    def _forget(self, kind: str, name: str) -> None:
        self.changed.discard((kind, name))
        self.deleted.add((kind, name))

    def removed(self, key: tuple[str, str]):
        """The object deleted as ``(kind, name)`` that undo can bring back, or ``None``."""
        return self._removed.get(key)

    def mark_saved(self) -> None:
        """The lab and its file agree: nothing changed, nothing deleted, nothing unsaved."""
        self.changed.clear()
        self.deleted.clear()
        self.mark_dirty(False)

    # -- file state and messages ----------------------------------------------------

    def mark_dirty(self, dirty: bool = True) -> None:
        self.edits += dirty
        if dirty != self.dirty:
            self.dirty = dirty
            self.events.dirty.emit(dirty=dirty)

    def set_path(self, path) -> None:
        self.path = path
        self.events.path.emit(path=path)

    def log(self, text: str, level: str = "info") -> None:
        """Report something to the user (the app's log panel shows it)."""
        self.messages.append((level, text))
        del self.messages[:-1000]
        self.events.log.emit(level=level, text=text)

    def _observer_failed(self, text: str) -> None:
        self.log(text, "error")

    def app_settings(self) -> dict:
        """The session's settings as JSON-ready values (the ``/app`` ``settings`` of a file)."""
        return {"model": self.model_name, "params": dict(self.params),
                "run_settings": self.settings.as_dict(),
                "visible": {n: self.is_visible(n) for n in self.runs}}

    def summary(self) -> str:
        """One line: model, parameters and the number of runs."""
        return (f"{self.model_name} ({format_params(self.params)}), "
                f"{len(self.runs)} kept run(s)")

    def reset(self, model: str = DEFAULT_MODEL) -> None:
        """A new, empty session (File > New)."""
        self.runs.clear()
        self.hidden.clear()
        for store in self.results.values():
            store.clear()
        self.current = None
        self.gui_layout = {}
        self._restore_model({"model": model, "params": None})
        self.set_layout(PlotLayout.for_states(self.state_names))
        if self.field_session is not None:
            self.field_session.start_afresh()
        self.undo_stack.clear()
        self.events.runs.emit(names=[])
        self.events.results.emit(kind=None, name=None)
        self.set_path(None)
        self.mark_saved()


def _numbered(name: str, prefix: str) -> int | None:
    """``i`` for a name ``<prefix>_<i>`` (or ``<prefix>.<i>``, as older files name it),
    else ``None``."""
    head, tail = name[:len(prefix)], name[len(prefix) + 1:]
    joined = name[len(prefix):len(prefix) + 1] in ("_", ".")
    return int(tail) if head == prefix and joined and tail.isdigit() else None


def finite_bounds(spec) -> tuple[float, float]:
    """A parameter's bounds, widened to include its default (for sliders)."""
    lo, hi = spec.bounds
    return min(lo, spec.default), max(hi, spec.default)
