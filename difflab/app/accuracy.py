"""What the app takes for settings left on auto: the engine's automatic step and saved
points (:func:`difflab.solvers.auto_step`, stated in ``docs/solvers.md``), with at least
as many points as the plot can show.

The live view, a streamed Run, sweeps, fits and the command line all take the step of
that one rule, so the same settings give the same run wherever they are used; the run
records the step and points it took, and the settings panel shows them.
"""

import numpy as np

import difflab as dl

MIN_POINTS, MAX_POINTS = 1001, 20_000


def points_for_width(pixels: int) -> int:
    """Saved points for a plot ``pixels`` wide: two per pixel, from 1001 to 20,000."""
    return int(min(max(2 * int(pixels), MIN_POINTS), MAX_POINTS))


def choose(model: dl.Model, settings, points: int | None = None, y0=None) -> dict:
    """``dt`` and ``n_save`` for a run of ``model`` with ``settings`` (a
    :class:`~difflab.app.runs.RunSettings`): the given ones, else the engine's rule with at
    least ``points`` saved points for explicit solvers."""
    if y0 is None and settings.y0 is not None:
        y0 = settings.y0
    auto = dl.solvers.auto_step(model, settings.t1, t0=settings.t0, solver=settings.solver,
                                y0=y0, dt=settings.dt, n_save=settings.n_save,
                                min_points=points)
    return {"dt": auto.dt, "n_save": auto.n_save}


def simulate(model: dl.Model, settings, points: int | None = None,
             y0=None, optimize: bool = False) -> dl.Trajectory:
    """Simulate from ``y0`` (default the settings', else the model's) with ``settings``,
    what they leave on auto chosen by :func:`choose`; failures are recorded, not raised.
    ``optimize``: ``simulate``'s (``False``, a program that compiles quickly, is the app's
    first choice; see ``runs.solve``)."""
    kwargs = {**settings.simulate_kwargs(model), "optimize": optimize}
    if y0 is not None:
        kwargs["y0"] = np.asarray(y0, dtype=float)
    try:
        kwargs.update(choose(model, settings, points, y0))
    except (TypeError, ValueError):
        pass  # the run's own checks name what is wrong
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
