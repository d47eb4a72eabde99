"""Curves of folds of cycles, of period doublings and of homoclinic orbits in two
parameters, traced both ways from a point on them (see ``cycle_system`` for the defining
systems) until the second parameter leaves its range."""

import json

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from .._datasets import to_dataset
from .arclength import check_range, flipped, joined, sign_changes, trace
from .cycle_steps import extremes, floquet, trusted_multipliers
from .cycle_system import CURVE_KINDS, CycleSystem, CycleTracer
from .cycle_system import cusp_test
from .cycle_system import period_error as curve_error
from .curves import CodimTwoPoint
from .saddles import saddle_near

CUSP, FOLD_FLIP = "cusp-of-cycles", "fold-flip"
from .shooting import orbit_path, period_error, profile


class CycleCurve(eqx.Module):
    """A curve of folds of cycles, period doublings or homoclinic orbits (``kind``) in
    two parameters ``params``: per point the ``values`` (N, 2) of both, the ``periods``
    (N,), a state on the orbit (``states``, (N, n)), the orbit's ``minima`` and
    ``maxima`` (N, n), Floquet ``multipliers`` (N, n; NaN where they cannot be
    trusted, as near a homoclinic orbit) and the estimated relative ``errors`` of the
    periods (N,; ``None`` in files written before the estimate; on a fold or doubling
    curve the status says where one passes ``rtol``; on a homoclinic curve, whose period
    is held, they are those of the orbits at their parameters, far larger than the
    curve's own error); on a homoclinic curve also the ``saddles``
    (N, n) the orbits are homoclinic to and their ``saddle_eigenvalues`` (N, n, largest
    real part first). ``steps``: RK4 steps per period; ``status``: why each end stopped;
    ``special``: the codimension-two points found on it (on a fold-of-cycles curve each
    cusp of cycles, where the fold's quadratic coefficient changes sign; on a
    period-doubling curve each fold-flip point, where a multiplier is 1 as well)."""

    kind: str = eqx.field(static=True)
    params: tuple[str, str] = eqx.field(static=True)
    values: np.ndarray
    periods: np.ndarray
    states: np.ndarray
    minima: np.ndarray
    maxima: np.ndarray
    multipliers: np.ndarray
    errors: np.ndarray | None
    saddles: np.ndarray | None
    saddle_eigenvalues: np.ndarray | None
    state_names: tuple[str, ...] = eqx.field(static=True)
    bounds: tuple[float, float] = eqx.field(static=True)
    status: str = eqx.field(static=True)
    steps: int = eqx.field(static=True)
    t: float = eqx.field(static=True)
    model: object
    special: tuple[CodimTwoPoint, ...] = ()

    def to_dict(self) -> dict:
        """``{"type", "params": [P, Q], "points": [{"values": {P, Q}, "period", "state",
        "min", "max"}]}``; homoclinic points also carry ``"saddle"`` and
        ``"saddle_eigenvalues"`` (``[[re, im], ...]``); ``"error"``: the period's estimated
        relative error (null where not estimated); ``"special"``: ``[{"type", "values",
        "state", "period"}]``."""
        names = self.state_names
        points = []
        for i in range(len(self.values)):
            point = {"values": dict(zip(self.params, map(float, self.values[i]))),
                     "period": float(self.periods[i]),
                     **{key: dict(zip(names, map(float, rows[i]))) for key, rows in
                        (("state", self.states), ("min", self.minima), ("max", self.maxima))},
                     "error": None if self.errors is None else float(self.errors[i])}
            if self.saddles is not None:
                point["saddle"] = dict(zip(names, map(float, self.saddles[i])))
                point["saddle_eigenvalues"] = [[float(z.real), float(z.imag)]
                                               for z in self.saddle_eigenvalues[i]]
            points.append(point)
        special = [{"type": s.kind, "values": dict(zip(self.params, map(float, s.values))),
                    "state": dict(zip(names, map(float, s.state))), "period": s.period}
                   for s in self.special]
        return {"type": self.kind, "params": list(self.params), "points": points,
                "special": special}

    def to_json(self) -> str:
        """:meth:`to_dict` as a JSON string."""
        return json.dumps(self.to_dict())

    def to_xarray(self):
        """This result as an ``xarray.Dataset``: the variables, coordinates and attributes
        of its group in a session file (``docs/hdf5-schema.md``)."""
        return to_dataset(self)


