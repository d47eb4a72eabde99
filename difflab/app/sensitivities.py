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


@dataclasses.dataclass
class SensitivityRecord:
    """``raw[t, i, k] = d y_i(t) / d p_k`` of a run, with what it was computed for."""

    model_name: str
    model: object
    settings: RunSettings
    ts: np.ndarray
    ys: np.ndarray
    raw: np.ndarray
    parameters: tuple[str, ...]
    values: np.ndarray
    state_names: tuple[str, ...]
    result: int = 0

    @property
    def normalized(self) -> np.ndarray:
        """``d log y_i / d log p_k = raw * p_k / y_i`` (NaN where ``y_i = 0``)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            out = self.raw * self.values[None, None, :] / self.ys[:, :, None]
        return np.where(self.ys[:, :, None] == 0, np.nan, out)

    def curve(self, state: str, parameter: str, normalized: bool = False) -> np.ndarray:
        i, k = self.state_names.index(state), self.parameters.index(parameter)
        return (self.normalized if normalized else self.raw)[:, i, k]


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
    return SensitivityRecord(request.model_name, request.model, s, sens.ts, sens.ys, sens.raw,
                             tuple(sens.parameters), np.asarray(sens.values),
                             tuple(sens.state_names), int(sens.result))


def save_sensitivity(writer, name: str, record: SensitivityRecord) -> None:
    """Write a sensitivity and the run it belongs to into an open session writer."""
    settings = {k: v for k, v in record.settings.as_dict().items() if v is not None}
    settings.pop("n_save", None)
    run = _Run(record.ts, record.ys, record.result, 0, record.state_names, None)
    run_name = writer.add_run(run, model=record.model, settings=settings, name=f"{name}.run")
    writer.add_sensitivity(model=record.model, parameter_names=list(record.parameters),
                           dy_dp=record.raw, time=record.ts, state_names=record.state_names,
                           method="forward", objective="trajectory", run=run_name,
                           settings=settings, name=name)


@dataclasses.dataclass
class _Run:
    ts: np.ndarray
    ys: np.ndarray
    result: int
    steps: int
    state_names: tuple
    wall_time: float | None


def load_sensitivities(lab, session) -> None:
    """Read the trajectory sensitivities of a session back into ``lab``."""
    for stored in session.sensitivities:
        try:
            record = _from_file(lab, session, stored)
        except (KeyError, ValueError, TypeError) as error:
            lab.log(f"sensitivity {stored.name!r} could not be shown: {error}", "warning")
            continue
        if record is not None:
            lab.add_result("sensitivity", record, stored.name)


def _from_file(lab, session, stored) -> SensitivityRecord | None:
    if stored.dy_dp is None or "run" not in stored.attrs:
        return None
    run = session.runs[stored.attrs["run"]]
    model_record = stored.model
    names = tuple(str(p) for p in stored.parameter_names)
    values = np.array([model_record.parameters[p] for p in names])
    model = lab.model_from_record(model_record) or model_record
    settings = RunSettings.from_dict({**stored.settings, "seed": stored.attrs.get("seed", 0)})
    return SensitivityRecord(model_record.name, model, settings, np.asarray(run.time),
                             np.asarray(run.y), np.asarray(stored.dy_dp), names, values,
                             tuple(run.state_names), run.result)
