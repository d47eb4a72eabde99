"""Saving a :class:`~difflab.app.lab.Lab` to a session file and opening one into it.

The file is a DiffLab session in the schema of ``docs/hdf5-schema.md``, written with
``difflab.io.write_session`` (atomic) and read with ``difflab.io.open_session`` (never
runs code). The kept runs are ``/runs/<name>``, the current run ``/runs/current``; the
app's model, parameters and run settings go in ``/app`` ``settings``, the plots' layout
in ``/app`` ``plot_layout``. Sweep, fit and sensitivity results the lab holds are
written by their own savers (see :data:`RESULT_SAVERS`).
"""

import dataclasses
import os
from pathlib import Path

import numpy as np

import difflab as dl

from .lab import Lab, PlotLayout
from .runs import Run, RunSettings
from .fits import load_fits, save_fit
from .sensitivities import load_sensitivities, save_sensitivity
from .sweeps import load_sweeps, save_sweep

CURRENT = "current"

#: kind -> function(writer, name, result): how a result kind of the lab is saved.
RESULT_SAVERS: dict = {"sweep": save_sweep, "fit": save_fit, "sensitivity": save_sensitivity}
#: kind -> function(lab, session): how results of a kind are read back into the lab.
RESULT_LOADERS: dict = {"sweep": load_sweeps, "fit": load_fits,
                        "sensitivity": load_sensitivities}


def _settings_and_key(run: Run) -> tuple[dict, object]:
    settings = {k: v for k, v in run.settings.as_dict().items() if v is not None}
    key = None
    if isinstance(run.model, dl.SDEModel):
        import jax

        key = jax.random.key(run.settings.seed)
    return settings, key


def _write_run(writer, run: Run, name: str) -> None:
    settings, key = _settings_and_key(run)
    n = run.n_valid  # a stopped stream is saved up to where it got
    traj = dataclasses.replace(run, ts=run.ts[:n], ys=run.ys[:n])
    settings.pop("n_save", None)
    writer.add_run(traj, model=run.model, settings=settings, key=key, name=name)


def save_lab(lab: Lab, path, *, plot_layout: dict | None = None, compress: bool = False) -> None:
    """Write the lab's session to ``path`` (atomically) and make it the lab's file.

    ``plot_layout``: extra layout the GUI keeps (its views), merged into the lab's.
    """
    path = Path(path)
    with dl.io.write_session(path, compress=compress, command_line="difflab gui") as writer:
        if lab.current is not None and len(lab.current.ts):
            _write_run(writer, lab.current, CURRENT)
        for name, run in lab.runs.items():
            _write_run(writer, run, name)
        for kind, store in lab.results.items():
            saver = RESULT_SAVERS.get(kind)
            for name, result in store.items():
                if saver is not None:
                    saver(writer, name, result)
        layout = {**lab.layout.to_json(), **(plot_layout or {})}
        writer.set_app(plot_layout=layout, settings=lab.app_settings())
    lab.set_path(path)
    lab.mark_dirty(False)


def _run_from_file(lab: Lab, stored) -> Run | None:
    record = stored.model
    model = lab.model_from_record(record)
    if model is None:
        lab.log(f"run {stored.name!r} uses the user model {record.name!r} ({record.path}); "
                "its data is shown, but DiffLab runs no code from a session file: load the "
                "model file to rerun it", "warning")
        model = record
    settings = RunSettings.from_dict({**stored.settings, "seed": stored.attrs.get("seed", 0)})
    return Run(stored.name, model, record.name, settings, np.asarray(stored.time, dtype=float),
               np.asarray(stored.y, dtype=float), tuple(stored.state_names), stored.result,
               int(stored.attrs.get("steps", 0) or 0), stored.attrs.get("wall_time"),
               complete=stored.complete)


def open_lab(lab: Lab, path) -> None:
    """Replace the lab's session by the one in ``path`` (``SessionFileError`` if it is bad)."""
    session = dl.io.open_session(path)
    app = session.app_settings or {}
    layout = session.plot_layout or {}
    owned = {s.attrs.get("run") for s in session.sensitivities}  # saved with a sensitivity
    runs = [r for r in (_run_from_file(lab, s) for s in session.runs if s.name not in owned)
            if r is not None]
    current = next((r for r in runs if r.name == CURRENT), None)
    model = _model_name(lab, app, runs)
    lab.reset(model)
    with lab.events.params.blocker():
        params = {k: v for k, v in (app.get("params") or {}).items() if k in lab.specs}
        lab.params.update({k: float(v) for k, v in params.items()})
    lab.events.params.emit(changed=dict(lab.params))
    if isinstance(app.get("run_settings"), dict):
        lab.set_settings(**dataclasses.asdict(RunSettings.from_dict(app["run_settings"])))
    visible = app.get("visible") or {}
    order = {name: i for i, name in enumerate(visible)}  # the order the lab kept them in
    for run in sorted(runs, key=lambda r: order.get(r.name, len(order))):
        if run.name != CURRENT:
            run.visible = bool(visible.get(run.name, True))
            lab.add_run(run)
    if current is not None and current.model_name == lab.model_name:
        current.serial = lab.solve_request().serial
        lab.accept(current)
    for kind, loader in RESULT_LOADERS.items():
        loader(lab, session)
    lab.set_layout(PlotLayout.from_json(layout).fitted_to(lab.state_names))
    lab.gui_layout = layout
    lab.undo_stack.clear()
    lab.set_path(Path(os.fspath(path)))
    lab.mark_dirty(False)


def _model_name(lab: Lab, app: dict, runs: list[Run]) -> str:
    for name in [app.get("model"), *(r.model_name for r in runs)]:
        if not name:
            continue
        try:
            lab.model_class(name)
            return name
        except ValueError:
            lab.log(f"the session's model {name!r} is not available here", "warning")
    return lab.model_name
