"""Saving a :class:`~difflab.app.lab.Lab` to a session file and opening one into it.

The file is a DiffLab session in the schema of ``docs/hdf5-schema.md``, a document of
named objects: the kept runs are ``/runs/<name>``, the current run ``/runs/current``,
sweeps, fits and sensitivities ``/sweeps/<name>``, ..., analysis results
``/analyses/<name>`` (the bifurcation diagram's branches ``bifurcation_0``, ..., those of
equilibria first, then those of periodic orbits), each
written by ``difflab.io.add`` as the class the solvers return (a fit and a sensitivity
bring their run, ``<name>_run``); the
app's model, parameters and run settings go in ``/app`` ``settings``, the plots' layout
in ``/app`` ``plot_layout``. Opening reads every object the app can show
(``difflab.io.open_session``, never runs code). Saving goes through
``difflab.io.write_session`` (atomic, one writer at a time) and touches only what the
lab added, replaced or deleted since (``lab.changed``, ``lab.deleted``): every other
object of the file stays as it was, bit for bit, shown by the app or not. Saving to
another file ("Save As") starts from a copy of the lab's file, so that one holds them too.

The field view's session (``lab.field_session``, :class:`~difflab.app.fields.FieldSession`)
is part of the document: its run is ``/runs/fields`` (written by ``difflab.io.add_fields``
when it changed since the last save), its model, grid and view the ``fields`` entry of
``/app`` ``settings``. Opening brings that run back (or, in a file without one, the first
field run there) into the field session; other field runs stay in the file untouched.
Its last field sweep is ``/sweeps/<name>`` (``field_sweep``; written by ``difflab.io.add``
when it is new), named by the ``sweep`` of that entry, and comes back with it.
"""

import dataclasses
import os
from pathlib import Path

import difflab as dl

from .bifurcation import BifurcationDiagram, BifurcationRequest
from .fields import FIELD_RUN, FieldSession
from .fits import load_fits
from .lab import Lab, PlotLayout
from .runs import RunSettings, on_host
from .sensitivities import load_sensitivities
from .sweeps import load_sweeps

CURRENT = "current"
DIAGRAM = "bifurcation"  # the bifurcation diagram's branches: analyses "bifurcation_<i>"
#: the lab's kind of object -> its group in the file
GROUPS = {"run": "runs", "sweep": "sweeps", "fit": "fits", "sensitivity": "sensitivities",
          "analysis": "analyses"}


def load_analyses(lab: Lab, session) -> None:
    """Read the session's analysis results back into ``lab``, their models rebuilt where
    DiffLab may (a user model's only when its file is loaded or trusted)."""
    for name in session.analyses.names():
        try:
            result = session.analyses[name]
        except dl.io.SessionFileError as error:
            lab.log(f"analysis {name!r} could not be read: {error}", "warning")
            continue
        if isinstance(result.model, dl.io.ModelRecord):
            model = lab.model_from_record(result.model)
            result = result if model is None else dataclasses.replace(result, model=model)
        lab.add_result("analysis", result, name)


def kept_diagram(lab: Lab) -> BifurcationDiagram | None:
    """The bifurcation diagram the lab keeps (computed, or read from its file) when it is
    of the current model, else ``None``."""
    kept = lab.analyses(DIAGRAM)
    branches = tuple(b for b in kept if isinstance(b, dl.Continuation))
    cycles = tuple(c for c in kept if isinstance(c, dl.PeriodicOrbits))
    first = branches[0] if branches else None
    if first is None or not isinstance(first.model, dl.Model) \
            or lab.name_of(first.model) != lab.model_name:
        return None
    try:
        request = BifurcationRequest(first.model, lab.model_name, first.param,
                                     float(first.start), float(first.stop),
                                     other_branches=len(branches) > 1, cycles=bool(cycles))
    except ValueError:
        return None
    return BifurcationDiagram(request, branches, cycles)


#: functions(lab, session) reading the results of a kind back into the lab.
LOADERS = (load_sweeps, load_fits, load_sensitivities, load_analyses)


def _objects(lab: Lab) -> dict[tuple[str, str], object]:
    """Everything the lab holds, by ``(kind, name)``: the current run, kept runs, results."""
    found = {}
    if lab.current is not None and len(lab.current.ts):
        found["run", CURRENT] = lab.current
    found.update({("run", name): run for name, run in lab.runs.items()})
    for kind, store in lab.results.items():
        found.update({(kind, name): result for name, result in store.items()})
    return found


def save_lab(lab: Lab, path, *, plot_layout: dict | None = None, compress: bool = False) -> None:
    """Write the lab's changes into ``path`` and make it the lab's file.

    ``path`` the lab's own file: only what the lab added, replaced or deleted is written.
    Another path: a copy of the lab's file (if it has one) with those changes; the file
    that was at ``path`` is replaced. ``plot_layout``: extra layout the GUI keeps (its
    views), merged into the lab's. Any error leaves ``path`` as it was. The app does the
    same in three steps, writing off the GUI thread: :func:`plan_save`,
    :func:`write_plan`, :func:`finish_save`.
    """
    plan = plan_save(lab, path, plot_layout=plot_layout, compress=compress)
    write_plan(plan, log=lab.log)
    finish_save(lab, plan)


