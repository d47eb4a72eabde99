"""Fits of the app: observations from a CSV, the chosen parameters, a live loss history.

Qt-free: :func:`run_fit` calls :func:`difflab.fit` and, after each chunk of optimizer
steps, simulates the model at the best parameters so far, so the app can draw the loss
curve and the data-versus-model overlay as the fit runs; ``stop()`` ends the fit early
(the result so far is kept). A fit is a :class:`difflab.FitResult`, saved and read back
as session files store it (``/fits/<name>`` with its data, and the fitted run).
"""

import dataclasses
from collections.abc import Callable

import numpy as np

import difflab as dl

from .runs import RunSettings, params_of

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
    sigma: float | None = None

    def __post_init__(self):
        if not self.params:
            raise ValueError("choose at least one parameter to fit")
        if self.sigma is not None and not (np.isfinite(self.sigma) and self.sigma > 0):
            raise ValueError(f"the noise sigma must be a positive number, not {self.sigma:g}")
        unknown = [s for s in self.data.states if s not in self.model.state_names]
        if unknown:
            raise ValueError(f"the data observe {unknown[0]!r}, which {self.model_name} does not "
                             f"have (its states are {', '.join(self.model.state_names)})")

    def observations(self) -> dl.io.Observations:
        """The data, with the typed noise level where the data give none."""
        data = self.data
        if self.sigma is None or data.sigma is not None:
            return data
        return dl.io.Observations(data.t, data.y, data.states, np.full(data.y.shape, self.sigma))

    def fit_kwargs(self) -> dict:
        s = self.settings
        return dict(method=self.method, fit_max_steps=self.max_steps, t0=s.t0, dt=s.dt,
                    solver=s.solver)


@dataclasses.dataclass
class FitView:
    """What the fit panel draws: a fit as it runs, or a finished :class:`difflab.FitResult`.

    ``losses`` and ``parameters``: after each optimizer step; ``curve``: ``(ts, ys)`` of
    the model at the best parameters so far; ``fit``: the result, once the fit has ended
    (the lab keeps only that), and ``stats`` its :class:`difflab.solvers.FitStatistics`.
    ``settings``: ``simulate``'s arguments (``t1`` included) for the curve.
    """

    model: object
    model_name: str
    data: dl.io.Observations
    names: tuple[str, ...]
    settings: dict
    losses: list = dataclasses.field(default_factory=list)
    parameters: list = dataclasses.field(default_factory=list)
    curve: tuple | None = None
    fit: dl.FitResult | None = None
    stats: dl.solvers.FitStatistics | None = None

    @classmethod
    def of(cls, fit: dl.FitResult, model_name: str) -> "FitView":
        """The view of a finished fit (one read from a session file, say)."""
        return cls(fit.start_model, model_name, fit.data, tuple(fit.names), dict(fit.settings),
                   np.asarray(fit.loss_history, dtype=float).tolist(),
                   np.asarray(fit.parameter_history, dtype=float).tolist(), fit=fit)

    @property
    def ok(self) -> bool:
        """The optimizer converged ("converged" says no more than that)."""
        return self.fit is not None and self.fit.ok

    @property
    def good(self) -> bool:
        """The optimizer converged and the statistics say nothing against the fit."""
        return self.fit is not None and self.fit.good

    @property
    def state_names(self) -> tuple[str, ...]:
        return tuple(self.model.state_names)

    @property
    def best(self) -> dict[str, float]:
        """The best parameter values so far (the fitted ones once the fit has ended)."""
        if self.fit is not None and np.all(np.isfinite(list(self.fit.params.values()))):
            return dict(self.fit.params)
        if not self.parameters:
            return {}
        return dict(zip(self.names, map(float, self.parameters[-1])))

    def estimates(self) -> list[tuple[str, float, float | None, float]]:
        """(name, estimate, standard error or None while running, start value) per parameter."""
        start, best = params_of(self.model), self.best
        stderr = {} if self.fit is None else self.fit.stderr
        return [(n, best.get(n, start.get(n, np.nan)), stderr.get(n), start.get(n, np.nan))
                for n in self.names]

    def statistics(self) -> str:
        """How the optimizer ended, the chi-square, then what the statistics say against
        the fit (more parameters than data, combinations the data do not determine, a
        reduced χ² far from 1 with the noise given), in words; empty while it runs."""
        if self.fit is None:
            return ""
        text = self.fit.ended
        if np.isfinite(self.fit.chi2):
            text += f"; χ² = {self.fit.chi2:.6g}, {self.fit.dof} degrees of freedom"
        return text + "".join(f". But {note}" for note in self.fit.notes)

    def complete(self) -> None:
        """Compute the model curve and the statistics of a finished fit (simulations: run
        it off the GUI thread)."""
        run = None if self.fit is None else self.fit.run
        if self.curve is None and run is not None:  # the run the fit kept
            self.curve = np.asarray(run.ts), np.asarray(run.ys)
        if self.curve is None and self.best and isinstance(self.model, dl.Model):
            self.curve = model_curve(self, self.best)
        if self.stats is None and self.fit is not None and self.fit.data is not None \
                and isinstance(self.fit.model, dl.Model) and np.isfinite(self.fit.chi2):
            self.stats = dl.solvers.fit_statistics(self.fit)


