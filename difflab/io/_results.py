"""``save``: a run, sweep, fit, sensitivity or analysis result added to a session file
(schema: ``docs/hdf5-schema.md``); ``add``: the same into a session being written."""

import numpy as np

from ..solvers import (
    FieldSweepResult,
    FieldTrajectory,
    FitResult,
    Sensitivity,
    SweepResult,
    Trajectory,
)
from . import _analyses, _field_fit_files, _field_sweeps, _h5, _netcdf, _sweep_grid, _sweep_store
from ._fields import add_fields
from ._save import save_session
from ._session import Session
from ._sweep_output import KEY_SCHEME
from ._writer import _next_name, run_name, write_session

NOT_RUN = -1


def save(path, result, *, name: str | None = None, overwrite: bool = False,
         compress: bool = False) -> str | None:
    """Add ``result`` (a Trajectory, FieldTrajectory, SweepResult, FieldSweepResult,
    FitResult, Sensitivity or an analysis result: Equilibria, Continuation,
    BifurcationCurve, PeriodicOrbits, Poincare, LyapunovSpectrum) to a session file.

    The file is made if absent; everything already in it is kept. A ``name`` already in
    the file needs ``overwrite=True``. Returns the name the result is stored under.
    A whole :class:`Session` saved onto its own file is rewritten in the current schema
    (the same objects); onto another session file its objects are added.
    """
    if isinstance(result, Session):
        save_session(result, path, compress=compress)
        return None
    _writer_of(result)  # a type it cannot save: before touching the file
    with write_session(path, overwrite=overwrite, compress=compress) as session:
        return add(session, result, name=name)


def add(session, result, *, name: str | None = None) -> str:
    """Write ``result`` into an open :class:`SessionWriter` (the app saves through this)."""
    return _writer_of(result)(session, result, name)


def _writer_of(result):
    writers = {Trajectory: _save_run, SweepResult: _save_sweep, FitResult: _save_fit,
               Sensitivity: _save_sensitivity, FieldSweepResult: _save_field_sweep,
               FieldTrajectory: _save_field_run}
    writer = writers.get(type(result))
    if writer is None and _analyses.format_of(result) is not None:
        writer = _save_analysis
    if writer is None:
        analyses = ", ".join(f.cls.__name__ for f in _analyses.FORMATS.values())
        raise TypeError(f"cannot save a {type(result).__name__}: save a Trajectory, "
                        f"FieldTrajectory, SweepResult, FitResult, Sensitivity or an "
                        f"analysis ({analyses})")
    return writer


def _save_analysis(session, result, name) -> str:
    return session.add_analysis(result, name=name)


def _save_field_run(session, result, name) -> str:
    if result.model is None:
        raise ValueError("this field run does not know its model: save it with "
                         "dl.io.save_fields(path, traj, model)")
    return add_fields(session, result, result.model, name=name)


def _save_field_sweep(session, result, name) -> str:
    return _field_sweeps.add_field_sweep(session, result, name=name)


def _save_run(session, traj, name) -> str:
    return session.add_run(traj, name=name)


def _save_sweep(session, result, name) -> str:
    """A whole sweep in one group: every point, or the points a stopped sweep ran (the
    others keep the code -1 and their chunk stays pending)."""
    space = result.space
    names = [n for n in space.names if not n.startswith("y0")]
    values = (np.stack([np.asarray(space[n], dtype=np.float64) for n in names], axis=1)
              if names else np.zeros((len(result), 0)))
    record = _sweep_store.SweepRecord(
        model=result.model, parameter_names=names, values=values, time=np.asarray(result.ts),
        state_names=tuple(result.state_names), chunk_size=len(result),
        settings=dict(result.settings or {}), key=result.key,
        key_scheme=None if result.key is None else KEY_SCHEME, y0=result.y0,
        observables=dict(result.observable_specs),
        observable_sizes={n: np.shape(v)[1] for n, v in result.observables.items()
                          if np.ndim(v) == 2},
        attrs={"space_kind": space.kind, "space_shape": np.asarray(space.shape, np.int64),
               "swept": list(space.names), "trajectories": int(result.trajectories)})
    writer = session.new_sweep(name=name, **record.writer_options())
    _h5.set_attrs(writer.group, record.attrs)
    _sweep_store.add_observables(writer.group, record)
    for observable, values in result.observables.items():
        _sweep_grid.write_points(writer.group[observable], 0, np.asarray(values),
                                 np.ndim(values) == 2)
    codes = np.asarray(result.result)
    if np.all(codes != NOT_RUN):
        writer.write_chunk(0, ys=np.asarray(result.y), result=codes, steps=result.steps)
    else:
        for variable, values in (("y", result.y), ("result", codes), ("steps", result.steps)):
            writer.group[variable][:] = np.asarray(values)
    writer.finish()
    return writer.name


def _settings(settings: dict) -> dict:
    """Settings without the ``None`` values and the key (stored on its own)."""
    return {k: v for k, v in settings.items() if v is not None and k != "key"}


def _save_sensitivity(session, sens, name) -> str:
    """``sens``'s run to ``/runs`` and its ``dy_dp`` to ``/sensitivities``."""
    settings = _settings(sens.settings)
    name = name or _next_name(session.file["sensitivities"], "sensitivity")
    run = session.add_run_of("sensitivities", name, sens.trajectory, model=sens.model,
                             settings=settings)
    name = session.add_sensitivity(
        model=sens.model, parameter_names=sens.parameters, dy_dp=sens.raw,
        time=sens.ts, state_names=sens.state_names, method="forward",
        objective="trajectory", run=run, settings=settings, name=name)
    # the normalised sensitivities beside dy_dp (readers ignore members they do not know)
    normalized = _netcdf.Variable(
        ("time", "state", "parameter"), sens.normalized,
        {"long_name": "d log state / d log parameter"})
    _netcdf.write_group(session.file["sensitivities"][name], {"dy_dp_normalized": normalized})
    return name


def _fit_data(result) -> dict:
    """The data of a fit in the form ``FitWriter`` takes."""
    obs = result.data
    return {"time": obs.t, "y": obs.y, "state_names": list(obs.states),
            "sigma": None if obs.sigma is None else obs.sigma}


def _save_fit(session, result, name) -> str:
    """A finished :class:`FitResult` (history, data, fitted model) and its fitted run."""
    fields = _field_fit_files.is_field_data(result.data)
    settings = {k: v for k, v in _settings(result.settings).items()
                if not (fields and k == "y0")}  # initial fields: not an attribute
    writer = session.new_fit(
        model=result.start_model, parameter_names=result.names,
        settings=settings, data=None if fields else _fit_data(result),
        optimizer=result.method, loss_name="0.5 * chi^2", max_steps=result.max_steps,
        learning_rate=result.learning_rate, name=name)
    writer.append(result.loss_history, result.parameter_history)
    writer.finish_with(result)
    if fields:
        _field_fit_files.write_field_data(writer.group, result.data, result.start_model)
    if result.run is not None and fields:  # the run the fit kept: saving never simulates
        run = add_fields(session, result.run, result.model, name=run_name(writer.name))
        _h5.set_attrs(writer.group, {"run": run})
    elif result.run is not None:
        session.add_run_of("fits", writer.name, result.run)
    return writer.name
