"""Curves of folds and Hopf points in two parameters, and their codimension-two points.

From a fold or Hopf point of a branch in ``p``, the curve of such points in ``(p, q)`` is
traced both ways by pseudo-arclength on its defining system (``defining``) until ``q``
leaves its range. On the way three test functions are watched, each located by bisection
where its sign changes:

- a **cusp** on a fold curve: ``w.F_xx(v, v)``, with ``v`` the null vector and
  ``w = adj(F_x)^T v`` the left one (the normal form's quadratic coefficient);
- a **Bogdanov-Takens** point on a fold curve: ``trace adj(F_x)``, the product of the
  other eigenvalues; on a Hopf curve: ``kappa = omega^2``, where the Hopf curve ends;
- a **Bautin** (generalised Hopf) point on a Hopf curve: the first Lyapunov coefficient.
"""

import json

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from .._datasets import to_dataset
from .arclength import bisect, check_range, flipped, joined, sign_changes, trace
from .defining import CurveSystem, CurveTracer, adjugate, start_unknowns
from .hopf import first_lyapunov_coefficient

CODIM_TWO_KINDS = ("cusp", "bogdanov-takens", "bautin")


class CodimTwoPoint(eqx.Module):
    """A cusp, Bogdanov-Takens or Bautin point, or on a curve of cycles a cusp of cycles
    or fold-flip point: the ``values`` (2,) of the curve's two parameters, the ``state``
    there and, on a curve of cycles, the orbit's ``period`` (else ``None``)."""

    kind: str = eqx.field(static=True)
    values: np.ndarray
    state: np.ndarray
    period: float | None = None


class BifurcationCurve(eqx.Module):
    """A curve of folds or of Hopf points (``kind``) in two parameters ``params``:
    ``values`` (N, 2), ``states`` (N, n); on a Hopf curve the ``frequency`` (N,) and
    first Lyapunov coefficient (N,; NaN where it was not computed) at each point; the
    codimension-two ``special`` points on it and why each end stopped (``status``)."""

    kind: str = eqx.field(static=True)
    params: tuple[str, str] = eqx.field(static=True)
    values: np.ndarray
    states: np.ndarray
    frequency: np.ndarray | None
    lyapunov_coefficients: np.ndarray | None
    special: tuple[CodimTwoPoint, ...]
    state_names: tuple[str, ...] = eqx.field(static=True)
    start: float
    stop: float
    status: str = eqx.field(static=True)
    model: object

    def to_dict(self) -> dict:
        """``{"type", "params": [P, Q], "points": [{"values": {P, Q}, "state"}],
        "special": [{"type", "values", "state"}]}``; Hopf points also carry
        ``"frequency"`` and ``"lyapunov_coefficient"`` (null where not computed)."""
        points = [self._point(i) for i in range(len(self.values))]
        special = [{"type": s.kind, **self._where(s.values, s.state)} for s in self.special]
        return {"type": self.kind, "params": list(self.params), "points": points,
                "special": special}

    def _where(self, values, state) -> dict:
        return {"values": dict(zip(self.params, map(float, values))),
                "state": dict(zip(self.state_names, map(float, state)))}

    def _point(self, i) -> dict:
        out = self._where(self.values[i], self.states[i])
        if self.frequency is not None:
            out["frequency"] = float(self.frequency[i])
        if self.lyapunov_coefficients is not None:
            l1 = float(self.lyapunov_coefficients[i])
            out["lyapunov_coefficient"] = l1 if np.isfinite(l1) else None
        return out

    def to_json(self) -> str:
        """:meth:`to_dict` as a JSON string."""
        return json.dumps(self.to_dict())

    def to_xarray(self):
        """This result as an ``xarray.Dataset``: the variables, coordinates and attributes
        of its group in a session file (``docs/hdf5-schema.md``)."""
        return to_dataset(self)


def _fold_tests(n):
    def cusp(point):
        v = point[0][n:2 * n]
        return np.sign((adjugate(point[5]).T @ v) @ point[4])

    return {"cusp": cusp, "bogdanov-takens": lambda p: np.sign(np.trace(adjugate(p[5])))}


def _lyapunov(system, point) -> float:
    y, (p, q) = point[0], system.params
    model = system.model.replace(**{p: y[-2], q: y[-1]})
    return first_lyapunov_coefficient(model, y[:system.n], system.t)[0]


def _end_at_bogdanov_takens(tracer, points, steps, status):
    """The Hopf half-curve cut where ``kappa`` first reaches zero, that point last."""
    kappa = np.array([p[0][2 * tracer.system.n] for p in points])
    if kappa.min() > 0:
        return points, steps, status, []
    k = max(int(np.argmax(kappa <= 0)) - 1, 0)
    y, v = points[k][0], points[k][1]
    end = bisect(tracer, y, v, steps[k], lambda p: p[0][2 * tracer.system.n] > 0)
    return (points[:k + 1] + [end], steps[:k] + [float(v @ (end[0] - y))],
            "ended at a Bogdanov-Takens point", [(k, "bogdanov-takens", end)])