def orbit_unknowns(model, param, state, period, value, mesh, t) -> np.ndarray:
    """``[x_0 .. x_{m-1}, T, p]``: the orbit integrated from ``state`` over one
    ``period`` at ``param = value``, a point at the start of each segment of ``mesh``."""
    path = np.asarray(orbit_path(model, param, jnp.asarray(t, float),
                                 jnp.asarray(state, float), float(period), float(value),
                                 jnp.asarray(mesh.ravel())))
    return np.concatenate([path[:-1:mesh.shape[1]].ravel(), [period, value]])


def _system(model, params, kind, u, mesh, t) -> CycleSystem:
    m, n = mesh.shape[0], (len(u) - 2) // mesh.shape[0]
    period = float(u[-2])
    weights = np.concatenate([np.full(m * n, 1.0 / m), [1.0 / period**2, 1.0, 1.0]])
    return CycleSystem(model=model, params=tuple(params), t=jnp.asarray(t, float), kind=kind,
                       n=n, mesh=jnp.asarray(mesh), scale=jnp.sqrt(jnp.asarray(weights)),
                       period=jnp.asarray(period))


def _orbit(system, point) -> tuple:
    """``(y, path)`` of a point on the curve."""
    y = np.asarray(point[0]) / np.asarray(system.scale)
    p, q = system.params
    at = system.model.replace(**{q: float(y[-1])})
    return y, np.asarray(profile(at, p, system.t, jnp.asarray(y[:-1]), system.mesh))


def _errors(system, points, ys) -> np.ndarray:
    """Each point's estimated relative error of the period: on a homoclinic curve (the
    period held) of the orbit at its parameters (``shooting.period_error``), else of
    the point of the curve (``cycle_system.period_error``)."""
    if system.kind != "homoclinic":
        return np.array([curve_error(system, point[0]) for point in points])
    p, q = system.params
    return np.array([float(period_error(system.model.replace(**{q: jnp.asarray(y[-1])}), p,
                                        system.t, jnp.asarray(y[:-1]), system.mesh))
                     for y in ys])


def _fold_test(point) -> float:
    """``sign prod (mu - 1)`` over the non-trivial multipliers (from the segments'
    Jacobians): changes where a real multiplier crosses 1, a fold-flip point on a
    period-doubling curve."""
    mu = floquet(point[4])
    others = np.delete(mu, np.argmin(np.abs(mu - 1.0))) - 1.0
    return float(np.sign(np.real(np.prod(others / np.maximum(np.abs(others), 1e-300)))))


def _codim_two(tracer, back, forth) -> list:
    """``(kind, y)`` of each codimension-two point on the curve, in curve order: cusps
    of cycles on a fold-of-cycles curve, fold-flip points on a period-doubling curve."""
    system = tracer.system
    if system.kind == "fold-of-cycles":
        tests = {CUSP: lambda point: float(np.sign(cusp_test(system, jnp.asarray(point[0]))))}
    elif system.kind == "period-doubling":
        tests = {FOLD_FLIP: _fold_test}
    else:
        return []
    found = [*sign_changes(tracer, *back[:2], tests)[::-1],
             *sign_changes(tracer, *forth[:2], tests)]
    return [(kind, np.asarray(point[0]) / np.asarray(system.scale))
            for _, kind, point in found]


