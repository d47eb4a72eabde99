"""What a fit solves: fitted parameters on an unconstrained scale, and weighted residuals.

A scalar parameter ``p`` is fitted as ``u``: on a log scale (``v = log p``) when it is
positive, then mapped into its bounds ``(lo, hi)`` (in ``v``) by ``v = lo + (hi - lo) *
sigmoid(u)`` (one-sided bounds use a softplus), so every ``u`` gives a valid parameter.
Array fields (a neural network) are fitted as they are. The model's trajectory is
interpolated at the observed times with cubic Hermite interpolation on its saved points
(exact at saved times; fourth order between them, using the vector field's slopes).
"""

import dataclasses
import math

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ...models import Model, SDEModel
from .._simulate import simulate


def bounded(kind, u, lo, hi):
    """The parameter of ``u`` for a scale of ``kind = (log, lower, upper)`` (which bounds
    are finite) and bounds ``lo < v < hi``; ``lo``/``hi`` may be traced."""
    log, lower, upper = kind
    if lower and upper:
        v = lo + (hi - lo) * jax.nn.sigmoid(u)
    elif lower:
        v = lo + jax.nn.softplus(u)
    elif upper:
        v = hi - jax.nn.softplus(-u)
    else:
        v = u
    return jnp.exp(v) if log else v


@dataclasses.dataclass(frozen=True)
class Scale:
    """How one scalar parameter maps to the unconstrained ``u``: log or not, and bounds
    ``lo < v < hi`` of ``v`` (``v = log p`` on a log scale), each possibly infinite."""

    log: bool
    lo: float
    hi: float

    @property
    def kind(self) -> tuple[bool, bool, bool]:
        return self.log, math.isfinite(self.lo), math.isfinite(self.hi)

    def value(self, u: float) -> float:
        """The parameter of ``u``, on the host (``bounded`` in NumPy: no program to compile)."""
        u = float(u)
        if math.isfinite(self.lo) and math.isfinite(self.hi):
            v = self.lo + (self.hi - self.lo) * _sigmoid(u)
        elif math.isfinite(self.lo):
            v = self.lo + _softplus(u)
        elif math.isfinite(self.hi):
            v = self.hi - _softplus(-u)
        else:
            v = u
        return math.exp(v) if self.log else v

    def unconstrained(self, p: float) -> float:
        v = math.log(p) if self.log else float(p)
        lo, hi = self.lo, self.hi
        if math.isfinite(lo) and math.isfinite(hi):
            x = (v - lo) / (hi - lo)
            return math.log(x) - math.log1p(-x)
        if math.isfinite(lo):
            return _softplus_inverse(v - lo)
        if math.isfinite(hi):
            return -_softplus_inverse(hi - v)
        return v

    def inside(self, p: float, margin: float = 1e-6) -> float:
        """``p`` moved inside its bounds by a hair, where it lies on one."""
        v = math.log(p) if self.log else float(p)
        width = self.hi - self.lo if math.isfinite(self.hi - self.lo) else 1.0
        v = min(max(v, self.lo + margin * width), self.hi - margin * width)
        return math.exp(v) if self.log else v


def _sigmoid(u: float) -> float:
    if u >= 0:
        return 1.0 / (1.0 + math.exp(-u))
    e = math.exp(u)
    return e / (1.0 + e)


def _softplus(u: float) -> float:
    return max(u, 0.0) + math.log1p(math.exp(-abs(u)))


def _softplus_inverse(y: float) -> float:
    return y + math.log(-math.expm1(-y)) if y > 0 else -math.inf


def make_scale(name, value, bounds, log) -> Scale:
    lo, hi = (-math.inf, math.inf) if bounds is None else (float(bounds[0]), float(bounds[1]))
    if not lo < hi:
        raise ValueError(f"bounds of {name!r} must satisfy lower < upper, got ({lo}, {hi})")
    if not lo <= value <= hi:
        raise ValueError(f"the starting value of {name!r} ({value:g}) lies outside its "
                         f"bounds ({lo:g}, {hi:g}); pass bounds={{{name!r}: (lo, hi)}}")
    if log is None:
        log = lo >= 0 and value > 0
    if log and not (value > 0 and lo >= 0):
        raise ValueError(f"{name!r} cannot be fitted on a log scale: its value or lower "
                         f"bound is not positive")
    if log:
        lo, hi = (math.log(lo) if lo > 0 else -math.inf), math.log(hi)
    return Scale(bool(log), lo, hi)


