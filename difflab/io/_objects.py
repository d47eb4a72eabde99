"""Stored groups read back as the classes the solvers return.

A run is a :class:`difflab.Trajectory`, a sweep a :class:`difflab.SweepResult`, a fit a
:class:`difflab.FitResult`, a sensitivity a :class:`difflab.Sensitivity`: one class per
concept, whether computed now or read from a file. Big arrays stay :class:`LazyArray`.
"""

import numpy as np

from ..solvers import (
    FieldSweepResult,
    FitResult,
    Observations,
    Result,
    Sensitivity,
    SolveSettings,
    Space,
    SweepResult,
    Trajectory,
    default_solver,
    key_from_record,
)
from ._field_sweeps import field_sweep_result
from ._fields import field_trajectory, is_field_run
from ._run_events import events_from
from ._sweep_grid import flat

DEFAULTS = SolveSettings.DEFAULTS  # for settings that files written earlier lack


def _built(stored, record=None):
    """The model a stored result used: built where DiffLab may build it (a built-in or
    equations model, or a user model already loaded), else its :class:`ModelRecord`."""
    record = stored.model if record is None else record
    try:
        return record.build()
    except (ValueError, KeyError, TypeError):  # user code DiffLab will not run, or gone
        return record


def _array(variable):
    return None if variable is None else variable.data


def _key(stored):
    attrs = stored.attrs
    if "key_data" not in attrs:
        return None
    data = tuple(int(v) for v in np.atleast_1d(attrs["key_data"]))
    return str(attrs.get("key_impl", "threefry2x32")), data


def solve_settings(stored, model, ts, ys) -> SolveSettings:
    """A run's :class:`SolveSettings`; older files lack some, and get ``simulate``'s defaults."""
    a = {**DEFAULTS, **stored.settings}
    solver = a.get("solver") or (default_solver(model) if not hasattr(model, "build") else "")
    y0 = a["y0"] if "y0" in a else np.asarray(ys[0])
    return SolveSettings(
        solver=str(solver), t0=float(a.get("t0", np.asarray(ts[0]))),
        t1=float(a.get("t1", np.asarray(ts[-1]))),
        dt=None if a.get("dt") is None else float(a["dt"]), n_save=int(a.get("n_save", len(ts))),
        rtol=float(a["rtol"]), atol=_tolerance(a["atol"]), max_steps=int(a["max_steps"]),
        y0=tuple(float(v) for v in np.atleast_1d(y0)), key=_key(stored),
        precision=str(stored.attrs.get("precision", "float64")),
        optimize=bool(stored.attrs.get("optimize", 1)))


def trajectory(stored) -> Trajectory:
    model = _built(stored)
    ts, ys = stored.variables["time"].data, stored.variables["y"].data
    return Trajectory(ts, ys, np.int32(stored.attrs.get("result", 0)),
                      np.int64(stored.attrs.get("steps", 0)), stored.state_names,
                      stored.attrs.get("wall_time"), model, solve_settings(stored, model, ts, ys),
                      stored.name, _step_counts(stored.attrs), events_from(stored))


def _tolerance(value):
    """A stored tolerance: a number, or one per state (a tuple)."""
    return float(value) if np.ndim(value) == 0 else tuple(map(float, np.ravel(value)))


def _step_counts(attrs) -> dict | None:
    """A run's accepted and rejected steps (files written before them: ``None``)."""
    names = ("accepted_steps", "rejected_steps")
    return {k: np.int64(attrs[k]) for k in names} if all(k in attrs for k in names) else None


def sweep_result(stored) -> SweepResult | FieldSweepResult:
    """A stored sweep: a field sweep as a ``FieldSweepResult``, else a ``SweepResult``."""
    if is_field_run(stored.attrs):
        return field_sweep_result(stored)
    v, attrs = stored.variables, stored.attrs
    return SweepResult(_space(stored), stored.state_names, v["time"].data, v["y"].data,
                       v["result"].data, v["steps"].data, _observables(v), {},
                       bool(attrs.get("trajectories", 0)), stored.session.path, stored.name,
                       _built(stored), _sweep_settings(stored), _stored_key(stored),
                       None if "y0" not in v else np.asarray(v["y0"].data, dtype=np.float64),
                       _observable_specs(v))


