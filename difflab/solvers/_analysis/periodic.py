"""Periodic orbits continued in one parameter, from a Hopf point or from a guessed orbit.

Each orbit is found by multiple shooting (``shooting.py``: fixed-step RK4 with the period
scaled out, exact Jacobians by ``jax.jacfwd``, Newton) and the branch is followed by
pseudo-arclength steps in ``(x, T, p)``, the orbit's ``m`` points weighted ``1 / m`` (the
orbit counts as one state) and the period relative to the first one. From a Hopf point the first orbit is predicted along the
critical eigenvector ``q``: ``x(theta) = x_H + eps Re(q e^{i theta})``, ``T = 2 pi / w``.
Along the branch three test functions are watched: the parameter component of the
tangent (a **fold of cycles**), the sign of ``prod(mu + 1)`` over the Floquet
multipliers (**period doubling**: a multiplier crosses -1) and the number of complex
multipliers outside the unit circle (**Neimark-Sacker**), and the sign of
``t_p prod (mu - 1)`` over the non-trivial multipliers (a **branch point of cycles**, see
``cycle_branching.py``). Each is located by bisection on
the arclength of the step where it changed, as for equilibria. Each step is oriented
along its secant and, once taken, its shooting points are turned so the first sits where
the flow is fast (the Poincare phase condition then never grazes the orbit).
"""

import json
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._datasets import to_dataset
from .._resources import check_memory, check_step_count
from .continuation import SpecialPoint
from .equilibria import jacobian
from .cycle_steps import _Orbit, _Shooter, _trace, floquet  # noqa: F401
from .cycle_steps import extremes as _extremes
from .cycle_curves import from_special
from .cycle_branching import KIND as BRANCH_POINT
from .cycle_branching import branch_seed, branching, reduced
from .doubling import TORUS, check_switchable, doubled_seed, halved_mesh
from .shooting import orbit_path
from .sources import model_of
from .traced import untraced

CYCLE_KINDS = ("fold-of-cycles", "period-doubling", "neimark-sacker", BRANCH_POINT)
NOTES = {"fold-of-cycles": "two branches of orbits meet here and end",
         "period-doubling": "periodic_orbits from this point follows the doubled orbits",
         BRANCH_POINT: "periodic_orbits from this point follows the other branch through it",
         "neimark-sacker": TORUS}


class CycleSpecialPoint(eqx.Module):
    """A fold of cycles, period doubling, Neimark-Sacker point or branch point of cycles
    on a branch of periodic orbits: the parameter ``value``, the ``period``, a ``state``
    on the orbit, the orbit's ``minimum`` and ``maximum`` per state, its Floquet
    ``multipliers`` and the branch's unit ``tangent`` in ``(state, period, parameter)``
    (``None`` in files written before it was kept)."""

    kind: str = eqx.field(static=True)
    value: float
    period: float
    state: np.ndarray
    minimum: np.ndarray
    maximum: np.ndarray
    multipliers: np.ndarray
    tangent: np.ndarray | None = None

    @property
    def note(self) -> str:
        """What the point means for continuing from it, in words."""
        return NOTES.get(self.kind, "")


