"""Sensitivities of the current run: ``d y_i(t) / d p_k``, raw and normalised, for the app.

Qt-free: :func:`run_sensitivity` calls :func:`difflab.sensitivity` with the lab's model
and run settings; the result is a :class:`difflab.Sensitivity`, saved and read back as
session files store it (``/sensitivities/<name>`` and the run it belongs to).
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


def run_sensitivity(request: SensitivityRequest) -> dl.Sensitivity:
    """Compute the forward sensitivities of the request's run."""
    kwargs = request.settings.simulate_kwargs(request.model)
    kwargs = {k: v for k, v in kwargs.items() if v is not None}
    return dl.sensitivity(request.model, request.settings.t1, params=list(request.params),
                          **kwargs)


def load_sensitivities(lab, session) -> None:
    """Read the trajectory sensitivities of a session back into ``lab``."""
    for stored in session.stored("sensitivities"):
        if "dy_dp" not in stored.variables:
            continue  # a gradient of a scalar objective: nothing the app draws
        try:
            sens = session.sensitivities[stored.name]
            model = lab.model_from_record(stored.model) or stored.model
            sens = dataclasses.replace(sens, ts=np.asarray(sens.ts), ys=np.asarray(sens.ys),
                                       raw=np.asarray(sens.raw), model=model)
        except (KeyError, ValueError, TypeError) as error:
            lab.log(f"sensitivity {stored.name!r} could not be shown: {error}", "warning")
            continue
        lab.add_result("sensitivity", sens, stored.name)
