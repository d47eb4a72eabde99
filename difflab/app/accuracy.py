"""What the app chooses for settings left on auto: a fixed step small enough for an
accurate curve, and as many saved points as the plot can show.

A fixed step on auto starts at the engine's default, ``(t1 - t0) / 1000``. Its local
error is estimated by step doubling (one step of ``dt`` against two of ``dt / 2``) from
every saved state of that run; summed over the run's steps and measured against each
state's range, it must stay under :data:`TOLERANCE` (a fraction of a pixel, before any
growth by the dynamics). Otherwise the step shrinks as the method's order says it must
and the run is made again. The run records the step taken, so a script given its
settings makes the same run.
"""

import math

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

import difflab as dl

TOLERANCE = 1e-3  # summed local error over the run, relative to each state's range
SAFETY = 0.8
MAX_REFINEMENTS = 4
MAX_AUTO_STEPS = 2_000_000
MIN_POINTS, MAX_POINTS = 1001, 20_000


def points_for_width(pixels: int) -> int:
    """Saved points for a plot ``pixels`` wide: two per pixel, from 1001 to 20,000."""
    return int(min(max(2 * int(pixels), MIN_POINTS), MAX_POINTS))


@eqx.filter_jit
def _doubling(model, stepper, ts, ys, h):
    def one(t, y):
        whole = stepper.step(model, t, y, h, None)
        half = stepper.step(model, t, y, h / 2, None)
        halves = stepper.step(model, t + h / 2, half, h / 2, None)
        return jnp.abs(whole - halves) / (2.0**stepper.order - 1)

    return jax.vmap(one)(ts, ys)


def run_error(run: dl.Trajectory, stepper) -> float:
    """The local error of ``run``'s step summed over its steps, relative to each state's
    range (step doubling at the saved states); ``inf`` for a run that failed."""
    ys = np.asarray(run.ys)
    if not run.ok or not np.all(np.isfinite(ys)):
        return math.inf
    h = float(run.settings.dt)
    local = np.asarray(_doubling(run.model, stepper, jnp.asarray(run.ts), jnp.asarray(ys), h))
    scale = np.ptp(ys, axis=0) + np.max(np.abs(ys), axis=0) * 1e-9 + 1e-300
    steps = (run.settings.t1 - run.settings.t0) / h
    return float(np.max(local / scale) * steps)


def _fixed_points(settings, dt: float, points: int | None) -> int | None:
    """Saved points of a fixed-step run on auto: the plot's, at most one per step."""
    if settings.n_save is not None or points is None:
        return settings.n_save
    steps = max(1, math.ceil((settings.t1 - settings.t0) / dt * (1.0 - 1e-12)))
    return min(points, steps + 1)


def simulate(model: dl.Model, settings, points: int | None = None,
             y0=None, optimize: bool = False) -> dl.Trajectory:
    """Simulate from ``y0`` (default the model's) with ``settings`` (a
    :class:`~difflab.app.runs.RunSettings`), choosing what they leave on auto: ``dt`` for
    accuracy (fixed-step ODE solvers), ``n_save`` from ``points`` (what the plot can
    show); failures are recorded, not raised. ``optimize``: ``simulate``'s (``False``, a
    program that compiles quickly, is the app's first choice; see ``runs.solve``)."""
    kwargs = {**settings.simulate_kwargs(model), "optimize": optimize}
    if y0 is not None:
        kwargs["y0"] = np.asarray(y0, dtype=float)
    stepper = dl.solvers.resolve_solver(settings.solver, model)
    if stepper.adaptive:
        if settings.n_save is None and points is not None:
            kwargs["n_save"] = points
        return dl.simulate(model, settings.t1, throw=False, **kwargs)
    dt = settings.dt or (settings.t1 - settings.t0) / (MIN_POINTS - 1)
    run = _fixed_run(model, settings, kwargs, dt, points)
    if settings.dt is not None or stepper.stochastic:
        return run
    for _ in range(MAX_REFINEMENTS):
        error = run_error(run, stepper)
        if error <= TOLERANCE:
            break
        dt = _smaller_step(dt, error, stepper.order)
        if (settings.t1 - settings.t0) / dt > MAX_AUTO_STEPS:
            break
        run = _fixed_run(model, settings, kwargs, dt, points)
    return run


def _smaller_step(dt: float, error: float, order: int) -> float:
    """The step whose summed error (which scales as ``dt ** order``) meets the tolerance."""
    if not math.isfinite(error):
        return dt / 10
    return dt * SAFETY * (TOLERANCE / error) ** (1.0 / order)


def _fixed_run(model, settings, kwargs, dt, points) -> dl.Trajectory:
    kwargs = {**kwargs, "dt": dt, "n_save": _fixed_points(settings, dt, points)}
    return dl.simulate(model, settings.t1, throw=False, **kwargs)


def chosen(run: dl.Trajectory, settings) -> str:
    """What auto chose for ``run``, in words (``""`` when nothing was on auto)."""
    if run is None or run.settings is None:
        return ""
    made = run.settings
    parts = []
    if settings.dt is None:
        adaptive = dl.solvers.resolve_solver(made.solver, run.model).adaptive
        parts.append("error-controlled steps" if adaptive else f"dt = {made.dt:.3g}")
    if settings.n_save is None:
        parts.append(f"{made.n_save} points")
    return ", ".join(parts)