def _space(stored) -> Space:
    """The swept space, from the parameter table and the ``space_kind``, ``space_shape``
    and ``swept`` attributes (the space's columns, in order) that ``sweep`` writes."""
    v, attrs, names = stored.variables, stored.attrs, stored.parameter_names
    n_points = int(attrs.get("n_points", v["parameters"].shape[0]))
    table = np.asarray(v["parameters"].data, dtype=np.float64).reshape(n_points, len(names))
    columns = {name: table[:, j] for j, name in enumerate(names)}
    if "y0" in v:
        y0 = np.asarray(v["y0"].data, dtype=np.float64)
        columns.update({f"y0.{s}": y0[:, j] for j, s in enumerate(stored.state_names)}, y0=y0)
    swept = attrs.get("swept", list(names))
    swept = [swept] if isinstance(swept, str) else list(swept)
    if not swept or not all(c in columns for c in swept):
        swept = list(names) or ["y0"]
    shape = tuple(int(n) for n in np.atleast_1d(attrs.get("space_shape", len(table))))
    if int(np.prod(shape)) != len(table):
        shape = (len(table),)
    return Space({c: columns[c] for c in swept}, shape, str(attrs.get("space_kind", "points")))


def _observables(variables) -> dict:
    """The observables, ``(point)`` or ``(point, k)``: stored over ``point`` or over a
    grid's axes, then ``<name>_index`` for one keeping a vector per point."""
    n_points = variables["result"].shape[0]
    swept = str(variables["result"].attrs.get("coordinates", "")).split()  # not observables
    out = {}
    for n, var in variables.items():
        if var.dims == ("point",) and n not in ("point", "result", "steps", *swept):
            out[n] = var.data  # files written before observables knew their spec
        elif "difflab_observable" in var.attrs and var.dims[0] == "point":
            out[n] = var.data
        elif "difflab_observable" in var.attrs:  # on a grid's axes: read now (small)
            out[n] = flat(var.data, n_points, var.dims[-1] == f"{n}_index")
    return out


def _observable_specs(variables) -> dict:
    return {n: str(variables[n].attrs.get("difflab_observable", "")) for n in _observables(variables)}


def _sweep_settings(stored) -> dict:
    settings = {**DEFAULTS, **stored.settings}
    if "y0" in stored.variables:  # each point's own
        settings.pop("y0", None)
    return settings


def _stored_key(stored):
    key = _key(stored)
    return None if key is None else key_from_record(*key)


