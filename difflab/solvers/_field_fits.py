"""``fit`` for field models: scalar parameters and initial fields recovered from
snapshots of fields (a field named among the parameters is fitted as its initial value).

The fit's optimizers, starts and statistics are the ODE fit's (``_fits``); what differs is
the problem: each simulation is a field run whose frames fall on the observed times, and
the residuals are the observed fields' differences at those frames, grid point by grid
point. Levenberg-Marquardt differentiates the run in forward mode (one tangent per fitted
parameter); minimisers (``"bfgs"``, ``"adam"``) in reverse mode through the run's nested
checkpoints (``_field_runs._steps``): in neither does memory grow with the steps.
"""

import dataclasses
import math
from collections.abc import Mapping

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from ..models import AbstractFieldModel, initial_fields_of
from ._field_checks import check_solver, check_stable
from ._field_runs import FIXED_STEPS, _default_dt, _run
from ._fits.problem import Problem, split_params
from ._fits.setup import _scale


@dataclasses.dataclass(frozen=True, eq=False)
class FieldObservations:
    """Snapshots of some of a field model's fields: ``fields[name]`` of shape
    ``(len(t), *grid.shape)`` at times ``t``; NaN where a value was not observed.
    ``sigma``: the noise standard deviation of each field's values (``None``: unknown)."""

    t: np.ndarray
    fields: dict
    sigma: dict | None = None

    @property
    def n_values(self) -> int:
        """How many values are observed (not NaN)."""
        return int(sum(np.isfinite(u).sum() for u in self.fields.values()))

    def with_noise(self, sigma: float, *, seed: int = 0) -> "FieldObservations":
        """A copy with Gaussian noise of standard deviation ``sigma`` added (and recorded)."""
        rng = np.random.default_rng(seed)
        noisy = {n: u + sigma * rng.standard_normal(u.shape) for n, u in self.fields.items()}
        return FieldObservations(self.t, noisy, {n: float(sigma) for n in noisy})

    def __repr__(self) -> str:
        return (f"FieldObservations({len(self.t)} times, t in [{self.t.min():g}, "
                f"{self.t.max():g}], fields={list(self.fields)})")


def as_field_observations(data, model: AbstractFieldModel) -> FieldObservations:
    """Snapshots from a :class:`FieldObservations`, a ``FieldTrajectory`` or a dict
    ``{"t": times, field: (times, *grid.shape), ...}``, checked against ``model``."""
    if isinstance(data, FieldObservations):
        t, fields, sigma = data.t, data.fields, data.sigma
    elif hasattr(data, "ts") and hasattr(data, "fields"):
        t, fields, sigma = data.ts, data.fields, None
    elif isinstance(data, Mapping) and ("t" in data or "time" in data):
        fields = {k: v for k, v in data.items() if k not in ("t", "time")}
        t, sigma = data["t"] if "t" in data else data["time"], None
    else:
        raise TypeError(f"a field model is fitted to snapshots: a FieldTrajectory or "
                        f"{{'t': times, field: frames}}, not {type(data).__name__}")
    t = np.asarray(t, dtype=np.float64).reshape(-1)
    fields = {str(k): np.asarray(v, dtype=np.float64) for k, v in fields.items()}
    _check_snapshots(t, fields, model)
    return FieldObservations(t, fields, sigma)


def _check_snapshots(t, fields: dict, model) -> None:
    if not len(t) or not np.all(np.isfinite(t)) or np.any(np.diff(t) <= 0):
        raise ValueError("the snapshot times must be finite and increasing")
    for name, u in fields.items():
        if name not in model.field_names:
            raise ValueError(f"the data observe {name!r}, which is not a field of "
                             f"{type(model).__name__} ({', '.join(model.field_names)})")
        if u.shape != (len(t), *model.grid.shape):
            raise ValueError(f"the snapshots of {name!r} have shape {u.shape}, not "
                             f"(times, *grid) = {(len(t), *model.grid.shape)}")
    if not fields or not any(np.isfinite(u).any() for u in fields.values()):
        raise ValueError("the data hold no finite value of any field")


