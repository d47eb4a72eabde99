"""Fits and sensitivities into DiffLab session files, through ``difflab.io``'s writers.

The only place the fitting code touches HDF5 (schema: ``docs/hdf5-schema.md``).
"""

import numpy as np


def _settings(settings: dict) -> dict:
    return {k: v for k, v in settings.items() if v is not None and k != "key"}


def save_sensitivity(path, sens, *, append: bool = False, name: str | None = None) -> str:
    """Write ``sens``'s run to ``/runs`` and its ``dy_dp`` to ``/sensitivities``."""
    from .. import io

    from ..io import _netcdf

    settings = _settings(sens.settings)
    with io.write_session(path, append=append) as session:
        run = session.add_run(sens.trajectory, model=sens.model, settings=settings)
        name = session.add_sensitivity(
            model=sens.model, parameter_names=sens.parameters, dy_dp=sens.raw,
            time=sens.ts, state_names=sens.state_names, method="forward",
            objective="trajectory", run=run, settings=settings, name=name)
        # the normalised sensitivities beside dy_dp (readers ignore members they do not know)
        normalized = _netcdf.Variable(
            ("time", "state", "parameter"), sens.normalized,
            {"long_name": "d log state / d log parameter"})
        _netcdf.write_group(session.file["sensitivities"][name],
                            {"dy_dp_normalized": normalized})
        return name


def fit_data(result) -> dict:
    """The data of a fit in the form ``FitWriter`` takes."""
    obs = result.data
    return {"time": obs.t, "y": obs.y, "state_names": list(obs.states),
            "sigma": None if obs.sigma is None else obs.sigma}


def fit_info(result) -> dict:
    """The end-of-fit attributes: best values, standard errors, correlation, chi^2."""
    return {"best_parameters": np.array([result.params[n] for n in result.names]),
            "stderr": np.array([result.stderr[n] for n in result.names]),
            "correlation": np.asarray(result.correlation, dtype=np.float64).reshape(-1),
            "chi2": float(result.chi2), "dof": int(result.dof),
            "absolute_sigma": int(result.absolute_sigma), "method": result.method,
            "n_starts": int(len(result.start_losses))}


def save_fit(path, result, *, append: bool = False, name: str | None = None) -> str:
    """Write a finished :class:`FitResult` (history, data, fitted model) and its fitted run."""
    from .. import io

    with io.write_session(path, append=append) as session:
        writer = session.new_fit(
            model=result.start_model, parameter_names=result.names,
            settings=_settings(result.settings), data=fit_data(result),
            optimizer=result.method, loss_name="0.5 * chi^2", max_steps=result.max_steps,
            learning_rate=result.learning_rate, name=name)
        writer.append(result.loss_history, result.parameter_history)
        writer.finish(fitted_model=result.model, result=int(result.result),
                      message=result.message, **fit_info(result))
        session.add_run(result.trajectory(), model=result.model,
                        settings=_settings(result.settings))
        return writer.name