class PeriodicOrbits(eqx.Module):
    """A branch of periodic orbits: per orbit the parameter ``values`` (N,), ``periods``
    (N,), a point on it (``states``, (N, n)), its ``minima`` and ``maxima`` per state
    (N, n), its Floquet ``multipliers`` (N, n) complex, largest modulus first (one of them
    is the trivial 1; NaN where they cannot be trusted), ``stable`` flags and the
    estimated relative ``errors`` of the periods (N,); the ``special`` points found on it, the Hopf
    point it started from (``hopf``, or ``None``) and why it ended (``status``)."""

    param: str = eqx.field(static=True)
    values: np.ndarray
    periods: np.ndarray
    states: np.ndarray
    minima: np.ndarray
    maxima: np.ndarray
    multipliers: np.ndarray
    stable: np.ndarray
    errors: np.ndarray
    special: tuple[CycleSpecialPoint, ...]
    hopf: SpecialPoint | None
    state_names: tuple[str, ...] = eqx.field(static=True)
    bounds: tuple[float, float] = eqx.field(static=True)
    status: str = eqx.field(static=True)
    steps: int = eqx.field(static=True)
    t: float = eqx.field(static=True)
    model: object

    def orbit(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """Orbit ``i`` integrated again over one period: times (steps + 1,), states
        (steps + 1, n)."""
        period, value = float(self.periods[i]), float(self.values[i])
        hs = jnp.full(self.steps, 1.0 / self.steps)
        ys = orbit_path(self.model, self.param, jnp.asarray(self.t, float),
                        jnp.asarray(self.states[i]), period, value, hs)
        return np.linspace(0.0, period, self.steps + 1), np.asarray(ys)

    def to_dict(self) -> dict:
        """``{"param": P, "points": [{"value", "period", "min", "max", "stable",
        "multipliers"}], "special": [{"type", "value", "period"}], "status": why it ended}``"""
        names = self.state_names
        points = [{"value": float(v), "period": float(T),
                   "min": dict(zip(names, map(float, lo))),
                   "max": dict(zip(names, map(float, hi))), "stable": bool(s),
                   "multipliers": [[float(z.real), float(z.imag)] for z in mu]
                   if np.all(np.isfinite(mu)) else None}
                  for v, T, lo, hi, s, mu in zip(self.values, self.periods, self.minima,
                                                 self.maxima, self.stable, self.multipliers)]
        special = [{"type": s.kind, "value": float(s.value), "period": float(s.period)}
                   for s in self.special]
        return {"param": self.param, "points": points, "special": special,
                "status": self.status}

    def to_json(self) -> str:
        """:meth:`to_dict` as a JSON string."""
        return json.dumps(self.to_dict())

    def to_xarray(self):
        """This result as an ``xarray.Dataset``: the variables, coordinates and attributes
        of its group in a session file (``docs/hdf5-schema.md``)."""
        return to_dataset(self)


def _rotated(q) -> np.ndarray:
    """``q e^{i phi}`` with real and imaginary parts orthogonal, the real part longer."""
    a, b = q.real, q.imag
    phi = 0.5 * np.arctan2(-2 * a @ b, a @ a - b @ b)
    q = q * np.exp(1j * phi)
    return q / np.linalg.norm(q)


def _from_hopf(shooter, model, param, hopf, t) -> _Orbit:
    """The Hopf point as an orbit of amplitude zero, its tangent along ``Re(q e^{i theta})``."""
    x, value, m = np.asarray(hopf.state, float), float(hopf.value), shooter.m
    jac = np.asarray(jacobian(model.replace(**{param: value}), jnp.asarray(x), t))
    values, vectors = np.linalg.eig(jac)
    i = int(np.argmin(np.abs(values.real) + np.where(values.imag > 0, 0.0, np.inf)))
    if not np.isfinite(values[i].imag) or values[i].imag <= 0:
        raise ValueError(f"no pair of imaginary eigenvalues at {param}={value:g}")
    l1 = hopf.lyapunov_coefficient
    if l1 is not None and abs(l1) <= 1e-14 * values[i].imag:
        raise ValueError(f"the Hopf point at {param}={value:g} is degenerate (first Lyapunov "
                         f"coefficient 0): start from an orbit (state, period) instead")
    q, period = _rotated(vectors[:, i]), 2 * np.pi / values[i].imag
    theta = 2 * np.pi * np.arange(m) / m
    v = np.concatenate([(q[None, :] * np.exp(1j * theta)[:, None]).real.ravel(), [0.0, 0.0]])
    v /= np.sqrt(v @ (shooter.weights * v))
    monodromy = np.asarray(jax.scipy.linalg.expm(jac * period))
    return _Orbit(np.concatenate([np.tile(x, m), [period, value]]), v, True, 0, monodromy[None],
                  -q.imag / np.linalg.norm(q.imag))


def _state_vector(model, state) -> np.ndarray:
    """``state`` (a dict by state name, others from the initial state, or an array)."""
    y0 = np.array(model.initial_state(), dtype=float)
    if isinstance(state, dict):
        for name, value in state.items():
            if name not in model.state_names:
                raise ValueError(f"{type(model).__name__} has no state {name!r}; its states "
                                 f"are {', '.join(model.state_names)}")
            y0[model.state_index(name)] = float(value)
        return y0
    out = np.asarray(state, dtype=float)
    if out.shape != y0.shape:
        raise ValueError(f"state has shape {out.shape}; the model's is {y0.shape}")
    return out


def _from_guess(shooter, model, param, state, period, t, direction) -> _Orbit:
    """The orbit through (near) ``state`` at the model's own value of ``param``."""
    value = float(getattr(model, param))
    x = _state_vector(model, state)
    k = shooter.k
    path = np.asarray(orbit_path(model, param, shooter.t, jnp.asarray(x), float(period),
                                 value, jnp.asarray(shooter.mesh.ravel())))
    guess = np.concatenate([path[:-1:k].ravel(), [period, value]])
    flow = np.asarray(model.vector_field(shooter.t, jnp.asarray(x)), dtype=float)
    if not np.linalg.norm(flow) > 0:
        raise ValueError("the state given is an equilibrium, not a point on an orbit")
    orient = np.zeros_like(guess)
    orient[-1] = direction
    seed = _Orbit(guess, orient, True, 0, np.eye(len(x))[None], flow / np.linalg.norm(flow))
    first = shooter.hold(seed, value, guess)
    if not first.ok:
        raise ValueError(f"no periodic orbit found near the state and period given at "
                         f"{param}={value:g}")
    return first


def _doubling(point) -> float | None:
    """The sign of ``prod(mu + 1)``: changes where a real multiplier crosses -1."""
    z = point.multipliers + 1.0
    if not np.all(np.isfinite(z)):
        return None
    return float(np.sign(np.real(np.prod(z / np.maximum(np.abs(z), 1e-300)))))


def _torus(point) -> int | None:
    """How many complex multipliers lie outside the unit circle."""
    mu = point.multipliers
    if not np.all(np.isfinite(mu)):
        return None
    return int(np.sum((np.abs(mu.imag) > 1e-8 * max(1.0, np.abs(mu).max())) & (np.abs(mu) > 1)))


_TESTS = {
    "fold-of-cycles": lambda point: float(np.sign(point.tangent[-1])),
    "period-doubling": _doubling,
    "neimark-sacker": _torus,
    BRANCH_POINT: branching,
}


def _bisect(shooter, point, s_end, same) -> _Orbit:
    """The orbit of the step ``point -> s_end`` where ``same(orbit)`` turns false."""
    a, b, at = 0.0, s_end, None
    for _ in range(80):
        if abs(b - a) <= 1e-12 * abs(s_end):
            break
        mid = (a + b) / 2
        new = shooter.step(point, mid)
        if not new.ok:  # exactly on a singular point: step a little aside
            mid = a + 0.49 * (b - a)
            new = shooter.step(point, mid)
            if not new.ok:
                break
        if same(new):
            a = mid
        else:
            b, at = mid, new
    return at if at is not None else shooter.step(point, b)


def _special(kind, orbit, shooter, tangent) -> CycleSpecialPoint | None:
    mu = orbit.multipliers
    if kind == "neimark-sacker":  # a complex pair on the unit circle, not one turning real
        pairs = mu[np.abs(mu.imag) > 1e-8 * max(1.0, np.abs(mu).max())]
        if not len(pairs) or np.min(np.abs(np.abs(pairs) - 1)) > 1e-4:
            return None
    lo, hi = _extremes(shooter.path(orbit))
    return CycleSpecialPoint(kind=kind, value=float(orbit.u[-1]), period=float(orbit.u[-2]),
                             state=orbit.u[:shooter.n], minimum=lo, maximum=hi,
                             multipliers=mu, tangent=tangent)


def _specials(shooter, points, steps, first) -> tuple[CycleSpecialPoint, ...]:
    """The special points between orbits ``first`` and the last, in branch order."""
    found = []
    for kind, test in _TESTS.items():
        values = [test(point) for point in points]
        for k in range(first, len(steps)):
            if values[k] is None or values[k + 1] is None or values[k] == values[k + 1]:
                continue
            orbit = _bisect(shooter, points[k], steps[k],
                            lambda o, f=test, was=values[k]: f(o) == was)
            special = _special(kind, orbit, shooter, reduced(points[k].tangent, shooter.n))
            if special is not None:
                found.append((k, special))
    unique = []  # a point passed twice (where the branch came back onto itself) once
    for _, special in sorted(found, key=lambda item: (item[0], item[1].value)):
        if not any(s.kind == special.kind and np.isclose(s.value, special.value, rtol=1e-6,
                                                         atol=1e-9)
                   and np.isclose(s.period, special.period, rtol=1e-6) for s in unique):
            unique.append(special)
    return tuple(unique)


def _check(model, param, lo, hi, segments, steps):
    specs = model.parameter_specs()
    if param not in specs:
        raise ValueError(f"{type(model).__name__} has no parameter {param!r}; "
                         f"its parameters are {', '.join(specs) or 'none'}")
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise ValueError(f"periodic orbits need finite lo < hi, got {lo} and {hi}")
    if segments < 1 or steps < segments:
        raise ValueError(f"need 1 <= segments <= steps, got segments={segments}, "
                         f"steps={steps}")
    n = len(model.state_names)  # the mesh of step sizes and a state at every step
    check_step_count(steps, f"{steps:,} RK4 steps per period", "use fewer steps")
    check_memory(steps * (1 + n) * 8, f"{steps:,} steps per period ({n} states)",
                 "use fewer steps")


def _period(start) -> float:
    """The first orbit's period, about: ``2 pi / w`` at a Hopf point."""
    if isinstance(start, SpecialPoint):
        if start.kind != "hopf" or not start.frequency:
            raise ValueError(f"periodic orbits start at a Hopf point, not a {start.kind} point")
        return 2 * np.pi / start.frequency
    try:
        _, period = start
        period = float(period)
    except (TypeError, ValueError):
        raise ValueError("start must be a Hopf SpecialPoint, a period-doubling or branch "
                         "point CycleSpecialPoint or a pair (state, period)") from None
    if not (np.isfinite(period) and period > 0):
        raise ValueError(f"the period must be finite and positive, got {period}")
    return period


def _switch_start(model, param, point, t, n, segments, steps, settings, direction):
    """The shooter of the branch through ``point`` and its first orbit: at a period
    doubling the orbit traversed twice, at a branch point of cycles the orbit itself,
    each with the new branch's tangent."""
    check_switchable(point)
    if point.kind == BRANCH_POINT:
        shooter = _Shooter(model, param, t, n, segments, steps, float(point.period),
                           *settings)
        return shooter, branch_seed(shooter, point, direction)
    period = float(point.period)
    shooter = _Shooter(model, param, t, n, *halved_mesh(segments, steps), period, *settings)
    at = model.replace(**{param: point.value})
    orbit = _from_guess(shooter, at, param, point.state, period, t, 1)
    while shooter.refine(orbit.error):
        orbit = _from_guess(shooter, at, param, point.state, period, t, 1)
    m, k = shooter.m, shooter.k
    tol, max_newton, rtol, max_steps = settings
    doubled = _Shooter(model, param, t, n, 2 * m, 2 * m * k, 2 * period, tol, max_newton,
                       rtol, 2 * max_steps)
    return doubled, doubled_seed(doubled, orbit, m)


def _first(shooter, model, param, start, t, direction) -> _Orbit:
    if isinstance(start, SpecialPoint):
        return _from_hopf(shooter, model, param, start, t)
    return _from_guess(shooter, model, param, start[0], float(start[1]), t, direction)


def periodic_orbits(model, param: str, start, lo: float, hi: float, *, t: float = 0.0,
                    segments: int = 16, steps: int = 400, ds: float | None = None,
                    ds_min: float | None = None, ds_max: float | None = None,
                    max_points: int = 1000, max_period: float | None = None,
                    direction: int = 1, tol: float = 1e-10, max_newton: int = 12,
                    rtol: float = 1e-6, max_steps: int = 20_000) -> PeriodicOrbits:
    """Continue periodic orbits of an autonomous ``model`` in ``param`` while it stays in
    ``[lo, hi]``.

    ``start``: a Hopf :class:`SpecialPoint` (from :func:`continuation`; the branch
    starts there with amplitude zero), a period-doubling :class:`CycleSpecialPoint` of a
    branch of orbits (the branch of doubled orbits, period ``2 T``, starts there; on
    ``segments`` segments of the orbit at the point's RK4 steps), a branch point of
    cycles (the other branch through it starts there, the way ``direction`` picks; a
    Neimark-Sacker point is refused: its torus is out of reach) or a pair
    ``(state, period)``: a state near an orbit (a dict by state name or an array) and
    about its period, at the model's own
    value of ``param`` (the branch then leaves towards larger ``param`` if
    ``direction > 0``). Orbits are found by multiple shooting over ``segments`` segments
    with ``steps`` RK4 steps per period; arclength steps ``ds`` (default
    ``(hi - lo) / 100``) adapt between ``ds_min`` and ``ds_max``. The branch ends when the
    parameter leaves the range (the last orbit lands on it), the period passes
    ``max_period`` (default 20 times the first) or grows by half while the multipliers
    cannot be trusted, the orbit shrinks to a point, or ``max_points`` orbits are on it.
    Where the period has doubled and the orbit passes a saddle within 1% of its size (or,
    with ``max_period`` given, once the period passes it) the branch ends with the status
    ``"period grows without bound: homoclinic orbit near p=..."``, the value extrapolated
    by ``p = p_h + C exp(-lambda T)`` with the saddle's leading rate ``lambda``; its last
    orbit starts :func:`homoclinic`. Folds of cycles, period doublings,
    Neimark-Sacker points and branch points of cycles are located to about 1e-12 of a
    step. Each orbit's period error is estimated (Richardson with half steps, ``errors``); where it passes ``rtol``
    the steps per period grow (up to ``max_steps``) and the orbit is found again, and a
    branch that still misses ``rtol`` says so in its ``status``. Where rounding spoils
    the multipliers (near a homoclinic orbit, on a canard) they are NaN and the orbit is
    not counted stable.

    ``param`` a pair ``(p, q)`` and ``start`` a fold-of-cycles or period-doubling
    :class:`CycleSpecialPoint` of a branch in ``p``: the curve of such points in
    ``(p, q)`` (the orbit and its fold or doubling condition continued together, on
    ``segments`` segments of about ``steps / segments`` RK4 steps: give the branch's
    ``steps``), both ways until ``q`` leaves ``[lo, hi]``. Gives a :class:`CycleCurve`
    with each period's estimated error (``errors``); where one passes ``rtol`` its
    ``status`` says so (give more ``steps``).

    ``model`` may also be an analysis result (a branch or curve, e.g. one read back from
    a session): its model is used.
    """
    model = model_of(model)
    untraced("periodic_orbits", model, lo, hi)
    lo, hi = float(lo), float(hi)
    span = hi - lo
    sizes = (span / 100 if ds is None else float(ds), span * 1e-9 if ds_min is None
             else float(ds_min), span / 25 if ds_max is None else float(ds_max))
    if not isinstance(param, str):
        _check(model, param[0], lo, hi, segments, steps)
        return from_special(model, tuple(param), start, lo, hi, t=t, segments=int(segments),
                            steps=int(steps), sizes=sizes, max_points=max_points, tol=tol,
                            max_newton=max_newton, rtol=float(rtol))
    _check(model, param, lo, hi, segments, steps)
    _check(model, param, lo, hi, segments, max(int(max_steps), int(steps)))
    n = len(np.asarray(model.initial_state()))
    settings = (tol, max_newton, float(rtol), max(int(max_steps), int(steps)))
    if isinstance(start, CycleSpecialPoint):
        shooter, first = _switch_start(model, param, start, t, n, int(segments), int(steps),
                                       settings, 1 if direction > 0 else -1)
        _check(model, param, lo, hi, shooter.m, 2 * settings[-1])
    else:
        shooter = _Shooter(model, param, t, n, int(segments), int(steps), _period(start),
                           *settings)
        first = _first(shooter, model, param, start, t, 1 if direction > 0 else -1)
        while shooter.refine(first.error):
            first = _first(shooter, model, param, start, t, 1 if direction > 0 else -1)
    if not lo <= first.u[-1] <= hi:
        raise ValueError(f"the first orbit is at {param}={first.u[-1]:g}, outside "
                         f"[{lo:g}, {hi:g}]")
    watch = max_period is None
    max_period = 20 * first.u[-2] if watch else float(max_period)
    points, paths = [first], [shooter.path(first)]
    steps_taken, status = _trace(shooter, points, paths, (lo, hi), *sizes, max_points,
                                 max_period, int(isinstance(start, SpecialPoint)), watch)
    errors = np.array([point.error for point in points])
    if np.max(errors) > rtol:
        status += (f"; periods to about {np.max(errors):.1e}, short of rtol={rtol:g} "
                   f"with {shooter.m * shooter.k} steps")
    return _result(shooter, points, paths, steps_taken, status, start, (lo, hi), t, errors)


def _result(shooter, points, paths, steps, status, start, bounds, t, errors) -> PeriodicOrbits:
    hopf = start if isinstance(start, SpecialPoint) else None
    us = np.array([p.u for p in points])
    multipliers = np.array([p.multipliers for p in points])
    trivial = np.argmin(np.abs(multipliers - 1.0), axis=1)
    others = np.abs(multipliers) < 1.0
    others[np.arange(len(points)), trivial] = True
    stable = np.all(others, axis=1)
    switched = isinstance(start, (SpecialPoint, CycleSpecialPoint))
    if switched and len(points) > 1:  # the Hopf or doubling point itself: as its first orbit
        stable[0] = stable[1]
    extremes = [_extremes(path) for path in paths]
    model, n = shooter.model, shooter.n
    return PeriodicOrbits(
        param=shooter.param, values=us[:, -1], periods=us[:, -2], states=us[:, :n],
        minima=np.array([e[0] for e in extremes]), maxima=np.array([e[1] for e in extremes]),
        multipliers=multipliers, stable=stable, errors=errors,
        special=_specials(shooter, points, steps, int(switched)), hopf=hopf,
        state_names=tuple(model.state_names), bounds=bounds, status=status,
        steps=shooter.m * shooter.k, t=float(t), model=model)