def _half(tracer, first, start, stop, sizes, max_points, lyapunov_coefficient):
    """One way along the curve: its points, first Lyapunov coefficients (or ``None``),
    codimension-two ``(k, kind, point)`` found and status."""
    system = tracer.system
    points, steps, status = trace(tracer, first, start, stop, *sizes, max_points)
    if system.kind == "fold":
        return points, None, sign_changes(tracer, points, steps, _fold_tests(system.n)), status
    points, steps, status, found = _end_at_bogdanov_takens(tracer, points, steps, status)
    if not lyapunov_coefficient:
        return points, None, found, status
    hopf = points[:len(points) - len(found)]  # no coefficient where omega = 0
    l1 = [_lyapunov(system, p) for p in hopf]
    test = {"bautin": lambda p: np.sign(_lyapunov(system, p))}
    bautin = sign_changes(tracer, hopf, steps[:len(hopf) - 1], test, {"bautin": np.sign(l1)})
    l1 += [np.nan] * len(found)
    return points, np.array(l1), sorted(bautin + found, key=lambda item: item[0]), status


def checked_point(model, param, point, kinds, t) -> np.ndarray:
    """``[state, value]`` of the special ``point``, checked to be of one of ``kinds``
    and an equilibrium of ``model`` at ``param = value``."""
    if getattr(point, "kind", None) not in kinds:
        raise ValueError(f"from_point must be a {' or '.join(kinds)} point, got "
                         f"{getattr(point, 'kind', type(point).__name__)!r}")
    x, value = np.asarray(point.state, dtype=float), float(point.value)
    residual = np.asarray(model.replace(**{param: value}).vector_field(t, jnp.asarray(x)))
    if x.shape != residual.shape or np.max(np.abs(residual)) > 1e-6 * (1 + np.max(np.abs(x))):
        raise ValueError(f"from_point is not an equilibrium of {type(model).__name__} at "
                         f"{param}={value:g}")
    return np.append(x, value)


def _start(model, params, start, stop, point, t):
    """The curve's system and its unknowns at ``point``."""
    if len(params) != 2 or params[0] == params[1]:
        raise ValueError(f"a curve needs two different parameters, got {params}")
    for param in params:
        check_range(model, param, start, stop)
    y = checked_point(model, params[0], point, ("fold", "hopf"), t)
    q = float(model.parameters()[params[1]])
    if not min(start, stop) <= q <= max(start, stop):
        raise ValueError(f"{params[1]}={q:g} lies outside [{start:g}, {stop:g}]")
    system = CurveSystem(model=model, params=params, t=jnp.asarray(t, float),
                         kind=point.kind, n=len(y) - 1)
    return system, start_unknowns(system, y[:-1], y[-1], q)


def bifurcation_curve(model, params, start, stop, point, *, t, sizes, max_points, tol,
                      max_newton, lyapunov_coefficient) -> BifurcationCurve:
    """The curve of ``point.kind`` points through ``point`` in ``params``, both ways
    until the second parameter leaves ``[start, stop]`` (see ``continuation``)."""
    system, y = _start(model, params, start, stop, point, t)
    tracer = CurveTracer(system, tol, max_newton)
    tangent = tracer.kernel(y)
    tangent = tangent if tangent[-1] * (stop - start) >= 0 else -tangent
    first = tracer.correct(y, tangent, 0.0, y, tangent)
    if not first[2]:
        raise ValueError(f"the {point.kind} curve cannot start at from_point")
    back, forth = (_half(tracer, f, start, stop, sizes, max_points, lyapunov_coefficient)
                   for f in (flipped(first), first))
    ys = np.array([p[0] for p in joined(back[0], forth[0])])
    n = system.n
    found = [*back[2][::-1], *forth[2]]
    return BifurcationCurve(
        kind=point.kind, params=tuple(params), values=ys[:, -2:], states=ys[:, :n],
        frequency=None if point.kind == "fold" else np.sqrt(np.maximum(ys[:, 2 * n], 0)),
        lyapunov_coefficients=None if back[1] is None
        else np.concatenate([back[1][1:][::-1], forth[1]]),
        special=tuple(CodimTwoPoint(kind=kind, values=p[0][-2:], state=p[0][:n])
                      for _, kind, p in found),
        state_names=tuple(model.state_names), start=start, stop=stop,
        status="; ".join(dict.fromkeys([back[3], forth[3]])), model=model)
