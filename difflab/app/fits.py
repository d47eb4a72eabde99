"""Fits of the app: observations from a CSV, the chosen parameters, a live loss history.

Qt-free: :func:`run_fit` calls :func:`difflab.fit` and, after each chunk of optimizer
steps, simulates the model at the best parameters so far, so the app can draw the loss
curve and the data-versus-model overlay as the fit runs; ``stop()`` ends the fit early
(the result so far is kept). :func:`save_fit` and :func:`load_fits` keep fits in session
files (``/fits/<name>`` with its data, and the fitted run).
"""

import dataclasses
from collections.abc import Callable

import numpy as np

import difflab as dl

from .runs import RunSettings

METHODS = ("lm", "bfgs", "adam")


@dataclasses.dataclass(frozen=True)
class FitRequest:
    """What to fit: the model (its values are the start), the data, the parameters."""

    model: dl.Model
    model_name: str
    data: dl.io.Observations
    params: tuple[str, ...]
    settings: RunSettings
    method: str = "lm"
    max_steps: int | None = None

    def __post_init__(self):
        if not self.params:
            raise ValueError("choose at least one parameter to fit")
        unknown = [s for s in self.data.states if s not in self.model.state_names]
        if unknown:
            raise ValueError(f"the data observe {unknown[0]!r}, which {self.model_name} does not "
                             f"have (its states are {', '.join(self.model.state_names)})")

    def fit_kwargs(self) -> dict:
        s = self.settings
        return dict(method=self.method, max_steps=self.max_steps, t0=s.t0, dt=s.dt,
                    solver=s.solver)


@dataclasses.dataclass
class FitRecord:
    """A fit as the app holds it: the loss and parameters after each step, the result."""

    request: FitRequest
    losses: list = dataclasses.field(default_factory=list)
    parameters: list = dataclasses.field(default_factory=list)
    result: object = None  # difflab.FitResult once the fit has ended
    curve: tuple | None = None  # (ts, ys) of the model at the best parameters so far

    @property
    def names(self) -> tuple[str, ...]:
        return self.request.params

    @property
    def best(self) -> dict[str, float]:
        """The best parameter values so far (the fitted ones once the fit has ended)."""
        if self.result is not None:
            return dict(self.result.params)
        if not self.parameters:
            return {}
        return dict(zip(self.names, map(float, self.parameters[-1])))

    def estimates(self) -> list[tuple[str, float, float | None, float]]:
        """(name, estimate, standard error or None while running, start value) per parameter."""
        start = self.request.model.parameters()
        best = self.best
        stderr = self.result.stderr if self.result is not None else {}
        return [(n, best.get(n, float(np.asarray(start[n]))), stderr.get(n),
                 float(np.asarray(start[n]))) for n in self.names]


def model_curve(request: FitRequest, values: dict[str, float]) -> tuple[np.ndarray, np.ndarray]:
    """The model at ``values`` over the data's time span (what the overlay draws)."""
    s = request.settings
    model = request.model.replace(**values)
    t1 = float(request.data.t[-1])
    if not t1 > s.t0:
        t1 = s.t0 + 1.0
    traj = dl.simulate(model, t1, t0=s.t0, dt=s.dt, solver=s.solver, throw=False)
    return np.asarray(traj.ts), np.asarray(traj.ys)


def run_fit(request: FitRequest, emit: Callable = lambda record: None,
            stop: Callable[[], bool] = lambda: False) -> FitRecord:
    """Fit ``request`` with :func:`difflab.fit`, calling ``emit(record)`` after each chunk."""
    record = FitRecord(request)

    def progress(p):
        if p.done:
            return None
        record.losses.extend(np.asarray(p.losses, dtype=float).tolist())
        record.parameters.extend(np.asarray(p.parameters, dtype=float).tolist())
        if record.parameters:
            record.curve = model_curve(request, record.best)
        emit(record)
        return False if stop() else None

    record.result = dl.fit(request.model, request.data, list(request.params), callback=progress,
                           throw=False, **request.fit_kwargs())
    if len(record.result.loss_history) >= len(record.losses):
        record.losses = np.asarray(record.result.loss_history, dtype=float).tolist()
        record.parameters = np.asarray(record.result.parameter_history, dtype=float).tolist()
    record.curve = model_curve(request, record.best)
    return record


def read_data(path) -> dl.io.Observations:
    """Observations from a CSV file (``t`` column, one column per observed state)."""
    return dl.io.read_csv(path)


# -- session files ------------------------------------------------------------------------


def save_fit(writer, name: str, record: FitRecord) -> None:
    """Write a fit into an open :class:`difflab.io.SessionWriter`."""
    request, result = record.request, record.result
    settings = {k: v for k, v in request.settings.as_dict().items() if v is not None}
    settings["t1"] = float(request.data.t[-1])
    data = request.data
    fit = writer.new_fit(model=request.model, parameter_names=list(record.names),
                         settings=settings, name=name, optimizer=request.method,
                         loss_name="0.5 * chi^2", max_steps=request.max_steps,
                         data={"time": data.t, "y": data.y, "state_names": list(data.states),
                               "sigma": data.sigma})
    if record.losses:
        fit.append(record.losses, record.parameters)
    info = {}
    if result is not None:
        info = {"stderr": np.array([result.stderr[n] for n in record.names]),
                "best_parameters": np.array([result.params[n] for n in record.names]),
                "chi2": float(result.chi2), "dof": int(result.dof)}
    fit.finish(fitted_model=None if result is None else result.model,
               result=0 if result is None else int(result.result),
               message=None if result is None else result.message, **info)


def load_fits(lab, session) -> None:
    """Read the fits of a session back into ``lab`` (built-in models only)."""
    for stored in session.fits:
        try:
            record = _fit_from_file(lab, stored)
        except (KeyError, ValueError, TypeError) as error:
            lab.log(f"fit {stored.name!r} could not be shown: {error}", "warning")
            continue
        lab.add_result("fit", record, stored.name)


@dataclasses.dataclass(frozen=True)
class StoredFit:
    """What a session file says about a finished fit (a stand-in for ``FitResult``)."""

    params: dict
    stderr: dict
    message: str
    model: object


def _fit_from_file(lab, stored) -> FitRecord:
    record_model = stored.model
    model = lab.model_from_record(record_model)
    if model is None:
        raise ValueError(f"it uses the model file {record_model.path}, not loaded here")
    group = stored.data
    if group is None:
        raise ValueError("it holds no data")
    states = tuple(group["state"].data)
    sigma = np.asarray(group["sigma"].data) if "sigma" in group else None
    data = dl.io.Observations(np.asarray(group["time"].data), np.asarray(group["y"].data),
                              states, sigma)
    settings = RunSettings.from_dict({**stored.settings, "seed": stored.attrs.get("seed", 0)})
    names = stored.parameter_names
    request = FitRequest(model, record_model.name, data, names, settings,
                         str(stored.attrs.get("optimizer", "lm")))
    record = FitRecord(request, np.asarray(stored.loss, dtype=float).tolist(),
                       np.asarray(stored.parameters, dtype=float).reshape(-1, len(names)).tolist())
    best = stored.attrs.get("best_parameters")
    if best is not None:
        stderr = stored.attrs.get("stderr")
        fitted = stored.fitted_model
        record.result = StoredFit(
            dict(zip(names, map(float, np.atleast_1d(best)))),
            dict(zip(names, map(float, np.atleast_1d(stderr)))) if stderr is not None else {},
            str(stored.attrs.get("result_message", "")),
            lab.model_from_record(fitted) if fitted is not None else None)
    return record  # the model curve is computed off the GUI thread when the fit is shown
