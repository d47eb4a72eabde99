"""Pseudo-arclength continuation of an equilibrium branch in one parameter.

The branch is the curve ``F(x, p) = 0`` in ``(x, p)``. Each step predicts along the unit
tangent ``v`` and corrects with optimistix's Newton on ``[F(y); v.(y - y_k) - ds]``; the
new tangent solves ``[F_y; v^T] w = e_last``, so it keeps its orientation through folds.
Along the branch three test functions change sign: the parameter component of the tangent
(a fold), ``sign det [F_y; w^T]`` (a branch point) and the number of complex eigenvalues
with positive real part (a Hopf point). Each is then located by bisection on the
arclength of the step where it changed, to about 1e-12 of the step.
"""

import json

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optimistix as optx

from .equilibria import _starts, default_box, eigenvalues, roots_from
from .hopf import first_lyapunov_coefficient

SPECIAL_KINDS = ("fold", "hopf", "branch")


class SpecialPoint(eqx.Module):
    """A fold, Hopf or branch point: the parameter ``value`` and ``state`` there; at a
    Hopf point also its ``frequency`` and first Lyapunov coefficient (``< 0``:
    supercritical, ``> 0``: subcritical)."""

    kind: str = eqx.field(static=True)
    value: float
    state: np.ndarray
    frequency: float | None = None
    lyapunov_coefficient: float | None = None

    @property
    def criticality(self) -> str | None:
        """``"supercritical"`` or ``"subcritical"`` at a Hopf point, else ``None``."""
        if self.lyapunov_coefficient is None:
            return None
        return "supercritical" if self.lyapunov_coefficient < 0 else "subcritical"


class Continuation(eqx.Module):
    """A branch of equilibria: ``values`` of ``param`` (N,), ``states`` (N, n), their
    ``eigenvalues`` (N, n) and ``stable`` flags, the ``special`` points found on it and
    why it ended (``status``)."""

    param: str = eqx.field(static=True)
    values: np.ndarray
    states: np.ndarray
    eigenvalues: np.ndarray
    stable: np.ndarray
    special: tuple[SpecialPoint, ...]
    state_names: tuple[str, ...] = eqx.field(static=True)
    start: float
    stop: float
    status: str = eqx.field(static=True)
    model: object

    def to_dict(self) -> dict:
        """``{"param": P, "points": [{"value", "state", "stable"}], "special": [{"type",
        "value", "state"}]}``"""
        names = self.state_names
        return {
            "param": self.param,
            "points": [{"value": float(v), "state": dict(zip(names, map(float, x))),
                        "stable": bool(s)}
                       for v, x, s in zip(self.values, self.states, self.stable)],
            "special": [{"type": s.kind, "value": float(s.value),
                         "state": dict(zip(names, map(float, s.state)))}
                        for s in self.special],
        }

    def to_json(self) -> str:
        """:meth:`to_dict` as a JSON string."""
        return json.dumps(self.to_dict())


def _field(model, param, t):
    """``F(y)`` with ``y = [x, p]``."""
    return lambda y: model.replace(**{param: y[-1]}).vector_field(t, y[:-1])


@eqx.filter_jit
def _correct(model, param, t, y0, c, ds, guess, v, tol, max_steps):
    """Newton on ``[F(y); c.(y - y0) - ds]`` from ``guess``; the tangent ``w`` there
    (oriented along ``v``), the branch-point sign and the state Jacobian."""
    f = _field(model, param, t)
    residual = lambda y, args: jnp.concatenate([f(y), (c @ (y - y0) - ds)[None]])
    sol = optx.root_find(residual, optx.Newton(rtol=tol, atol=tol), guess,
                         throw=False, max_steps=max_steps)
    y = sol.value
    jac = jax.jacfwd(f)(y)
    last = jnp.zeros_like(y).at[-1].set(1.0)
    w = jnp.linalg.solve(jnp.concatenate([jac, v[None]]), last)
    w = w / jnp.linalg.norm(w)
    sign = jnp.linalg.slogdet(jnp.concatenate([jac, w[None]]))[0]
    ok = (sol.result == optx.RESULTS.successful) & jnp.all(jnp.isfinite(y)) \
        & jnp.all(jnp.isfinite(w))
    return y, w, ok, sol.stats["num_steps"], sign, jac[:, :-1]