def model_curve(view: FitView, values: dict[str, float]) -> tuple[np.ndarray, np.ndarray]:
    """The model at ``values`` over the data's time span (what the overlay draws)."""
    settings = dict(view.settings)
    traj = dl.simulate(view.model.replace(**values), settings.pop("t1"), throw=False,
                       **settings)
    return np.asarray(traj.ts), np.asarray(traj.ys)


def run_fit(request: FitRequest, emit: Callable = lambda view: None,
            stop: Callable[[], bool] = lambda: False) -> FitView:
    """Fit ``request`` with :func:`difflab.fit`, calling ``emit(view)`` after each chunk."""
    s = request.settings
    t1 = float(request.data.t[-1])
    settings = {k: v for k, v in dict(t0=s.t0, dt=s.dt, solver=s.solver).items()
                if v is not None}
    view = FitView(request.model, request.model_name, request.data, request.params,
                   {**settings, "t1": t1 if t1 > s.t0 else s.t0 + 1.0})

    def progress(p):
        if p.done:
            return None
        view.losses.extend(np.asarray(p.losses, dtype=float).tolist())
        view.parameters.extend(np.asarray(p.parameters, dtype=float).tolist())
        if view.parameters:
            view.curve = model_curve(view, view.best)
        emit(view)
        return False if stop() else None

    fitted = dl.fit(request.model, request.observations(), list(request.params),
                    callback=progress, throw=False, **request.fit_kwargs())
    view = FitView.of(fitted, request.model_name)
    view.complete()
    return view


def read_data(path) -> dl.io.Observations:
    """Observations from a CSV file (``t`` column, one column per observed state)."""
    return dl.io.read_csv(path)


# -- session files ------------------------------------------------------------------------


def load_fits(lab, session) -> None:
    """Read the fits of a session back into ``lab``."""
    for stored in session.stored("fits"):
        try:
            fit = session.fits[stored.name]
        except (KeyError, ValueError, TypeError) as error:
            lab.log(f"fit {stored.name!r} could not be shown: {error}", "warning")
            continue
        if fit.data is None:
            lab.log(f"fit {stored.name!r} holds no data; it is not shown", "warning")
            continue
        models = {k: lab.model_from_record(getattr(fit, k)) if
                  isinstance(getattr(fit, k), dl.io.ModelRecord) else None
                  for k in ("model", "start_model")}
        fit = dataclasses.replace(fit, **{k: m for k, m in models.items() if m is not None})
        lab.add_result("fit", fit, stored.name)