@dataclasses.dataclass(frozen=True)
class SavePlan:
    """What a save writes, taken from the lab at once (on the GUI thread): the objects
    to add or replace by ``(kind, name)``, those to remove, the session's models (every
    typed or loaded one, current or not), layout and settings. Written on any thread."""

    path: Path
    base: Path | None
    objects: dict
    deleted: tuple
    models: tuple
    layout: dict
    settings: dict
    compress: bool
    edits: int
    removed: tuple = ()  # the deleted objects undo can bring back, kept whole before removal
    field_edits: int | None = None  # the field session's edits the plan saves

    @property
    def steps(self) -> int:
        """The units of progress of :func:`write_plan`: each object, then the rest."""
        return len(self.objects) + 1


def plan_save(lab: Lab, path, *, plot_layout: dict | None = None,
              compress: bool = False) -> SavePlan:
    """The save of the lab's changes into ``path`` (see :func:`save_lab`); computes nothing."""
    path = Path(path)
    source = lab.path if lab.path is not None and Path(lab.path).exists() else None
    base = None if source is None or _same_file(source, path) else source
    everything = source is None
    objects = {key: value for key, value in _objects(lab).items()
               if everything or key in lab.changed}
    models = tuple(lab.base_model(name) for name in lab.user_models)
    layout = {**lab.layout.to_json(), **(plot_layout or {})}
    removed = tuple(lab.removed(key) for key in lab.deleted if lab.removed(key) is not None)
    settings, fields = lab.app_settings(), _field_session(lab)
    if fields is not None:
        settings["fields"] = fields.view_settings()
        if everything or fields.unsaved:
            objects["run", FIELD_RUN] = fields.snapshot()
            settings["fields"]["run"] = FIELD_RUN
        if fields.sweep is not None:
            settings["fields"]["sweep"] = fields.sweep_name
            if everything or not fields.sweep_saved:
                objects["sweep", fields.sweep_name] = fields.sweep
    return SavePlan(path, base, objects, tuple(lab.deleted), models, layout, settings,
                    compress, lab.edits, removed, None if fields is None else fields.edits)


def _field_session(lab: Lab) -> FieldSession | None:
    """The field view's session of ``lab``, if the app made one (or opened one)."""
    return getattr(lab, "field_session", None)


def write_plan(plan: SavePlan, progress=lambda done, total: None, log=lambda text, level: None
               ) -> None:
    """Write ``plan`` (any thread): ``progress(done, total)`` after each object, ``log``
    for what is left out."""
    for value in plan.removed:  # undo may bring it back after its groups leave the file
        dl.io.keep_in_memory(value)
    with dl.io.write_session(plan.path, overwrite=True, compress=plan.compress,
                             base=plan.base, command_line="difflab gui") as writer:
        for kind, name in plan.deleted:
            _remove(writer, GROUPS[kind], name)
        for model in plan.models:
            _add_model(writer, model, log)
        for done, ((kind, name), value) in enumerate(plan.objects.items()):
            progress(done, plan.steps)
            _add(writer, kind, name, value, log)
        writer.set_app(plot_layout=plan.layout, settings=plan.settings)
    progress(plan.steps, plan.steps)


def finish_save(lab: Lab, plan: SavePlan) -> None:
    """After :func:`write_plan`: the file is the lab's, and what it wrote is saved (a
    change made while it wrote stays unsaved)."""
    now = _objects(lab)
    for key, value in plan.objects.items():
        if now.get(key) is value:
            lab.changed.discard(key)
    lab.deleted.difference_update(key for key in plan.deleted if key not in now)
    fields = _field_session(lab)
    if fields is not None and plan.field_edits is not None:
        fields.saved_edits = plan.field_edits
        fields.run_name = plan.settings["fields"]["run"]
        if fields.sweep is not None and plan.objects.get(("sweep", fields.sweep_name)) \
                is fields.sweep:
            fields.sweep_saved = True
    lab.set_path(plan.path)
    if lab.edits == plan.edits:
        lab.mark_dirty(False)


def _add(writer, kind: str, name: str, value, log) -> None:
    if isinstance(value, dl.solvers.FieldTrajectory):
        dl.io.add_fields(writer, value, value.model, name=name)
        return
    try:
        dl.io.add(writer, value, name=name)
    except TypeError as error:  # an analysis of a class no session file stores yet
        if kind != "analysis":
            raise
        log(f"analysis {name!r} is not saved: {error}", "warning")


def _add_model(writer, model, log) -> None:
    """Store a user's model (typed or loaded) in ``/models``, once per distinct value."""
    try:
        writer.add_model(model)
    except (OSError, TypeError, ValueError) as error:
        log(f"the model {type(model).__name__} is not saved: {error}", "warning")


def _remove(writer, group: str, name: str) -> None:
    """Remove a deleted object if the file has it (a fit or sensitivity with its own run)."""
    if group not in writer.file or name not in writer.file[group]:
        return
    run = writer.file[group][name].attrs.get("run") if group != "runs" else None
    run = run.decode() if isinstance(run, bytes) else run
    if run is not None and run in writer.file["runs"]:
        writer.remove("runs", run)
    writer.remove(group, name)