class _Tracer:
    """The corrector with the model, parameter and tolerances bound."""

    def __init__(self, model, param, t, tol, max_steps):
        self.args = (model, param, jnp.asarray(t, float))
        self.tol, self.max_steps = tol, max_steps

    def arclength(self, y0, v, ds):
        return self.correct(y0, v, ds, y0 + ds * v, v)

    def correct(self, y0, c, ds, guess, v):
        out = _correct(*self.args, jnp.asarray(y0), jnp.asarray(c), jnp.asarray(ds, float),
                       jnp.asarray(guess), jnp.asarray(v), self.tol, self.max_steps)
        y, w, ok, steps, sign, jx = jax.device_get(out)
        return y, w, bool(ok), int(steps), float(sign), jx


def _first_point(model, param, start, state, t):
    """The equilibrium nearest ``state`` (default: the initial state) at ``p = start``."""
    at_start = model.replace(**{param: start})
    y0 = np.asarray(at_start.initial_state(), dtype=float)
    target = y0 if state is None else _as_state(model, state, y0)
    starts = np.concatenate([target[None], _starts(default_box(at_start), 64, 0, y0)])
    roots = roots_from(at_start, starts, t)
    if not len(roots):
        raise ValueError(f"no equilibrium found at {param}={start:g}")
    x = roots[np.argmin(np.linalg.norm(roots - target, axis=1))]
    return np.append(x, start)


def _as_state(model, state, y0) -> np.ndarray:
    if isinstance(state, dict):
        out = y0.copy()
        for name, value in state.items():
            out[model.state_index(name)] = float(value)
        return out
    out = np.asarray(state, dtype=float)
    if out.shape != y0.shape:
        raise ValueError(f"state has shape {out.shape}; the model's is {y0.shape}")
    return out


def _check(model, param, start, stop):
    specs = model.parameter_specs()
    if param not in specs:
        raise ValueError(f"{type(model).__name__} has no parameter {param!r}; "
                         f"its parameters are {', '.join(specs) or 'none'}")
    if not (np.isfinite(start) and np.isfinite(stop)) or start == stop:
        raise ValueError(f"continuation needs finite start != stop, got {start} and {stop}")


def _trace(tracer, y, v, start, stop, ds, ds_min, ds_max, max_points):
    """Step along the branch from ``y`` until ``p`` leaves ``[start, stop]``."""
    last = np.zeros_like(y)
    last[-1] = 1.0
    lo, hi = sorted((start, stop))
    points, steps, status = [tracer.correct(y, last, 0.0, y, v)], [], "reached max_points"
    while len(points) < max_points:
        y, v = points[-1][0], points[-1][1]
        new = tracer.arclength(y, v, ds)
        ok, turned = new[2], new[1] @ v < 0.9
        if not ok or turned:
            ds /= 2
            if ds < ds_min:
                status = "step size fell below ds_min"
                break
            continue
        p = new[0][-1]
        if not lo <= p <= hi:  # land on the end of the range and stop
            bound = hi if p > hi else lo
            guess = y + (bound - y[-1]) / (p - y[-1]) * (new[0] - y)
            new = tracer.correct(y, last, bound - y[-1], guess, v)
            if new[2]:
                points.append(new)
                steps.append(float(v @ (new[0] - y)))
            status = f"left the range at {bound:g}"
            break
        points.append(new)
        steps.append(ds)
        if new[3] <= 4:
            ds = min(1.5 * ds, ds_max)
    return points, steps, status


def _unstable_pairs(values) -> np.ndarray:
    """How many complex eigenvalues have a positive real part, per row."""
    values = np.atleast_2d(values)
    scale = 1e-8 * np.maximum(1.0, np.max(np.abs(values), axis=-1, keepdims=True))
    return np.sum((np.abs(values.imag) > scale) & (values.real > 0), axis=-1)


def _bisect(tracer, y, v, s_end, same):
    """The point of the step ``y -> s_end`` where ``same(point)`` turns false."""
    a, b, at = 0.0, s_end, None
    for _ in range(80):
        if abs(b - a) <= 1e-12 * abs(s_end):
            break
        mid = (a + b) / 2
        point = tracer.arclength(y, v, mid)
        if not point[2]:  # exactly on a singular point: step a little aside
            mid = a + 0.49 * (b - a)
            point = tracer.arclength(y, v, mid)
            if not point[2]:
                break
        if same(point):
            a = mid
        else:
            b, at = mid, point
    return at if at is not None else tracer.arclength(y, v, b)


