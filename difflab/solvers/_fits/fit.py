"""``fit``: parameters of a model estimated from observations, with standard errors.

The optimizer runs on the device in jitted chunks of steps; between chunks the loss
history comes to the host (``fit_stream`` yields it, ``fit(callback=...)`` passes it on),
which drives the app's live loss curve and the CLI's progress. Several starts are fitted
at once: ``vmap`` over the starts, laid over every device like a sweep's batch.
"""

import dataclasses
import functools
import inspect
import math
import time
from collections.abc import Callable, Iterator

import jax
import jax.numpy as jnp
import numpy as np

from .. import _sharding
from ...models import AbstractFieldModel
from .._datasets import to_dataset
from .._field_fits import as_field_observations, field_setup
from .._result import Result
from .._settings import DEFAULTS, SolveSettings, solve_arguments
from .._simulate import simulate
from .diagnosis import covariance, notes
from .methods import method_name, resolve_method
from .observations import Observations, as_observations
from .problem import check_model, start_points
from .run import Runner
from .setup import setup

DEFAULT_MAX_STEPS = {"lm": 200, "gauss_newton": 200, "dogleg": 200, "bfgs": 500, "adam": 2000}
DEFAULT_CHUNK = {"adam": 50}
FIT_DEFAULTS = {**DEFAULTS, "rtol": 1e-8, "atol": 1e-10}  # a smooth loss for the optimizer

_MESSAGES = {
    Result.SUCCESS: "converged",
    Result.MAX_STEPS_REACHED: "the optimizer took fit_max_steps steps without converging; "
    "raise fit_max_steps, loosen fit_rtol/fit_atol, or start closer to the optimum",
    Result.DIVERGED: "the loss or the parameters became NaN or infinite (the simulation "
    "failed at the parameters tried); narrow the bounds or start closer",
    Result.STEP_SIZE_TOO_SMALL: "the simulation's step size fell below its minimum",
    Result.SOLVER_FAILED: "the optimizer failed (its linear solve or line search broke down)",
}


class FitError(RuntimeError):
    """A fit did not succeed; ``result`` holds its :class:`FitResult` all the same."""

    def __init__(self, text: str, result: "FitResult"):
        super().__init__(text)
        self.result = result


