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
from collections.abc import Callable, Iterator, Mapping

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .. import _sharding
from .._result import Result
from .._settings import DEFAULTS, SolveSettings, solve_arguments
from .._simulate import DEFAULT_N_SAVE, simulate
from .._steppers.catalog import resolve_solver
from .methods import method_name, resolve_method
from .observations import Observations, as_observations, sigma_array
from .problem import Problem, check_model, make_scale, split_params, start_points
from .run import Runner

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

    @property
    def ok(self) -> bool:
        return self.result == Result.SUCCESS

    @property
    def message(self) -> str:
        if self.stopped:
            return f"stopped after {self.n_steps} steps, before converging"
        return _MESSAGES[self.result]

    @property
    def reduced_chi2(self) -> float:
        return self.chi2 / self.dof if self.dof > 0 else math.nan

    def interval(self, name: str, k: float = 2.0) -> tuple[float, float]:
        """``params[name] -/+ k * stderr[name]``."""
        return self.params[name] - k * self.stderr[name], self.params[name] + k * self.stderr[name]

    def trajectory(self, **overrides):
        """The fitted model simulated over the fit's time span (settings as fitted)."""
        settings = {**self.settings, **overrides}
        return simulate(self.model, settings.pop("t1"), throw=False, **settings)

    def summary(self) -> str:
        """A table of the fitted values, standard errors and the fit's statistics."""
        lines = [f"{self.method} fit: {self.message} after {self.n_steps} steps; "
                 f"chi^2 = {self.chi2:.6g} for {self.n_data} values ({self.dof} dof)"]
        for name in self.names:
            lines.append(f"  {name:>12} = {self.params[name]:.6g} +/- {self.stderr[name]:.3g}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<FitResult {self.method}: {self.message}; " + ", ".join(
            f"{n}={self.params[n]:.4g}+/-{self.stderr[n]:.2g}" for n in self.names) + ">"


@dataclasses.dataclass(frozen=True, eq=False)
class FitProgress:
    """One chunk of optimizer steps, on the host.

    ``losses[i]`` and ``parameters[i]`` are the lowest loss over the starts after step
    ``step - len(losses) + i + 1`` and the scalar parameters of the start that has it;
    ``start_losses`` the current loss of every start. The last progress of a fit has
    ``done`` set and carries the :class:`FitResult`.
    """

    step: int
    losses: np.ndarray
    parameters: np.ndarray
    start_losses: np.ndarray
    names: tuple[str, ...]
    done: bool = False
    result: FitResult | None = None

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
        model: a :class:`difflab.Model`; its current values are the first start.
        data: observations: an :class:`difflab.solvers.Observations`, a dict
            ``{"t": ts, "prey": ..., ...}`` or a Trajectory (read a ``.csv`` or ``.h5``
            file with ``difflab.io.read_observations``).
        params: names of scalar parameters and/or array fields (a network) to fit
            (default: all scalar parameters and array fields).
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

    Send ``"stop"`` to the generator to end the fit early: it answers the
    :class:`FitResult` of the steps so far.
    """
    started = time.perf_counter()
    check_model(model)
    obs = as_observations(data)
    optimizer = resolve_method(method)
    name = method_name(optimizer)
    fit_max_steps = int(fit_max_steps if fit_max_steps is not None
                        else DEFAULT_MAX_STEPS.get(name, 500))
    chunk = int(chunk_size or DEFAULT_CHUNK.get(name, 10))
    if fit_max_steps < 1 or chunk < 1:
        raise ValueError("fit_max_steps and chunk_size must be at least 1")
    solve = solve_arguments(settings, FIT_DEFAULTS, t0=t0, t1=t1, dt=dt, solver=solver,
                            n_save=n_save, y0=y0, rtol=rtol, atol=atol, max_steps=max_steps)
    problem, scales, args, settings, absolute = _setup(
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

    while runner.steps < fit_max_steps and not runner.all_done:
        step, losses, parameters, start_losses = runner.advance(fit_max_steps - runner.steps)
        command = yield FitProgress(step, losses, parameters, start_losses, problem.names)
        if command == "stop":
            yield result(stopped=True)
            return
    yield FitProgress(runner.steps, np.zeros(0), np.zeros((0, len(problem.names))),
                      runner.last_loss.copy(), problem.names, True, result())


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


# -- setting up -----------------------------------------------------------------------


def _setup(model, obs, params, solve, *, bounds, log_scale, sigma):
    scalars, arrays = split_params(model, params)
    scales = tuple(_scale(model, n, bounds, log_scale) for n in scalars)
    for name in bounds or {}:
        if name not in scalars:
            raise ValueError(f"bounds name {name!r}, which is not a fitted scalar parameter")
    index = tuple(model.state_index(s) if s in model.state_names else _unknown_state(model, s)
                  for s in obs.states)
    settings = _span(obs, solve, model)
    static = {k: settings[k] for k in ("solver", "n_save", "max_steps") if k in settings}
    problem = Problem(scalars, tuple(s.kind for s in scales), arrays,
                      eqx.partition(model, eqx.is_array)[1], index, tuple(sorted(static.items())))
    sd, absolute = _noise(obs, sigma)
    f = jnp.result_type(float)
    traced = {k: None if settings.get(k) is None else jnp.asarray(settings[k], f)
              for k in ("t0", "t1", "dt", "y0", "rtol", "atol")}
    args = {"model": eqx.partition(model, eqx.is_array)[0], **traced,
            "t_obs": jnp.asarray(obs.t, f), "y_obs": jnp.asarray(np.nan_to_num(obs.y), f),
            "mask": jnp.asarray(np.isfinite(obs.y)), "weight": jnp.asarray(1.0 / sd, f),
            "bounds": jnp.asarray([[s.lo, s.hi] for s in scales], f).reshape(-1, 2)}
    return problem, scales, args, settings, absolute


def _span(obs, solve, model) -> dict:
    """The simulation's settings, checked against the observed times (``None`` left out)."""
    t0 = float(solve["t0"])
    t1 = float(obs.t.max() if solve["t1"] is None else solve["t1"])
    if not t1 > t0 or obs.t.min() < t0 or obs.t.max() > t1:
        raise ValueError(f"the observations span [{obs.t.min():g}, {obs.t.max():g}], which "
                         f"must lie within (t0, t1] = ({t0:g}, {t1:g}]")
    n_save, dt = solve["n_save"], solve["dt"]
    if n_save is None and dt is not None and not resolve_solver(solve["solver"], model).adaptive:
        n_save = min(DEFAULT_N_SAVE, math.ceil((t1 - t0) / float(dt) * (1 - 1e-12)) + 1)
    settings = {**solve, "t0": t0, "t1": t1, "n_save": n_save}
    settings.pop("key", None)
    return {k: v for k, v in settings.items() if v is not None}


def _unknown_state(model, state):
    raise ValueError(f"the data observe {state!r}, which is not a state of "
                     f"{type(model).__name__} ({', '.join(model.state_names)})")


def _scale(model, name, bounds, log_scale):
    spec = model.parameter_specs()[name]
    chosen = bounds[name] if bounds and name in bounds else spec.bounds
    if isinstance(log_scale, Mapping):
        log = log_scale.get(name)
    elif isinstance(log_scale, (list, tuple, set)):
        log = name in log_scale
    else:
        log = log_scale
    return make_scale(name, float(getattr(model, name)), chosen, log)


def _noise(obs: Observations, sigma):
    if sigma is not None:
        return sigma_array(sigma, obs.y.shape, obs.states), True
    if obs.sigma is not None:
        sd = obs.sigma
        if np.any(np.isfinite(obs.y) & ~np.isfinite(sd)):
            raise ValueError("the data's sigma is missing for some observed values")
        return np.where(np.isfinite(sd), sd, 1.0), True
    return np.ones(obs.y.shape), False


# -- the result -------------------------------------------------------------------------


def _result(runner, outcome, model, obs, settings, absolute, name, max_steps,
            learning_rate, started, stopped) -> FitResult:
    problem, o = runner.problem, outcome
    n_data = int(np.isfinite(obs.y).sum())
    n_free = sum(int(np.size(x)) for x in jax.tree.leaves(o.u["free"]))
    dof = n_data - len(problem.names) - n_free
    chi2 = float(np.sum(o.residuals ** 2))
    cov = _covariance(o.jacobian, chi2, dof, absolute)
    se = np.sqrt(np.clip(np.diag(cov), 0, None)) if cov.size else np.zeros(0)
    with np.errstate(divide="ignore", invalid="ignore"):
        corr = cov / np.outer(se, se) if cov.size else cov
    return FitResult(
        names=problem.names, params=dict(zip(problem.names, map(float, o.params))),
        stderr=dict(zip(problem.names, map(float, se))), covariance=cov, correlation=corr,
        model=o.model, start_model=model, loss=0.5 * chi2, chi2=chi2, n_data=n_data, dof=dof,
        absolute_sigma=absolute, loss_history=o.history, parameter_history=o.param_history,
        result=o.result, n_steps=runner.steps, method=name, start_losses=o.start_losses,
        start_params=o.start_params, best_start=o.best, data=obs, settings=settings,
        max_steps=max_steps, learning_rate=float(learning_rate) if name == "adam" else None,
        wall_time=time.perf_counter() - started, stopped=stopped, n_devices=runner.mesh.size)


def _covariance(jac, chi2, dof, absolute) -> np.ndarray:
    """``(J^T J)^-1`` (pseudo-inverse where singular), times ``chi2 / dof`` unless the
    noise level was given."""
    if jac.size == 0:
        return np.zeros((jac.shape[-1], jac.shape[-1]))
    jtj = jac.T @ jac
    cov = np.linalg.pinv(jtj, rcond=1e-12, hermitian=True)
    singular = np.linalg.matrix_rank(jtj, hermitian=True) < jtj.shape[0]
    if singular:
        cov = np.where(np.eye(len(cov), dtype=bool), np.inf, np.nan)
    if not absolute:
        cov = cov * (chi2 / dof if dof > 0 else np.inf)
    return cov