_TESTS = {  # the test function of each kind of special point, at one corrected point
    "fold": lambda point: np.sign(point[1][-1]),
    "branch": lambda point: point[4],
    "hopf": lambda point: int(_unstable_pairs(eigenvalues(point[5]))[0]),
}


def _specials(tracer, points, steps, values, model, param, t, lyapunov_coefficient):
    tests = {"fold": np.sign([p[1][-1] for p in points]),
             "branch": np.array([p[4] for p in points]),
             "hopf": _unstable_pairs(values)}
    found = []
    for k, step in enumerate(steps):
        y, v = points[k][0], points[k][1]
        for kind, test in tests.items():
            if test[k] == test[k + 1]:
                continue
            point = _bisect(tracer, y, v, step,
                            lambda p, f=_TESTS[kind], was=test[k]: f(p) == was)
            special = _special(kind, point, model, param, t, lyapunov_coefficient)
            if special is not None:
                found.append(special)
    return tuple(found)


def _special(kind, point, model, param, t, lyapunov_coefficient):
    y, jx = point[0], point[5]
    x, value = y[:-1], float(y[-1])
    if kind != "hopf":
        return SpecialPoint(kind=kind, value=value, state=x)
    values = eigenvalues(jx)
    pairs = values[np.abs(values.imag) > 1e-8 * max(1.0, np.max(np.abs(values)))]
    if not len(pairs) or np.min(np.abs(pairs.real)) > 1e-6 * max(1.0, np.max(np.abs(values))):
        return None  # a complex pair turned real, not a crossing of the imaginary axis
    omega = float(np.abs(pairs[np.argmin(np.abs(pairs.real))].imag))
    l1 = None
    if lyapunov_coefficient:
        l1, omega = first_lyapunov_coefficient(model.replace(**{param: value}), x, t)
    return SpecialPoint(kind=kind, value=value, state=x, frequency=omega,
                        lyapunov_coefficient=l1)


def continuation(model, param: str, start: float, stop: float, state=None, *,
                 t: float = 0.0, ds: float | None = None, ds_min: float | None = None,
                 ds_max: float | None = None, max_points: int = 2000, tol: float = 1e-10,
                 max_newton: int = 16, lyapunov_coefficient: bool = True) -> Continuation:
    """Continue the equilibrium nearest ``state`` (a dict by state name or an array;
    default: the initial state) at ``param = start`` towards ``stop``, by
    pseudo-arclength steps of ``ds`` (default ``|stop - start| / 100``, adapted between
    ``ds_min`` and ``ds_max``), until the parameter leaves ``[start, stop]`` or
    ``max_points`` points are on the branch. Folds, Hopf and branch points on the way
    are located to about 1e-12 of a step; Hopf points get their first Lyapunov
    coefficient unless ``lyapunov_coefficient=False``.
    """
    start, stop = float(start), float(stop)
    _check(model, param, start, stop)
    span = abs(stop - start)
    ds = span / 100 if ds is None else float(ds)
    ds_max = span / 50 if ds_max is None else float(ds_max)
    ds_min = span * 1e-9 if ds_min is None else float(ds_min)
    tracer = _Tracer(model, param, t, tol, max_newton)
    y = _first_point(model, param, start, state, t)
    v = np.zeros_like(y)
    v[-1] = np.sign(stop - start)
    points, steps, status = _trace(tracer, y, v, start, stop, ds, ds_min, ds_max, max_points)
    if not points[0][2]:
        raise ValueError(f"the branch cannot start at {param}={start:g}")
    ys = np.array([p[0] for p in points])
    values = eigenvalues(np.array([p[5] for p in points]))
    return Continuation(
        param=param, values=ys[:, -1], states=ys[:, :-1], eigenvalues=values,
        stable=np.max(values.real, axis=-1) < 0,
        special=_specials(tracer, points, steps, values, model, param, t,
                          lyapunov_coefficient),
        state_names=tuple(model.state_names), start=start, stop=stop, status=status,
        model=model)