def hermite(ts, ys, fs, t):
    """Cubic Hermite interpolation of states ``ys`` with slopes ``fs`` at times ``t``."""
    k = jnp.clip(jnp.searchsorted(ts, t, side="right") - 1, 0, ts.shape[0] - 2)
    h = ts[k + 1] - ts[k]
    s = ((t - ts[k]) / h)[:, None]
    h = h[:, None]
    s2, s3 = s * s, s * s * s
    return ((2 * s3 - 3 * s2 + 1) * ys[k] + (s3 - 2 * s2 + s) * h * fs[k]
            + (3 * s2 - 2 * s3) * ys[k + 1] + (s3 - s2) * h * fs[k + 1])


class Problem(eqx.Module):
    """Everything static about a fit; ``residuals(u, args)`` is what is minimised.

    ``u = {"scalars": (P,), "free": {field: arrays}}``; ``args`` holds the base model's
    arrays, the data and the simulation's traced settings.
    """

    names: tuple[str, ...] = eqx.field(static=True)
    kinds: tuple[tuple[bool, bool, bool], ...] = eqx.field(static=True)  # Scale.kind of each
    free: tuple[str, ...] = eqx.field(static=True)
    model_static: Model = eqx.field(static=True)
    state_index: tuple[int, ...] = eqx.field(static=True)
    simulation: tuple = eqx.field(static=True)  # (("solver", ...), ("n_save", ...), ...)

    def params(self, u, args):
        """The natural values of the scalar parameters, shape (P,); ``args["bounds"]`` holds
        each one's ``(lo, hi)`` (traced, so new bounds do not recompile)."""
        if not self.names:
            return jnp.zeros(0)
        b = args["bounds"]
        return jnp.stack([bounded(kind, u["scalars"][k], b[k, 0], b[k, 1])
                          for k, kind in enumerate(self.kinds)])

    def model(self, u, args, params=None):
        """The model at ``u`` (or at natural scalar values ``params`` with ``u``'s arrays)."""
        model = eqx.combine(args["model"], self.model_static)
        params = self.params(u, args) if params is None else params
        if self.names:
            model = model.replace(**{n: params[k] for k, n in enumerate(self.names)})
        for name in self.free:
            part = getattr(model, name)
            rest = eqx.filter(part, eqx.is_inexact_array, inverse=True)
            model = eqx.tree_at(lambda m: getattr(m, name), model,
                                eqx.combine(u["free"][name], rest))
        return model

    def start_free(self, model, args) -> dict:
        """The starting values of the fitted arrays: the model's own."""
        return {name: eqx.filter(getattr(model, name), eqx.is_inexact_array)
                for name in self.free}

    def fitted_settings(self, settings: dict, u) -> dict:
        """The settings that rerun the fit at ``u`` (the fitted arrays are in the model)."""
        return settings

    def trajectory(self, model, args, adjoint):
        return simulate(model, args["t1"], t0=args["t0"], dt=args["dt"], y0=args["y0"],
                        rtol=args["rtol"], atol=args["atol"], throw=False, adjoint=adjoint,
                        **dict(self.simulation))

    def residuals(self, u, args, *, params=None, adjoint="auto"):
        """Weighted residuals ``(model - data) / sigma`` of every observed value, flattened."""
        model = self.model(u, args, params)
        traj = self.trajectory(model, args, adjoint)
        slopes = jax.vmap(model.vector_field)(traj.ts, traj.ys)
        predicted = hermite(traj.ts, traj.ys, slopes, args["t_obs"])
        predicted = predicted[:, jnp.asarray(self.state_index)]
        r = jnp.where(args["mask"], (predicted - args["y_obs"]) * args["weight"], 0.0)
        return r.reshape(-1)

    def loss(self, u, args, adjoint="auto"):
        r = self.residuals(u, args, adjoint=adjoint)
        return 0.5 * jnp.sum(r * r)