def _frames(t, t0: float, t1: float | None):
    """``(spacing, frames, index of each snapshot)``: the run's frames, equally spaced
    from ``t0``, fall on every snapshot time (else refused)."""
    offsets = t - t0
    if offsets[0] < -1e-12 * max(1.0, abs(t0)):
        raise ValueError(f"the snapshots start at t = {t[0]:g}, before t0 = {t0:g}")
    gaps = np.diff(np.concatenate([[0.0], offsets]))
    spacing = float(gaps[gaps > 1e-12 * max(1.0, offsets[-1])].min())
    end = offsets[-1] if t1 is None else float(t1) - t0
    index = np.round(offsets / spacing).astype(int)
    frames = int(round(end / spacing)) + 1
    if (np.max(np.abs(index * spacing - offsets)) > 1e-9 * max(1.0, end)
            or abs((frames - 1) * spacing - end) > 1e-9 * max(1.0, end) or end < offsets[-1]):
        raise ValueError(f"the snapshot times (and t1) must be t0 + whole multiples of one "
                         f"spacing ({spacing:g} here), so that a field run's frames fall on "
                         f"them")
    return spacing, max(frames, 2), tuple(int(i) for i in index)


def _noise(obs: FieldObservations, sigma):
    """``({field: sd}, absolute)``: the given ``sigma`` (a number or ``{field: number}``),
    else the data's, else 1 (unknown)."""
    sigma = obs.sigma if sigma is None else sigma
    if sigma is None:
        return {n: 1.0 for n in obs.fields}, False
    sd = {n: float(sigma[n] if isinstance(sigma, Mapping) else sigma) for n in obs.fields}
    if not all(s > 0 for s in sd.values()):
        raise ValueError(f"sigma must be positive, not {sd}")
    return sd, True


class FieldProblem(eqx.Module):
    """What a field fit minimises: ``residuals(u, args)`` of the observed fields.

    ``simulation``: ``(solver, frames - 1, steps per frame)``; ``frames``: the frame of
    each snapshot. ``args`` holds the model's arrays, ``t0``, ``dt``, ``y0`` (``None``: the
    model's initial fields) and the snapshots with their weights.
    """

    names: tuple[str, ...] = eqx.field(static=True)
    kinds: tuple[tuple[bool, bool, bool], ...] = eqx.field(static=True)
    model_static: AbstractFieldModel = eqx.field(static=True)
    simulation: tuple = eqx.field(static=True)
    frames: tuple[int, ...] = eqx.field(static=True)
    free: tuple[str, ...] = eqx.field(static=True, default=())

    params = Problem.params

    def model(self, u, args, params=None):
        """The model at ``u``'s scalar parameters (its fitted fields are initial fields)."""
        model = eqx.combine(args["model"], self.model_static)
        params = self.params(u, args) if params is None else params
        return model.replace(**{n: params[k] for k, n in enumerate(self.names)})

    def start_free(self, model, args) -> dict:
        """The fitted initial fields' starting values: ``y0``'s, else the model's."""
        return {name: args["y0"][name] for name in self.free}

    def fitted_settings(self, settings: dict, u) -> dict:
        """``settings`` with the fitted initial fields in ``y0``."""
        if not self.free:
            return settings
        return {**settings, "y0": {**settings["y0"], **u["free"]}}

    def residuals(self, u, args, *, params=None, adjoint=None):
        """Weighted residuals ``(run - data) / sigma`` of every observed value, flattened
        (``adjoint`` is the ODE fit's; a field run differentiates either way)."""
        model = self.model(u, args, params)
        y0 = initial_fields_of(model) if args["y0"] is None else args["y0"]
        y0 = {**y0, **u["free"]}
        solver, intervals, per_interval = self.simulation
        _, out, _, _ = _run(model, solver, y0, args["t0"], args["dt"], intervals, per_interval)
        index = jnp.asarray(self.frames)
        r = [jnp.where(args["mask"][n], (out[n][index] - y) * args["weight"][n], 0.0).ravel()
             for n, y in args["y_obs"].items()]
        return jnp.concatenate(r)

    def loss(self, u, args, adjoint=None):
        r = self.residuals(u, args)
        return 0.5 * jnp.sum(r * r)