def _curve(system, points, status, bounds, t, rtol, special) -> CycleCurve:
    orbits = [_orbit(system, point) for point in points]
    ys = np.array([y for y, _ in orbits])
    errors = _errors(system, points, ys)
    if system.kind != "homoclinic" and np.max(errors) > rtol:
        status += (f"; periods to about {np.max(errors):.1e}, short of rtol={rtol:g} with "
                   f"{int(np.asarray(system.mesh).size)} steps")
    ends = [extremes(path) for _, path in orbits]
    n, model = system.n, system.model
    saddles = eigs = None
    if system.kind == "homoclinic":
        found = [saddle_near(model.replace(**dict(zip(system.params, y[-2:]))), path, t)
                 for y, path in orbits]
        nan = (np.full(n, np.nan), np.full(n, np.nan + 0j))
        saddles, eigs = (np.array([(f or nan)[i] for f in found]) for i in range(2))
    return CycleCurve(
        kind=system.kind, params=system.params, values=ys[:, -2:], periods=ys[:, -3],
        states=ys[:, :n], minima=np.array([e[0] for e in ends]),
        maxima=np.array([e[1] for e in ends]),
        multipliers=np.array([trusted_multipliers(point[4]) for point in points]),
        errors=errors, saddles=saddles, saddle_eigenvalues=eigs,
        state_names=tuple(model.state_names), bounds=bounds, status=status,
        steps=int(np.asarray(system.mesh).size), t=float(t), model=model,
        special=tuple(CodimTwoPoint(kind=kind, values=y[-2:], state=y[:n], period=y[-3])
                      for kind, y in special))


def cycle_curve(model, params, kind, u, mesh, lo, hi, *, t, sizes, max_points, tol,
                max_newton, rtol=1e-6) -> CycleCurve:
    """The ``kind`` curve through the orbit ``u = [x_0 .. x_{m-1}, T, p]`` (on ``mesh``,
    at the model's own value of ``params[1]``), both ways until ``params[1]`` leaves
    ``[lo, hi]``; a period whose estimated error passes ``rtol`` is said in the status."""
    if kind not in CURVE_KINDS:
        raise ValueError(f"curves of cycles are of {', '.join(CURVE_KINDS)} points, not "
                         f"{kind!r} points")
    if len(params) != 2 or params[0] == params[1]:
        raise ValueError(f"a curve needs two different parameters, got {params}")
    for param in params:
        check_range(model, param, lo, hi)
    q = float(model.parameters()[params[1]])
    if not lo <= q <= hi:
        raise ValueError(f"{params[1]}={q:g} lies outside [{lo:g}, {hi:g}]")
    system = _system(model, params, kind, np.asarray(u, float), mesh, t)
    tracer = CycleTracer(system, tol, max_newton)
    z = np.append(u, q) * np.asarray(system.scale)
    tangent = tracer.kernel(z)
    tangent = tangent if tangent[-1] >= 0 else -tangent
    first = tracer.correct(z, tangent, 0.0, z, tangent)
    if not first[2]:
        raise ValueError(f"the {kind} curve cannot start at the orbit given")
    back, forth = (trace(tracer, f, lo, hi, *sizes, max_points) for f in (flipped(first), first))
    status = "; ".join(dict.fromkeys([back[2], forth[2]]))
    return _curve(system, joined(back[0], forth[0]), status, (lo, hi), t, rtol,
                  _codim_two(tracer, back, forth))


def uniform_mesh(segments: int, steps: int) -> np.ndarray:
    """``segments`` equal segments of about ``steps`` RK4 steps in all (m, k)."""
    k = max(1, round(steps / segments))
    return np.full((segments, k), 1.0 / (segments * k))


def from_special(model, params, point, lo, hi, *, t, segments, steps, **settings):
    """The curve of ``point.kind`` points (a fold of cycles or period doubling of a
    branch in ``params[0]``) through ``point``."""
    kind = getattr(point, "kind", None)
    if kind not in CURVE_KINDS[:2]:
        raise ValueError(f"a curve of cycles in two parameters starts at a fold-of-cycles "
                         f"or period-doubling point, not at {kind or type(point).__name__!r}")
    mesh = uniform_mesh(segments, steps)
    u = orbit_unknowns(model, params[0], point.state, point.period, point.value, mesh, t)
    return cycle_curve(model, params, kind, u, mesh, lo, hi, t=t, **settings)
