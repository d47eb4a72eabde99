"""``save``: a run, fit or sensitivity added to a session file (schema: ``docs/hdf5-schema.md``)."""

from ..solvers import FitResult, Sensitivity, Trajectory
from . import _netcdf
from ._save import save_session
from ._session import Session
from ._writer import write_session


def save(path, result, *, name: str | None = None, overwrite: bool = False,
         compress: bool = False) -> str | None:
    """Add ``result`` (a Trajectory, FitResult or Sensitivity) to a session file.

    The file is made if absent; everything already in it is kept. A ``name`` already in
    the file needs ``overwrite=True``. Returns the name the result is stored under.
    A whole :class:`Session` saved onto its own file is rewritten in the current schema
    (the same objects); onto another session file its objects are added.
    """
    if isinstance(result, Session):
        save_session(result, path, compress=compress)
        return None
    writers = {Trajectory: _save_run, FitResult: _save_fit, Sensitivity: _save_sensitivity}
    writer = writers.get(type(result))
    if writer is None:
        raise TypeError(f"cannot save a {type(result).__name__}: save a Trajectory, FitResult "
                        "or Sensitivity (a sweep is written by sweep(..., out=path))")
    with write_session(path, overwrite=overwrite, compress=compress) as session:
        return writer(session, result, name)


def _save_run(session, traj, name) -> str:
    return session.add_run(traj, name=name)


def _settings(settings: dict) -> dict:
    """Settings without the ``None`` values and the key (stored on its own)."""
    return {k: v for k, v in settings.items() if v is not None and k != "key"}


def _save_sensitivity(session, sens, name) -> str:
    """``sens``'s run to ``/runs`` and its ``dy_dp`` to ``/sensitivities``."""
    settings = _settings(sens.settings)
    run = session.add_run(sens.trajectory, model=sens.model, settings=settings)
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
    writer = session.new_fit(
        model=result.start_model, parameter_names=result.names,
        settings=_settings(result.settings), data=_fit_data(result),
        optimizer=result.method, loss_name="0.5 * chi^2", max_steps=result.max_steps,
        learning_rate=result.learning_rate, name=name)
    writer.append(result.loss_history, result.parameter_history)
    writer.finish_with(result)
    session.add_run(result.trajectory())  # it knows the fitted model and the settings
    return writer.name