def check_model(model) -> None:
    if not isinstance(model, Model):
        raise TypeError(f"model must be a difflab.Model, not {type(model).__name__}")
    if isinstance(model, SDEModel):
        raise ValueError(f"{type(model).__name__} is stochastic; fitting SDE models is not "
                         "supported (fit its deterministic drift as an ODE model)")


def split_params(model, params) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The scalar parameters and the array fields (e.g. a network) named by ``params``."""
    specs = model.parameter_specs()
    fields = [f.name for f in dataclasses.fields(model)]
    if params is None:
        arrays = [f for f in fields if f not in specs and _has_inexact(getattr(model, f))]
        return tuple(specs), tuple(arrays)
    if isinstance(params, str):
        params = [params]
    scalars, arrays = [], []
    for name in params:
        if name in specs:
            scalars.append(name)
        elif name in fields and _has_inexact(getattr(model, name)):
            arrays.append(name)
        else:
            arrays_there = [a for a in fields
                            if a not in specs and _has_inexact(getattr(model, a))]
            raise ValueError(f"{type(model).__name__} has no parameter {name!r}; its "
                             f"parameters are {', '.join(specs) or 'none'}"
                             + (f" and arrays {', '.join(arrays_there)}"
                                if arrays_there else ""))
    if len(set(params)) != len(params):
        raise ValueError(f"params name a parameter twice: {list(params)}")
    if not scalars and not arrays:
        raise ValueError("params is empty: name at least one parameter to fit")
    return tuple(scalars), tuple(arrays)


def _has_inexact(value) -> bool:
    return any(eqx.is_inexact_array(x) for x in jax.tree.leaves(value))


def initial_u(problem: Problem, model, scalars_u, args) -> dict:
    free = problem.start_free(model, args)
    return {"scalars": jnp.asarray(scalars_u, dtype=jnp.result_type(float)), "free": free}


def start_points(names, scales, model, starts, seed: int) -> np.ndarray:
    """The starting ``u`` of each start, shape (n_starts, P): the model's values first,
    then points drawn uniformly within bounds (or spread around the first one)."""
    first = np.array([s.unconstrained(s.inside(float(getattr(model, n))))
                      for n, s in zip(names, scales)], dtype=np.float64)
    if isinstance(starts, dict):
        return _explicit_starts(names, scales, model, starts)
    n = int(starts)
    if n < 1:
        raise ValueError(f"starts must be at least 1, got {starts}")
    rng = np.random.default_rng(seed)
    rows = [first]
    for _ in range(n - 1):
        rows.append(np.array([_draw(s, u, rng) for s, u in zip(scales, first)]))
    return np.stack(rows).reshape(n, len(names))


def _draw(scale: Scale, u: float, rng) -> float:
    if math.isfinite(scale.lo) and math.isfinite(scale.hi):
        x = rng.uniform(0.02, 0.98)
        return math.log(x) - math.log1p(-x)
    return u + rng.standard_normal()


def _explicit_starts(names, scales, model, starts) -> np.ndarray:
    unknown = [k for k in starts if k not in names]
    if unknown:
        raise ValueError(f"starts names {unknown[0]!r}, which is not fitted")
    lengths = {len(np.atleast_1d(v)) for v in starts.values()}
    if len(lengths) != 1:
        raise ValueError("every list of starting values must have the same length")
    n = lengths.pop()
    rows = []
    for i in range(n):
        row = []
        for name, scale in zip(names, scales):
            p = (float(np.atleast_1d(starts[name])[i]) if name in starts
                 else float(getattr(model, name)))
            make_scale(name, p, _bounds_of(scale), scale.log)  # validates the value
            row.append(scale.unconstrained(scale.inside(p)))
        rows.append(row)
    return np.asarray(rows, dtype=np.float64).reshape(n, len(names))


def _bounds_of(scale: Scale):
    if not scale.log:
        return scale.lo, scale.hi
    return (math.exp(scale.lo) if math.isfinite(scale.lo) else 0.0), math.exp(scale.hi)