def _same_file(a, b) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _run_from_file(lab: Lab, session, name: str) -> dl.Trajectory:
    run = session.runs[name]
    if isinstance(run, dl.solvers.FieldTrajectory):
        return run
    if isinstance(run.model, dl.io.ModelRecord):
        model = lab.model_from_record(run.model)
        if model is None and run.model.origin != "builtin":
            lab.log(f"run {name!r} uses the user model {run.model.name!r} ({run.model.path}); "
                    "its data is shown, but DiffLab runs no code from a session file: load "
                    "the model file to rerun it", "warning")
        run = run if model is None else dataclasses.replace(run, model=model)
    return on_host(run, name)


def open_lab(lab: Lab, path) -> None:
    """Replace the lab's session by the one in ``path`` (``SessionFileError`` if it is bad)."""
    dl.io.remove_stale_temporaries(path)  # of a save that was killed
    session = dl.io.open_session(path)
    app = session.app_settings or {}
    layout = session.plot_layout or {}
    owned = {s.attrs.get("run") for kind in ("fits", "sensitivities")
             for s in session.stored(kind)}  # the runs of fits and sensitivities
    runs = {s.name: _run_from_file(lab, session, s.name) for s in session.stored("runs")
            if s.name not in owned}
    field_runs = {n: runs.pop(n) for n in list(runs)
                  if isinstance(runs[n], dl.solvers.FieldTrajectory)}
    current = runs.pop(CURRENT, None)
    model = _model_name(lab, app, session)
    lab.reset(model)
    with lab.events.params.blocker():
        params = {k: v for k, v in (app.get("params") or {}).items() if k in lab.specs}
        lab.params.update({k: float(v) for k, v in params.items()})
    lab.events.params.emit(changed=dict(lab.params))
    if isinstance(app.get("run_settings"), dict):
        lab.set_settings(**dataclasses.asdict(RunSettings.from_dict(app["run_settings"])))
    visible = app.get("visible") or {}
    order = {name: i for i, name in enumerate(visible)}  # the order the lab kept them in
    for name in sorted(runs, key=lambda n: order.get(n, len(order))):
        lab.add_run(runs[name], name, visible=bool(visible.get(name, True)))
    if current is not None and lab.name_of(current.model) == lab.model_name:
        lab.accept(current, lab.solve_request())
    for loader in LOADERS:
        loader(lab, session)
    load_field_run(lab, field_runs, app.get("fields"))
    load_field_sweep(lab, session, app.get("fields"))
    lab.set_layout(PlotLayout.from_json(layout).fitted_to(lab.state_names))
    lab.gui_layout = layout
    lab.undo_stack.clear()
    lab.set_path(Path(os.fspath(path)))
    lab.mark_saved()


def load_field_run(lab: Lab, runs: dict, settings) -> None:
    """Show the app's field run (or the file's first) in the lab's field session, made
    if the app has none yet; the other field runs stay in the file (a save keeps them)."""
    settings = settings if isinstance(settings, dict) else {}
    name = settings.get("run") if settings.get("run") in runs else next(iter(runs), None)
    if name is None:
        return
    fields = _field_session(lab) or FieldSession(lab, model=None)
    try:
        fields.load(runs[name], settings if name == settings.get("run") else None, name)
    except (ValueError, TypeError, KeyError, dl.io.SessionFileError) as error:
        lab.log(f"field run {name!r} stays in the file but is not shown: {error}", "warning")
        return
    others = ", ".join(repr(n) for n in runs if n != name)
    lab.log(f"field run {name!r} is shown in the field view"
            + (f"; {others} stay in the file" if others else ""))


def load_field_sweep(lab: Lab, session, settings) -> None:
    """Bring the app's field sweep (the ``sweep`` of its field settings) back into the
    field session; other field sweeps stay in the file."""
    settings = settings if isinstance(settings, dict) else {}
    fields, name = _field_session(lab), settings.get("sweep")
    if fields is None or name not in session.sweeps.names():
        return
    try:
        result = session.sweeps[name]
    except dl.io.SessionFileError as error:
        lab.log(f"field sweep {name!r} stays in the file but is not shown: {error}", "warning")
        return
    if isinstance(result, dl.solvers.FieldSweepResult):
        fields.set_sweep(result, saved=True, name=name)


def _model_name(lab: Lab, app: dict, session) -> str:
    """The session's model: the one the app chose, else that of its first result."""
    for record in session.models.values():  # typed and loaded models join the browser
        if record.origin in ("equations", "user"):
            lab.model_from_record(record)  # a file's code runs only if trusted
    names = dict.fromkeys([app.get("model"), *(s.model.name for s in session.groups())])
    for name in names:
        if not name or name in dl.models.field_models():  # field runs stay in the file
            continue
        try:
            lab.model_class(name)
            return name
        except ValueError:
            lab.log(f"the session's model {name!r} is not available here", "warning")
    return lab.model_name
