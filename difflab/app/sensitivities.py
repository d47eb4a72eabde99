"""Sensitivities of the current run: ``d y_i(t) / d p_k``, raw and normalised, for the app.

Qt-free: :func:`run_sensitivity` calls :func:`difflab.sensitivity` with the lab's model
and run settings; :func:`save_sensitivity` / :func:`load_sensitivities` keep the result
in session files (``/sensitivities/<name>`` and the run it belongs to).
"""

import dataclasses

import numpy as np

import difflab as dl

from .runs import RunSettings


@dataclasses.dataclass(frozen=True)
class SensitivityRequest:
    """The model (at the current values), its run settings, the parameters to vary."""

    model: dl.Model
    model_name: str
    settings: RunSettings
    params: tuple[str, ...]

    def __post_init__(self):
        if not self.params:
            raise ValueError("choose at least one parameter")


@dataclasses.dataclass(frozen=True)
class SensitivityRecord:
    """A :class:`difflab.Sensitivity` with the model name and run settings it is for.

    Its arrays, ``parameters``, ``state_names`` and ``curve()`` are the sensitivity's.
    """

    model_name: str
    settings: RunSettings
    sensitivity: dl.Sensitivity

    def __getattr__(self, name):  # for names the record itself lacks
        return getattr(vars(self).get("sensitivity"), name)


def run_sensitivity(request: SensitivityRequest) -> SensitivityRecord:
    """Compute the forward sensitivities of the request's run."""
    s = request.settings
    settings = {k: v for k, v in dict(t0=s.t0, dt=s.dt, solver=s.solver,
                                      n_save=s.n_save).items() if v is not None}
    key = None
    if isinstance(request.model, dl.SDEModel):
        import jax

        key = jax.random.key(s.seed)
    sens = dl.sensitivity(request.model, s.t1, params=list(request.params), key=key, **settings)
    return SensitivityRecord(request.model_name, s, sens)


def save_sensitivity(writer, name: str, record: SensitivityRecord) -> None:
    """Write a sensitivity and the run it belongs to into an open session writer."""
    settings = {k: v for k, v in record.settings.as_dict().items() if v is not None}
    settings.pop("n_save", None)
    sens = record.sensitivity
    run_name = writer.add_run(sens.trajectory, model=sens.model, settings=settings,
                              name=f"{name}.run")
    writer.add_sensitivity(model=sens.model, parameter_names=list(sens.parameters),
                           dy_dp=sens.raw, time=sens.ts, state_names=sens.state_names,
                           method="forward", objective="trajectory", run=run_name,
                           settings=settings, name=name)


def load_sensitivities(lab, session) -> None:
    """Read the trajectory sensitivities of a session back into ``lab``."""
    for stored in session.stored("sensitivities"):
        try:
            record = _from_file(lab, session, stored)
        except (KeyError, ValueError, TypeError) as error:
            lab.log(f"sensitivity {stored.name!r} could not be shown: {error}", "warning")
            continue
        if record is not None:
            lab.add_result("sensitivity", record, stored.name)


def _from_file(lab, session, stored) -> SensitivityRecord | None:
    if "dy_dp" not in stored.variables or "run" not in stored.attrs:
        return None
    sens = session.sensitivities[stored.name]
    model = lab.model_from_record(stored.model) or stored.model
    settings = RunSettings.from_dict({**stored.settings, "seed": stored.attrs.get("seed", 0)})
    sens = dataclasses.replace(sens, ts=np.asarray(sens.ts), ys=np.asarray(sens.ys),
                               raw=np.asarray(sens.raw), model=model)
    return SensitivityRecord(stored.model.name, settings, sens)