def fit_result(stored, runs: dict | None = None) -> FitResult:
    """The :class:`FitResult` of a stored fit, with its fitted run when ``runs`` has it."""
    attrs, v = stored.attrs, stored.variables
    names = tuple(v["parameter"].data)
    n = len(names)
    losses = np.asarray(v["loss"].data, dtype=np.float64)
    history = _rows(v["parameters"].data, n)
    finished = "best_parameters" in attrs
    best = (np.atleast_1d(attrs["best_parameters"]) if finished
            else (history[-1] if len(history) else np.full(n, np.nan)))
    stderr = np.atleast_1d(attrs.get("stderr", np.full(n, np.nan))).astype(float)
    correlation = np.asarray(attrs.get("correlation", np.full(n * n, np.nan)),
                             dtype=float).reshape(n, n)
    start = _built(stored)
    fitted = stored.fitted_model
    data = _observations(stored.data)
    chi2 = float(attrs.get("chi2", 2 * losses.min() if len(losses) else np.nan))
    n_starts = int(attrs.get("n_starts", 1))
    run = (runs or {}).get(attrs.get("run"))
    null = attrs.get("null_directions")
    return FitResult(
        names=names, params=dict(zip(names, map(float, best))),
        stderr=dict(zip(names, map(float, stderr))),
        covariance=correlation * np.outer(stderr, stderr), correlation=correlation,
        model=start if fitted is None else _built(stored, fitted), start_model=start,
        loss=float(losses.min()) if len(losses) else np.nan, chi2=chi2,
        n_data=0 if data is None else int(np.isfinite(data.y).sum()),
        dof=int(attrs.get("dof", 0)), absolute_sigma=bool(attrs.get("absolute_sigma", 0)),
        loss_history=losses, parameter_history=history,
        result=Result(int(attrs.get("result", 0))), n_steps=len(losses),
        method=str(attrs.get("method", attrs.get("optimizer", ""))),
        **_starts(v, n_starts, n), data=data, settings=_fit_settings(stored),
        max_steps=int(attrs.get("fit_max_steps", attrs.get("max_steps", len(losses)))),
        learning_rate=attrs.get("learning_rate"), wall_time=float(attrs.get("wall_time", np.nan)),
        stopped=not stored.complete, name=stored.name,  # finish() marks a fit complete
        null_directions=None if null is None else _rows(null, n),
        run=None if run is None else _any_run(run))


def _any_run(stored):
    """A stored run: a field run as a ``FieldTrajectory``, else a ``Trajectory``."""
    return field_trajectory(stored) if is_field_run(stored.attrs) else trajectory(stored)


def _rows(values, n: int, count: int | None = None) -> np.ndarray:
    """``values`` as rows of ``n`` (none when nothing scalar was fitted: ``count`` rows)."""
    values = np.asarray(values, dtype=np.float64)
    return values.reshape(-1, n) if n else np.zeros((count or 0, 0))


def _starts(v, n_starts: int, n: int) -> dict:
    """Each start's latest loss and parameters, where the file keeps them (NaN if not)."""
    if "start_loss" not in v:
        return {"start_losses": np.full(n_starts, np.nan), "best_start": 0,
                "start_params": np.full((n_starts, n), np.nan)}
    losses = np.asarray(v["start_loss"].data, dtype=np.float64)
    finite = np.where(np.isfinite(losses), losses, np.inf)
    return {"start_losses": losses, "best_start": int(np.argmin(finite)),
            "start_params": _rows(v["start_parameters"].data, n, len(losses))}


def _fit_settings(stored) -> dict:
    """The solver settings of a fit. In files written before ``fit_max_steps``, the
    ``max_steps`` attribute is the optimizer's, and the solver's is ``simulate``'s default."""
    old = "fit_max_steps" not in stored.attrs
    return {**DEFAULTS, **{k: v for k, v in stored.settings.items()
                           if not (old and k == "max_steps")}}


def _observations(group) -> Observations | None:
    if group is None:
        return None
    sigma = group["sigma"].data if "sigma" in group else None
    return Observations(np.asarray(group["time"].data), np.asarray(group["y"].data),
                        tuple(group["state"].data), None if sigma is None else np.asarray(sigma))


def sensitivity(stored, runs: dict) -> Sensitivity:
    v, attrs = stored.variables, stored.attrs
    names = tuple(v["parameter"].data)
    record = stored.model
    values = np.array([record.parameters.get(p, np.nan) for p in names])
    run = runs.get(attrs.get("run"))
    ts = v["time"].data if "time" in v else (None if run is None else run.variables["time"].data)
    ys = None if run is None else run.variables["y"].data
    result = Result(int(run.attrs.get("result", 0))) if run is not None else Result.SUCCESS
    states = tuple(v["state"].data) if "state" in v else (run.state_names if run else ())
    return Sensitivity(ts, ys, _array(v.get("dy_dp")), names, values, states, result,
                       _built(stored), {**DEFAULTS, **stored.settings}, stored.name,
                       _array(v.get("gradient")))
