"""Pseudo-arclength continuation of an equilibrium branch in one parameter, branch
switching, and the entry point to curves of folds and Hopf points in two parameters.

The branch is the curve ``F(x, p) = 0`` in ``(x, p)``. Each step predicts along the unit
tangent ``v`` and corrects with optimistix's Newton on ``[F(y); v.(y - y_k) - ds]``; the
new tangent solves ``[F_y; v^T] w = e_last``, so it keeps its orientation through folds.
Along the branch three test functions change sign: the parameter component of the tangent
(a fold), ``sign det [F_y; w^T]`` (a branch point) and the number of complex eigenvalues
with positive real part (a Hopf point). Each is then located by bisection on the
arclength of the step where it changed, to about 1e-12 of the step.

At a branch point the kernel of ``[F_x F_p]`` is two-dimensional: one direction is the
branch's own tangent, and the hyperplane normal to the other one, a step away, cuts the
second branch, which is then traced both ways from there.
"""

import json

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optimistix as optx

from .._datasets import to_dataset
from .arclength import check_range, joined, sign_changes, trace
from .curves import bifurcation_curve, checked_point
from .equilibria import _starts, default_box, eigenvalues, roots_from
from .hopf import first_lyapunov_coefficient
from .sources import model_of
from .traced import untraced

SPECIAL_KINDS = ("fold", "hopf", "branch")


class SpecialPoint(eqx.Module):
    """A fold, Hopf or branch point: the parameter ``value`` and ``state`` there, the
    branch's unit ``tangent`` in ``(state, parameter)``; at a Hopf point also its
    ``frequency`` and first Lyapunov coefficient (``< 0``: supercritical, ``> 0``:
    subcritical)."""

    kind: str = eqx.field(static=True)
    value: float
    state: np.ndarray
    frequency: float | None = None
    lyapunov_coefficient: float | None = None
    tangent: np.ndarray | None = None

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

    def to_xarray(self):
        """This result as an ``xarray.Dataset``: the variables, coordinates and attributes
        of its group in a session file (``docs/hdf5-schema.md``)."""
        return to_dataset(self)


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


def _unstable_pairs(values, margin: float = 1e-12) -> np.ndarray:
    """How many complex eigenvalues have a real part above ``margin`` (of the largest
    eigenvalue), per row. Along a branch, a pair on the imaginary axis to rounding (a
    conservative model's centre) counts as on it, not as unstable, so only a pair whose
    real part crosses the axis makes a Hopf point; the crossing is then located with no
    margin, where the real part is zero."""
    values = np.atleast_2d(values)
    size = np.maximum(1.0, np.max(np.abs(values), axis=-1, keepdims=True))
    return np.sum((np.abs(values.imag) > 1e-8 * size) & (values.real > margin * size),
                  axis=-1)


_TESTS = {  # the test function of each kind of special point, at one corrected point
    "fold": lambda point: np.sign(point[1][-1]),
    "branch": lambda point: point[4],
    "hopf": lambda point: int(_unstable_pairs(eigenvalues(point[5]), margin=0.0)[0]),
}


def _specials(tracer, points, steps, values, model, param, t, lyapunov_coefficient):
    known = {"fold": np.sign([p[1][-1] for p in points]), "branch": [p[4] for p in points],
             "hopf": _unstable_pairs(values)}
    found = (_special(kind, point, points[k][1], tracer, model, param, t, lyapunov_coefficient)
             for k, kind, point in sign_changes(tracer, points, steps, _TESTS, known))
    return tuple(s for s in found if s is not None)


def _special(kind, point, v, tracer, model, param, t, lyapunov_coefficient):
    """The special point of ``kind`` at ``point``, found on a step with tangent ``v``."""
    y, jx = point[0], point[5]
    x, value = y[:-1], float(y[-1])
    if kind != "hopf":
        tangent = _branch_tangent(tracer, y, v) if kind == "branch" else point[1]
        return SpecialPoint(kind=kind, value=value, state=x, tangent=tangent)
    values = eigenvalues(jx)
    pairs = values[np.abs(values.imag) > 1e-8 * max(1.0, np.max(np.abs(values)))]
    if not len(pairs) or np.min(np.abs(pairs.real)) > 1e-6 * max(1.0, np.max(np.abs(values))):
        return None  # a complex pair turned real, not a crossing of the imaginary axis
    omega = float(np.abs(pairs[np.argmin(np.abs(pairs.real))].imag))
    l1 = None
    if lyapunov_coefficient:
        l1, omega = first_lyapunov_coefficient(model.replace(**{param: value}), x, t)
    return SpecialPoint(kind=kind, value=value, state=x, frequency=omega,
                        lyapunov_coefficient=l1, tangent=point[1])


@eqx.filter_jit
def _extended_jacobian(model, param, t, y):
    """``[F_x F_p]`` at ``y = [x, p]``."""
    return jax.jacfwd(_field(model, param, t))(y)


def _kernel(tracer, y) -> np.ndarray:
    """An orthonormal basis (n + 1, 2) of the kernel of ``[F_x F_p]`` at a branch point."""
    jac = np.asarray(_extended_jacobian(*tracer.args, jnp.asarray(y)))
    return np.linalg.svd(jac)[2][-2:].T


def _branch_tangent(tracer, y, v) -> np.ndarray:
    """The branch's tangent at the branch point ``y``: ``v`` (the tangent a step before)
    projected on the kernel."""
    basis = _kernel(tracer, y)
    tangent = basis @ (basis.T @ v)
    return tangent / np.linalg.norm(tangent)