def _step(solver: str, model, span: float, spacing: float, dt) -> tuple[float, int]:
    """``(dt, steps per frame)``: ``dt`` (default as ``simulate``'s) shortened to divide
    the frame spacing."""
    dt = _default_dt(solver, model, span) if dt is None else float(dt)
    if not dt > 0:
        raise ValueError(f"dt must be positive, got {dt}")
    per_frame = max(1, math.ceil(spacing / dt * (1 - 1e-12)))
    check_stable(solver, model, spacing / per_frame)
    return spacing / per_frame, per_frame


def _split_fields(model, params) -> tuple[list | None, tuple[str, ...]]:
    """``(the other names, the fields named)``: a field named in ``params`` is fitted as
    its initial value."""
    if params is None:
        return None, ()
    params = [params] if isinstance(params, str) else list(params)
    fields = tuple(n for n in params if n in model.field_names)
    clash = [n for n in fields if n in model.parameter_specs()]
    if clash:
        raise ValueError(f"{clash[0]!r} names both a parameter and a field of "
                         f"{type(model).__name__}")
    if not params:
        raise ValueError("params is empty: name at least one parameter or field to fit")
    specs = model.parameter_specs()
    unknown = [n for n in params if n not in specs and n not in fields]
    if unknown:
        raise ValueError(f"{type(model).__name__} has no parameter or field {unknown[0]!r}; "
                         f"its parameters are {', '.join(specs) or 'none'}, its fields "
                         f"{', '.join(model.field_names)} (fitted as initial values)")
    return [n for n in params if n not in fields], fields


def field_setup(model, obs: FieldObservations, params, solve, *, bounds, log_scale, sigma):
    """The field fit's problem, scales, traced arguments, settings (what ``simulate``
    takes to rerun the fitted model) and whether the noise level was given."""
    params, fields = _split_fields(model, params)
    scalars, arrays = split_params(model, params) if params != [] else ((), ())
    if arrays and params is not None:
        raise ValueError(f"a field fit recovers scalar parameters and initial fields, not "
                         f"{', '.join(arrays)}")
    scales = tuple(_scale(model, n, bounds, log_scale) for n in scalars)
    for name in bounds or {}:
        if name not in scalars:
            raise ValueError(f"bounds name {name!r}, which is not a fitted scalar parameter")
    solver = model.default_solver if solve["solver"] is None else solve["solver"]
    check_solver(solver, model)
    if solver not in FIXED_STEPS:
        raise ValueError(f"a field fit steps with {', '.join(FIXED_STEPS)}, not {solver!r}")
    t0 = float(solve["t0"])
    spacing, frames, index = _frames(obs.t, t0, solve["t1"])
    t1 = t0 + (frames - 1) * spacing
    dt, per_frame = _step(solver, model, t1 - t0, spacing, solve["dt"])
    sd, absolute = _noise(obs, sigma)
    f = jnp.result_type(float)
    y0 = initial_fields_of(model) if solve["y0"] is None and fields else solve["y0"]
    if y0 is not None:
        model.check_fields(y0)
        y0 = {n: jnp.asarray(v, f) for n, v in y0.items()}
    problem = FieldProblem(scalars, tuple(s.kind for s in scales),
                           eqx.partition(model, eqx.is_array)[1],
                           (solver, frames - 1, per_frame), index, fields)
    args = {"model": eqx.partition(model, eqx.is_array)[0], "t0": jnp.asarray(t0, f),
            "dt": jnp.asarray(dt, f), "y0": y0,
            "y_obs": {n: jnp.asarray(np.nan_to_num(u), f) for n, u in obs.fields.items()},
            "mask": {n: jnp.asarray(np.isfinite(u)) for n, u in obs.fields.items()},
            "weight": {n: jnp.asarray(1.0 / s, f) for n, s in sd.items()},
            "bounds": jnp.asarray([[s.lo, s.hi] for s in scales], f).reshape(-1, 2)}
    settings = {"t0": t0, "t1": t1, "dt": dt, "solver": solver, "n_save": frames}
    if y0 is not None:
        settings["y0"] = y0
    return problem, scales, args, settings, absolute