@dataclasses.dataclass(frozen=True, eq=False)
class FitResult:
    """What a fit found.

    ``params`` and ``stderr`` map each fitted scalar parameter to its best value and
    standard error; ``correlation`` (and ``covariance``) follow the order of ``names``,
    from the Gauss-Newton approximation ``(J^T J)^-1`` of the covariance at the optimum
    (scaled by ``chi2 / dof`` when the data's noise level was not given). ``model`` is the
    fitted model (network weights included); ``loss_history`` the loss ``0.5 * chi^2``
    after each optimizer step (the lowest over the starts); ``result`` a
    :class:`Result` code, explained by ``message``. A fit read from a session file has
    its ``name`` there (and NaN for what the file does not keep, such as each start).
    ``run``: the fitted model's :class:`Trajectory` over the fit's span, computed when the
    fit ended (saving writes it, never simulates). ``null_directions`` (k, P): unit
    vectors of parameter changes the data do not determine (see :attr:`notes`).
    """

    names: tuple[str, ...]
    params: dict[str, float]
    stderr: dict[str, float]
    covariance: np.ndarray
    correlation: np.ndarray
    model: object
    start_model: object
    loss: float
    chi2: float
    n_data: int
    dof: int
    absolute_sigma: bool
    loss_history: np.ndarray
    parameter_history: np.ndarray
    result: Result
    n_steps: int
    method: str
    start_losses: np.ndarray
    start_params: np.ndarray
    best_start: int
    data: Observations
    settings: dict
    max_steps: int
    learning_rate: float | None
    wall_time: float
    stopped: bool = False
    n_devices: int = 1
    name: str | None = None
    null_directions: np.ndarray | None = None
    run: object = None

    @property
    def ok(self) -> bool:
        return self.result == Result.SUCCESS

    @property
    def message(self) -> str:
        """How the optimizer ended, then what the statistics say against the fit."""
        return "; ".join((self.ended, *self.notes))

    @property
    def ended(self) -> str:
        """How the optimizer ended ("converged": it stopped where its steps became small)."""
        if self.stopped:
            return f"stopped after {self.n_steps} steps, before converging"
        return _MESSAGES[self.result]

    @property
    def notes(self) -> tuple[str, ...]:
        """What the statistics say against trusting the fit, one sentence each: more
        parameters than data, combinations the data do not determine, a reduced χ² far
        from 1 with the noise given. Empty when they say nothing against it."""
        return notes(self.names, [self.params[n] for n in self.names], self.null_directions,
                     self.n_data, self.dof, self.chi2, self.absolute_sigma)

    @property
    def good(self) -> bool:
        """The optimizer converged and the statistics say nothing against the fit."""
        return self.ok and not self.notes

    @property
    def reduced_chi2(self) -> float:
        return self.chi2 / self.dof if self.dof > 0 else math.nan

    def interval(self, name: str, k: float = 2.0) -> tuple[float, float]:
        """``params[name] -/+ k * stderr[name]``."""
        return self.params[name] - k * self.stderr[name], self.params[name] + k * self.stderr[name]

    def trajectory(self, **overrides):
        """The fitted model over the fit's time span (settings as fitted): the run the fit
        kept, or simulated anew when it has none or ``overrides`` change a setting."""
        if self.run is not None and not overrides:
            return self.run
        settings = {**self.settings, **overrides}
        return simulate(self.model, settings.pop("t1"), throw=False, **settings)

    def summary(self) -> str:
        """A table of the fitted values, standard errors and the fit's statistics."""
        lines = [f"{self.method} fit: {self.ended} after {self.n_steps} steps; "
                 f"chi^2 = {self.chi2:.6g} for {self.n_data} values ({self.dof} dof)"]
        lines.extend(f"  but: {note}" for note in self.notes)
        for name in self.names:
            lines.append(f"  {name:>12} = {self.params[name]:.6g} +/- {self.stderr[name]:.3g}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<FitResult {self.method}: {self.message}; " + ", ".join(
            f"{n}={self.params[n]:.4g}+/-{self.stderr[n]:.2g}" for n in self.names) + ">"

    def to_xarray(self):
        """This result as an ``xarray.Dataset``: the variables, coordinates and attributes
        of its group in a session file (``docs/hdf5-schema.md``)."""
        return to_dataset(self)


@dataclasses.dataclass(frozen=True, eq=False)
class FitProgress:
    """One chunk of optimizer steps, on the host.

    ``losses[i]`` and ``parameters[i]`` are the lowest loss over the starts after step
    ``step - len(losses) + i + 1`` and the scalar parameters of the start that has it;
    ``start_losses`` the current loss of every start, ``start_params`` its scalar
    parameters (n_starts, P) and ``start_done`` whether it has finished. The last progress
    of a fit has ``done`` set and carries the :class:`FitResult`.
    """

    step: int
    losses: np.ndarray
    parameters: np.ndarray
    start_losses: np.ndarray
    names: tuple[str, ...]
    done: bool = False
    result: FitResult | None = None
    start_params: np.ndarray | None = None
    start_done: np.ndarray | None = None

    @property
    def loss(self) -> float:
        """The lowest loss so far."""
        if len(self.losses):
            return float(self.losses[-1])
        finite = self.start_losses[np.isfinite(self.start_losses)]
        return float(finite.min()) if finite.size else math.nan


def fit_stream(model, data, params=None, *, sigma=None, method="lm", t0=None, t1=None,
               dt=None, solver=None, n_save: int | None = None, y0=None, rtol=None,
               atol=None, max_steps: int | None = None, settings: SolveSettings | None = None,
               bounds=None, log_scale=None, starts=1, seed: int = 0,
               fit_max_steps: int | None = None, fit_rtol=1e-8, fit_atol=1e-8,
               learning_rate=1e-2, chunk_size: int | None = None,
               devices=None) -> Iterator[FitProgress]:
    """Fit ``params`` of ``model`` to ``data``, yielding a :class:`FitProgress` per chunk.

    Args:
        model: a :class:`difflab.Model`; its current values are the first start. Or a
            field model: then ``data`` are snapshots of its fields (a ``FieldTrajectory``
            or ``{"t": ts, "u": (len(ts), *grid.shape)}``) at times ``t0`` plus whole
            multiples of one spacing, the scalar parameters are fitted with a fixed-step
            field solver, and ``sigma`` is a number or ``{field: number}``
            (``docs/fields.md``).
        data: observations: an :class:`difflab.solvers.Observations`, a dict
            ``{"t": ts, "prey": ..., ...}`` or a Trajectory (read a ``.csv`` or ``.h5``
            file with ``difflab.io.read_observations``).
        params: names of scalar parameters and/or array fields (a network) to fit
            (default: all scalar parameters and array fields); of a field model, also
            names of its fields, each fitted as its initial value (``y0``).
        sigma: the noise standard deviation of the data: a number, ``{state: number}``
            or an array like the data; default: the data's own ``sigma`` columns, else
            unknown (then the standard errors are scaled by the residual variance).
        method: ``"lm"`` (Levenberg-Marquardt, optimistix; default), ``"bfgs"``,
            ``"adam"`` (optax; for large or neural models), ``"dogleg"``,
            ``"gauss_newton"``, or an optimistix solver or optax transformation.
        t0, t1, dt, solver, n_save, y0, rtol, atol, max_steps, settings: the simulation,
            as in :func:`simulate`; ``t1`` defaults to the last observed time, ``rtol``
            and ``atol`` of an adaptive solver to 1e-8 and 1e-10.
        bounds: ``{name: (lo, hi)}``, overriding the model's declared bounds (``None``
            for unbounded). Fitted values always stay inside their bounds.
        log_scale: fit positive parameters on a log scale (``None``: every parameter whose
            value and lower bound are positive; or ``True``/``False``/``{name: bool}``).
        starts: the number of starts (the model's values, then values drawn within the
            bounds with ``seed``), or ``{name: [values...]}``. All run at once.
        fit_max_steps: the most optimizer steps (default 200 for LM, 500 BFGS, 2000
            Adam).
        fit_rtol, fit_atol: the optimizer's convergence tolerances (LM, BFGS): it stops
            when the step and the change of the loss fall below them.
        learning_rate: Adam's step size.
        chunk_size: optimizer steps per chunk sent to the host (default 10; Adam 50).
        devices: the devices the starts are laid over (default all of them, at most
            one per start), as :func:`difflab.sweep` takes them.

    Everything is checked before this returns (a bad value raises ``ValueError`` at
    once, a fit whose simulations would exceed the step limit included); the optimizer
    runs as the generator is advanced. Send ``"stop"`` to the generator to end the fit
    early: it answers the :class:`FitResult` of the steps so far.
    """
    started = time.perf_counter()
    fields = isinstance(model, AbstractFieldModel)  # snapshots of fields (_field_fits)
    if not fields:
        check_model(model)
    obs = as_field_observations(data, model) if fields else as_observations(data)
    optimizer = resolve_method(method)
    name = method_name(optimizer)
    fit_max_steps = int(fit_max_steps if fit_max_steps is not None
                        else DEFAULT_MAX_STEPS.get(name, 500))
    chunk = int(chunk_size or DEFAULT_CHUNK.get(name, 10))
    if fit_max_steps < 1 or chunk < 1:
        raise ValueError("fit_max_steps and chunk_size must be at least 1")
    solve = solve_arguments(settings, FIT_DEFAULTS, t0=t0, t1=t1, dt=dt, solver=solver,
                            n_save=n_save, y0=y0, rtol=rtol, atol=atol, max_steps=max_steps)
    problem, scales, args, settings, absolute = (field_setup if fields else setup)(
        model, obs, params, solve, bounds=bounds, log_scale=log_scale, sigma=sigma)
    args["optimizer"] = {"rtol": jnp.asarray(fit_rtol, float),
                         "atol": jnp.asarray(fit_atol, float),
                         "learning_rate": jnp.asarray(learning_rate, float)}
    u_rows = start_points(problem.names, scales, model, starts, seed)
    chosen = _sharding.select_devices(devices)
    mesh = _sharding.batch_mesh(chosen[: min(len(chosen), len(u_rows))])
    runner = Runner(optimizer, problem, scales, mesh, args, model, u_rows, chunk)

    def result(stopped=False):
        outcome = runner.finish(adam=name in ("adam", "optax"), stopped=stopped)
        return _result(runner, outcome, model, obs, settings, absolute, name, fit_max_steps,
                       learning_rate, started, stopped)

    return _advance(runner, result, fit_max_steps)


def _advance(runner, result, fit_max_steps) -> Iterator[FitProgress]:
    """The chunks of a fit set up (and checked) by ``fit_stream``."""
    names = runner.problem.names
    while runner.steps < fit_max_steps and not runner.all_done:
        step, losses, parameters, start_losses = runner.advance(fit_max_steps - runner.steps)
        command = yield FitProgress(step, losses, parameters, start_losses, names,
                                    start_params=runner.last_params.copy(),
                                    start_done=runner.done.copy())
        if command == "stop":
            yield result(stopped=True)
            return
    yield FitProgress(runner.steps, np.zeros(0), np.zeros((0, len(names))),
                      runner.last_loss.copy(), names, True, result(),
                      runner.last_params.copy(), runner.done.copy())


def _with_arguments_of(stream):
    """Give the decorated function every parameter of ``stream``, then its own keyword-only
    ones: one definition of the arguments, shown by ``help`` and checked on each call."""

    def decorate(fn):
        own = inspect.signature(fn)
        extra = [p for p in own.parameters.values() if p.kind is p.KEYWORD_ONLY]
        signature = inspect.signature(stream).replace(
            parameters=[*inspect.signature(stream).parameters.values(), *extra],
            return_annotation=own.return_annotation)

        @functools.wraps(fn)
        def checked(*args, **kwargs):
            try:
                signature.bind(*args, **kwargs)
            except TypeError as error:  # an unknown or missing argument, by name
                raise TypeError(f"{fn.__name__}() {error}") from None
            return fn(*args, **kwargs)

        checked.__signature__ = signature
        return checked

    return decorate


@_with_arguments_of(fit_stream)
def fit(model, data, params=None, *, callback: Callable | None = None, throw: bool = True,
        **arguments) -> FitResult:
    """Fit ``params`` of ``model`` to ``data``; returns a :class:`FitResult`.

    Takes every argument of :func:`fit_stream` (its signature lists them), plus
    ``callback``, called with each :class:`FitProgress` as the fit runs (return ``False``
    from it to stop early), and ``throw``: raise :class:`FitError` (carrying the result)
    unless the fit succeeded.
    """
    result = None
    stream = fit_stream(model, data, params, **arguments)
    for progress in stream:
        if progress.done:
            result = progress.result
        if callback is not None and callback(progress) is False and not progress.done:
            result = stream.send("stop")
            break
    stream.close()
    if throw and not result.ok:
        raise FitError(f"fit of {type(model).__name__}: {result.message}", result)
    return result


# -- the result -------------------------------------------------------------------------


def _result(runner, outcome, model, obs, settings, absolute, name, max_steps,
            learning_rate, started, stopped) -> FitResult:
    problem, o = runner.problem, outcome
    n_data = obs.n_values
    n_free = sum(int(np.size(x)) for x in jax.tree.leaves(o.u["free"]))
    dof = n_data - len(problem.names) - n_free
    chi2 = float(np.sum(o.residuals ** 2))
    c = covariance(o.jacobian, chi2, dof, absolute)
    settings = problem.fitted_settings(settings, o.u)
    return FitResult(
        names=problem.names, params=dict(zip(problem.names, map(float, o.params))),
        stderr=dict(zip(problem.names, map(float, c.stderr))), covariance=c.covariance,
        correlation=c.correlation, null_directions=c.null_directions, run=_fitted_run(o.model, settings),
        model=o.model, start_model=model, loss=0.5 * chi2, chi2=chi2, n_data=n_data, dof=dof,
        absolute_sigma=absolute, loss_history=o.history, parameter_history=o.param_history,
        result=o.result, n_steps=runner.steps, method=name, start_losses=o.start_losses,
        start_params=o.start_params, best_start=o.best, data=obs, settings=settings,
        max_steps=max_steps, learning_rate=float(learning_rate) if name == "adam" else None,
        wall_time=time.perf_counter() - started, stopped=stopped, n_devices=runner.mesh.size)


def _fitted_run(model, settings):
    """The fitted model's run, kept with the fit so that showing or saving it never
    simulates again."""
    rest = {k: v for k, v in settings.items() if k != "t1"}
    return simulate(model, settings["t1"], throw=False, **rest)