def _second_direction(basis, tangent, toward) -> np.ndarray:
    """The unit vector of the kernel normal to ``tangent``; its parameter component
    (where it has one, else its largest component) has the sign of ``toward``."""
    a = basis.T @ tangent
    c = basis @ np.array([-a[1], a[0]])
    c = c / np.linalg.norm(c)
    lead = c[-1] * toward if abs(c[-1]) > 1e-8 else c[np.argmax(np.abs(c))]
    return c if lead > 0 else -c


def _switch(tracer, model, param, point, start, stop, t, sizes, max_points):
    """The second branch through the branch point ``point``, traced both ways from a
    step either side: the two ``(points, steps, status)`` and the crossing point."""
    y = checked_point(model, param, point, ("branch",), t)
    if point.tangent is None or not min(start, stop) <= y[-1] <= max(start, stop):
        raise ValueError(f"from_point must be a branch point of a Continuation in {param} "
                         f"inside [{start:g}, {stop:g}]")
    c = _second_direction(_kernel(tracer, y), np.asarray(point.tangent), np.sign(stop - start))
    halves = []
    for direction in (-c, c):
        first = tracer.arclength(y, direction, sizes[0])
        if not first[2]:
            raise ValueError(f"no second branch found through {param}={y[-1]:g}")
        halves.append(trace(tracer, first, start, stop, *sizes, max_points))
    firsts = [points[0][0] for points, _, _ in halves]
    middle = firsts[1] - firsts[0]
    crossing = SpecialPoint(kind="branch", value=float(y[-1]), state=y[:-1],
                            tangent=middle / np.linalg.norm(middle))
    return halves, crossing


def _step_sizes(start, stop, ds, ds_min, ds_max) -> tuple[float, float, float]:
    span = abs(stop - start)
    return (span / 100 if ds is None else float(ds), span * 1e-9 if ds_min is None
            else float(ds_min), span / 50 if ds_max is None else float(ds_max))


def _eigenvalues(points) -> np.ndarray:
    return eigenvalues(np.array([p[5] for p in points]))


def _branch(points, values, specials, status, model, param, start, stop) -> Continuation:
    ys = np.array([p[0] for p in points])
    return Continuation(
        param=param, values=ys[:, -1], states=ys[:, :-1], eigenvalues=values,
        stable=np.max(values.real, axis=-1) < 0, special=specials,
        state_names=tuple(model.state_names), start=start, stop=stop, status=status,
        model=model)


def continuation(model, param, start: float, stop: float, state=None, *, from_point=None,
                 t: float = 0.0, ds: float | None = None, ds_min: float | None = None,
                 ds_max: float | None = None, max_points: int = 2000, tol: float = 1e-10,
                 max_newton: int = 16, lyapunov_coefficient: bool = True):
    """Continue the equilibrium nearest ``state`` (a dict by state name or an array;
    default: the initial state) at ``param = start`` towards ``stop``, by
    pseudo-arclength steps of ``ds`` (default ``|stop - start| / 100``, adapted between
    ``ds_min`` and ``ds_max``), until the parameter leaves ``[start, stop]`` or
    ``max_points`` points are on the branch. Folds, Hopf and branch points on the way
    are located to about 1e-12 of a step; Hopf points get their first Lyapunov
    coefficient unless ``lyapunov_coefficient=False``. Gives a :class:`Continuation`.

    ``from_point``, a ``"branch"`` point of a branch in ``param``: the other branch
    through it, both ways until ``param`` leaves ``[start, stop]``.

    ``param`` a pair ``(p, q)`` and ``from_point`` a ``"fold"`` or ``"hopf"`` point of a
    branch in ``p``: the curve of such points in ``(p, q)``, both ways until ``q`` leaves
    ``[start, stop]``, with its cusp, Bogdanov-Takens and Bautin points. Gives a
    :class:`BifurcationCurve`.

    ``model`` may also be an analysis result (a branch or curve, e.g. one read back
    from a session): its model is continued.
    """
    model = model_of(model)
    untraced("continuation", model, start, stop, state)
    start, stop = float(start), float(stop)
    if from_point is not None and state is not None:
        raise ValueError("give state or from_point, not both")
    sizes = _step_sizes(start, stop, ds, ds_min, ds_max)
    if not isinstance(param, str):
        return bifurcation_curve(model, tuple(param), start, stop, from_point, t=t,
                                 sizes=sizes, max_points=max_points, tol=tol,
                                 max_newton=max_newton, lyapunov_coefficient=lyapunov_coefficient)
    check_range(model, param, start, stop)
    tracer = _Tracer(model, param, t, tol, max_newton)
    found = lambda points, steps, values: _specials(
        tracer, points, steps, values, model, param, t, lyapunov_coefficient)
    if from_point is not None:
        (back, forth), crossing = _switch(tracer, model, param, from_point, start, stop, t,
                                          sizes, max_points)
        (b_values, f_values) = _eigenvalues(back[0]), _eigenvalues(forth[0])
        specials = (*found(*back[:2], b_values)[::-1], crossing, *found(*forth[:2], f_values))
        return _branch(joined(back[0], forth[0]), np.concatenate([b_values[::-1], f_values]),
                       specials, "; ".join(dict.fromkeys([back[2], forth[2]])), model, param,
                       start, stop)
    y = _first_point(model, param, start, state, t)
    last = np.zeros_like(y)
    last[-1] = 1.0
    first = tracer.correct(y, last, 0.0, y, last * np.sign(stop - start))
    if not first[2]:
        raise ValueError(f"the branch cannot start at {param}={start:g}")
    points, steps, status = trace(tracer, first, start, stop, *sizes, max_points)
    values = _eigenvalues(points)
    return _branch(points, values, found(points, steps, values), status, model, param, start,
                   stop)
