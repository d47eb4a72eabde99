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
        return dict(method=self.method, fit_max_steps=self.max_steps, t0=s.t0, dt=s.dt,
                    solver=s.solver)


@dataclasses.dataclass
class FitRecord:
    """A fit as the app holds it and a session file stores it.

    ``losses`` and ``parameters``: after each optimizer step. Once the fit has ended,
    ``result`` is its :class:`difflab.Result` code, ``message`` says how it ended, and
    ``params``, ``stderr``, ``chi2``, ``dof`` and the fitted ``model`` are what it found.
    """

    request: FitRequest
    losses: list = dataclasses.field(default_factory=list)
    parameters: list = dataclasses.field(default_factory=list)
    curve: tuple | None = None  # (ts, ys) of the model at the best parameters so far
    result: int | None = None
    message: str = ""
    params: dict = dataclasses.field(default_factory=dict)
    stderr: dict = dataclasses.field(default_factory=dict)
    chi2: float | None = None
    dof: int | None = None
    model: object = None

    @property
    def names(self) -> tuple[str, ...]:
        return self.request.params

    @property
    def ok(self) -> bool:
        return self.result == dl.Result.SUCCESS

    @property
    def best(self) -> dict[str, float]:
        """The best parameter values so far (the fitted ones once the fit has ended)."""
        if self.params:
            return dict(self.params)
        if not self.parameters:
            return {}
        return dict(zip(self.names, map(float, self.parameters[-1])))

    def estimates(self) -> list[tuple[str, float, float | None, float]]:
        """(name, estimate, standard error or None while running, start value) per parameter."""
        start = self.request.model.parameters()
        best = self.best
        return [(n, best.get(n, float(np.asarray(start[n]))), self.stderr.get(n),
                 float(np.asarray(start[n]))) for n in self.names]

    def statistics(self) -> str:
        """How the fit ended and its chi-square, in words (empty while it runs)."""
        if self.result is None:
            return ""
        if self.chi2 is None:
            return self.message
        return f"{self.message}; χ² = {self.chi2:.6g}, {self.dof} degrees of freedom"


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

    fitted = dl.fit(request.model, request.data, list(request.params), callback=progress,
                    throw=False, **request.fit_kwargs())
    if len(fitted.loss_history) >= len(record.losses):
        record.losses = np.asarray(fitted.loss_history, dtype=float).tolist()
        record.parameters = np.asarray(fitted.parameter_history, dtype=float).tolist()
    record.result, record.message = int(fitted.result), fitted.message
    record.params, record.stderr = dict(fitted.params), dict(fitted.stderr)
    record.chi2, record.dof, record.model = float(fitted.chi2), int(fitted.dof), fitted.model
    record.curve = model_curve(request, record.best)
    return record


def read_data(path) -> dl.io.Observations:
    """Observations from a CSV file (``t`` column, one column per observed state)."""
    return dl.io.read_csv(path)


# -- session files ------------------------------------------------------------------------


def save_fit(writer, name: str, record: FitRecord) -> None:
    """Write a fit into an open :class:`difflab.io.SessionWriter`."""
    request, names = record.request, list(record.names)
    settings = {k: v for k, v in request.settings.as_dict().items() if v is not None}
    settings["t1"] = float(request.data.t[-1])
    data = request.data
    fit = writer.new_fit(model=request.model, parameter_names=names,
                         settings=settings, name=name, optimizer=request.method,
                         loss_name="0.5 * chi^2", max_steps=request.max_steps,
                         data={"time": data.t, "y": data.y, "state_names": list(data.states),
                               "sigma": data.sigma})
    if record.losses:
        fit.append(record.losses, record.parameters)
    info = {}
    if record.params:
        info = {"best_parameters": np.array([record.params[n] for n in names]),
                "stderr": np.array([record.stderr.get(n, np.nan) for n in names]),
                "chi2": record.chi2, "dof": record.dof}
    fit.finish(fitted_model=record.model, result=record.result or 0,
               message=record.message or None, **info)


def load_fits(lab, session) -> None:
    """Read the fits of a session back into ``lab`` (those whose model is available here)."""
    for stored in session.stored("fits"):
        try:
            record = _fit_from_file(lab, stored)
        except (KeyError, ValueError, TypeError) as error:
            lab.log(f"fit {stored.name!r} could not be shown: {error}", "warning")
            continue
        lab.add_result("fit", record, stored.name)


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
    attrs = stored.attrs
    request = FitRequest(model, record_model.name, data, names, settings,
                         str(attrs.get("optimizer", "lm")), attrs.get("max_steps"))
    loss, params = stored.variables["loss"].data, stored.variables["parameters"].data
    record = FitRecord(request, np.asarray(loss, dtype=float).tolist(),
                       np.asarray(params, dtype=float).reshape(-1, len(names)).tolist())
    if "best_parameters" in attrs:  # the fit ended: what it found
        fitted = stored.fitted_model
        record.result = int(attrs.get("result", 0))
        record.message = str(attrs.get("result_message", ""))
        record.params = _by_name(names, attrs["best_parameters"])
        record.stderr = _by_name(names, attrs["stderr"]) if "stderr" in attrs else {}
        record.chi2 = float(attrs["chi2"]) if "chi2" in attrs else None
        record.dof = int(attrs["dof"]) if "dof" in attrs else None
        record.model = lab.model_from_record(fitted) if fitted is not None else None
    return record  # the model curve is computed off the GUI thread when the fit is shown


def _by_name(names, values) -> dict[str, float]:
    return dict(zip(names, map(float, np.atleast_1d(values))))
