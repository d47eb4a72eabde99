"""The steps along a branch of periodic orbits: the shooting corrector with the model and
mesh bound, Floquet multipliers from the segments' Jacobians, and the stepping loop with
its checks (secant-oriented steps, the phase re-anchored where the flow is fast, the end
at a Hopf point, at a homoclinic orbit or where the branch comes back onto itself)."""

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from .saddles import NEAR, homoclinic_end
from .shooting import correct, profile, speeds


class _Orbit(NamedTuple):
    u: np.ndarray  # [x_0 .. x_{m-1}, T, p]
    tangent: np.ndarray
    ok: bool
    steps: int
    blocks: np.ndarray  # (m, n, n): each segment's state Jacobian, in order
    flow: np.ndarray  # the unit direction of the flow at x_0: the next phase condition
    error: float = 0.0  # the period's estimated relative error on this mesh

    @property
    def multipliers(self) -> np.ndarray:
        """Largest modulus first; NaN where they cannot be trusted (the trivial multiplier
        is off 1 by 1e-5: rounding near a homoclinic orbit or on a canard)."""
        return trusted_multipliers(self.blocks)


def trusted_multipliers(blocks) -> np.ndarray:
    """:func:`floquet` of ``blocks``, all NaN unless one of them is 1 to 1e-5."""
    values = floquet(blocks)
    if not np.min(np.abs(values - 1.0)) <= 1e-5:
        return np.full_like(values, np.nan)
    return values


def floquet(blocks) -> np.ndarray:
    """The eigenvalues of the product ``A_{m-1} .. A_0`` of the segment Jacobians without
    forming it: the block-cyclic matrix with ``A_i`` below its diagonal has the ``m``-th
    roots of each multiplier as eigenvalues, all of moderate size even where the product
    spans twenty orders of magnitude. Of each multiplier's ``m`` roots the one whose
    argument lies in a fixed window of width ``2 pi / m`` is kept. Largest modulus first."""
    blocks = np.asarray(blocks, dtype=float)
    m, n = blocks.shape[:2]
    if m == 1:
        values = np.linalg.eigvals(blocks[0]).astype(complex)
    else:
        cyclic = np.zeros((m * n, m * n))
        for i in range(m):
            j = (i + 1) % m
            cyclic[j * n:(j + 1) * n, i * n:(i + 1) * n] = blocks[i]
        roots = np.linalg.eigvals(cyclic)
        start = -np.pi / m + 0.3183 / m  # a window edge no real multiplier's root sits on
        key = np.mod(np.angle(roots) - start, 2 * np.pi)
        values = roots[np.argsort(key, kind="stable")[:n]] ** m
    return values[np.argsort(-np.abs(values), kind="stable")]


class _Shooter:
    """The shooting corrector with the model, mesh and tolerances bound."""

    def __init__(self, model, param, t, n, segments, steps, period, tol, max_newton,
                 rtol=np.inf, max_steps=0):
        self.model, self.param, self.t, self.n = model, param, jnp.asarray(t, float), n
        self.m = segments
        self.weights = np.concatenate([np.full(self.m * n, 1.0 / self.m),
                                       [1.0 / period**2, 1.0]])
        self.tol, self.max_newton = tol, max_newton
        self.rtol, self.max_steps = rtol, max_steps  # the period's accuracy, the mesh's cap
        self._steps(max(1, round(steps / segments)))

    def _steps(self, k: int) -> None:
        """``k`` equal RK4 steps per segment: the ``mesh`` ``(m, k)``; the corrector's copy
        is padded to the most steps it may be refined to (one program for them all)."""
        self.k = k
        self.mesh = np.full((self.m, k), 1.0 / (self.m * k))
        room = max(k, self.max_steps // self.m) - k
        self._padded = jnp.asarray(np.pad(self.mesh, ((0, 0), (0, room))))
        self._count = jnp.asarray(k)

    def refine(self, error: float) -> bool:
        """More RK4 steps per segment, enough by RK4's ``h^4`` for a period error of about
        ``error`` to fall below ``self.rtol`` (at least half as many again), up to
        ``self.max_steps`` per period. ``False`` if there were already that many."""
        k = min(int(np.ceil(self.k * min(4.0, max(1.5, 1.2 * (error / self.rtol) ** 0.25)))),
                self.max_steps // self.m)
        if not (error > self.rtol and k > self.k):
            return False
        self._steps(k)
        return True

    def correct(self, u0, c, ds, guess, ref, direction, orient) -> _Orbit:
        arrays = [jnp.asarray(a, float) for a in (u0, c, ds, guess, ref, direction, orient,
                                                   self.weights)]
        out = correct(self.model, self.param, self.t, *arrays, self._padded, self._count,
                      self.tol, self.max_newton)
        u, w, ok, steps, blocks, flow, error = jax.device_get(out)
        return _Orbit(u, w, bool(ok), int(steps), blocks, flow, float(error))

    def step(self, point: _Orbit, ds: float) -> _Orbit:
        """The orbit at arclength ``ds`` along ``point``'s tangent."""
        return self.correct(point.u, self.weights * point.tangent, ds,
                            point.u + ds * point.tangent, point.u[:self.n], point.flow,
                            point.tangent)

    def hold(self, point: _Orbit, value: float, guess) -> _Orbit:
        """The orbit at ``param = value``, from ``guess``."""
        last = np.zeros_like(point.u)
        last[-1] = 1.0
        return self.correct(point.u, last, value - point.u[-1], guess, point.u[:self.n],
                            point.flow, point.tangent)

    def rephased(self, point: _Orbit) -> _Orbit:
        """``point`` with its shooting points turned (by whole segments) so that the first
        is where the flow is fastest, if it is slower than half that there. The phase
        condition is a section through ``x_0`` normal to the flow, which degenerates
        where the orbit only grazes it (``x_0`` near a peak the orbit shrinks below)."""
        m, n = self.m, self.n
        f = np.asarray(speeds(self.model, self.param, self.t, jnp.asarray(point.u), m))
        size = np.linalg.norm(f, axis=1)
        i = int(np.argmax(size))
        if not size[0] < 0.5 * size[i]:
            return point

        def turned(v):
            return np.concatenate([np.roll(v[:m * n].reshape(m, n), -i, axis=0).ravel(),
                                   v[m * n:]])

        # the tangent of the new section's curve: shifted along the orbit (by a multiple
        # of the flow at every point) until x_0 moves within the new section
        f = np.roll(f, -i, axis=0)
        tangent = turned(point.tangent)
        shift = np.concatenate([f.ravel(), [0.0, 0.0]])
        tangent = tangent - (f[0] @ tangent[:n]) / (f[0] @ f[0]) * shift
        tangent /= np.sqrt(tangent @ (self.weights * tangent))
        blocks = np.roll(point.blocks, -i, axis=0) if len(point.blocks) == m else point.blocks
        return point._replace(u=turned(point.u), tangent=tangent, blocks=blocks,
                              flow=f[0] / size[i])

    def path(self, point: _Orbit) -> np.ndarray:
        """``point``'s orbit through its shooting points, ``(m k + 1, n)``."""
        return np.asarray(profile(self.model, self.param, self.t, jnp.asarray(point.u),
                                  jnp.asarray(self.mesh)))


def extremes(path) -> tuple[np.ndarray, np.ndarray]:
    """Each state's least and greatest value along a closed path, refined by a parabola
    through the extreme sample and its neighbours."""
    ys = path[:-1]
    out = []
    for pick in (np.argmin, np.argmax):
        i = pick(ys, axis=0)
        cols = np.arange(ys.shape[1])
        y0, y1, y2 = ys[i - 1, cols], ys[i, cols], ys[(i + 1) % len(ys), cols]
        curve = y0 - 2 * y1 + y2
        safe = np.where(curve == 0, 1.0, curve)
        out.append(np.where(curve == 0, y1, y1 - (y2 - y0) ** 2 / (8 * safe)))
    return out[0], out[1]


def _radius(path) -> float:
    """The root-mean-square distance of a closed path from its mean."""
    ys = path[:-1]
    return float(np.sqrt(np.mean(np.sum((ys - ys.mean(axis=0)) ** 2, axis=1))))


def _hopf_end(points, radii) -> float | None:
    """The parameter of the Hopf point the branch is shrinking onto, if it is: the
    orbit has shrunk below 5% of the largest on the branch, is still shrinking and would
    reach a point within about three more steps. From the last three orbits,
    ``p = p_H + c r^2 + d r^4`` (the Hopf normal form) gives ``p_H``."""
    r = radii[-3:]
    if len(radii) < 4 or not (r[2] < r[1] < r[0] and r[2] < 0.05 * max(radii)
                              and r[2] < 3 * (r[1] - r[2])):
        return None
    ps = [point.u[-1] for point in points[-3:]]
    r2 = np.square(r)
    if len(set(r2)) < 3:
        return float(ps[-1])
    return float(np.polyfit(r2, ps, 2)[-1])


def _homoclinic(shooter, points, path, near) -> str | None:
    """The status of a branch whose last orbits converge on a homoclinic orbit
    (``saddles.homoclinic_end``) with twice the least period on the branch."""
    periods = [point.u[-2] for point in points]
    if len(points) < 3 or periods[-1] < 2 * min(periods):
        return None
    return homoclinic_end(shooter.model, shooter.param, [p.u[-1] for p in points[-3:]],
                          periods[-3:], path, shooter.t, near)


def _ended(shooter, points, paths, radii, max_period, lost, watch) -> str | None:
    """Why the branch ends at its last orbit, if it does: a long period, one grown by half
    since the multipliers stopped being trusted (at period ``lost``), an orbit that passes
    close by a saddle with a period grown without bound (if ``watch``; otherwise only
    where the period passed ``max_period``) or one shrinking onto an equilibrium (a Hopf
    point)."""
    u, name = points[-1].u, shooter.param
    where = f"{name}={u[-1]:g}"
    long = u[-2] > max_period or (lost is not None and u[-2] > 1.5 * lost)
    if long or watch:
        status = _homoclinic(shooter, points, paths[-1], 0.1 if long else NEAR)
        if status is not None:
            return status
    if u[-2] > max_period:
        return f"the period passed {max_period:g} at {where} (a homoclinic orbit?)"
    if lost is not None and u[-2] > 1.5 * lost:
        return (f"the period grew by half while the multipliers could not be trusted, at "
                f"{where} (a homoclinic orbit?)")
    hopf = _hopf_end(points, radii)
    if hopf is not None:
        return f"shrank to an equilibrium at {name}={hopf:g} (a Hopf point)"
    return None


_TURN = 0.9  # the least cosine between a step's secant and both ends' tangents


def _accepted(shooter, point, new, ds, first_step) -> _Orbit | None:
    """A corrected step, kept with its tangent oriented along the step's secant, or
    ``None``. The first step from a Hopf point (whose tangent is the linear eigenvector,
    not the branch's) needs an orbit about ``ds`` in size; the others land within
    ``ds / 2`` of the prediction with both ends' tangents within ``arccos(_TURN)`` of the
    secant. Orienting by the secant, not by the last tangent, keeps the direction of
    travel where the branch passes close to another sheet and its tangent swings round
    within a step (an imperfect branch point, as in Hodgkin-Huxley near I = 7.8)."""
    if not new.ok:
        return None
    weights = shooter.weights
    secant = new.u - point.u
    size = np.sqrt(secant @ (weights * secant))
    if not size > 0:
        return None
    turn = new.tangent @ (weights * secant) / size
    new = new._replace(tangent=new.tangent if turn >= 0 else -new.tangent)
    if first_step:
        return new if 0.2 * ds < _radius(shooter.path(new)) < 5 * ds else None
    miss = new.u - (point.u + ds * point.tangent)
    if abs(turn) < _TURN or point.tangent @ (weights * secant) / size < _TURN \
            or np.sqrt(miss @ (weights * miss)) > 0.5 * ds:
        return None
    return new


def _repeats(folds, new, span) -> bool:
    """Whether the fold just passed (at orbit ``new``) is one passed before: the branch
    has come back onto itself."""
    p, period = new.u[-1], new.u[-2]
    return any(abs(p - q) <= 1e-4 * span and abs(period - t) <= 1e-4 * period
               for q, t in folds)


def _trace(shooter, points, paths, bounds, ds, ds_min, ds_max, max_points, max_period,
           first, watch=True):
    """Step along the branch from ``points[-1]`` until the parameter leaves ``bounds``,
    the branch comes back onto itself, or :func:`_ended` says it ends (``watch``: also
    at a homoclinic orbit before the period passes ``max_period``)."""
    lo, hi = bounds
    steps, status, radii = [], "reached max_points", [_radius(path) for path in paths]
    lost = None  # the period where the multipliers stopped being trusted
    folds = []  # (parameter, period) near each fold passed

    def accept(new, step):
        new = shooter.rephased(new)
        path = shooter.path(new)
        points.append(new)
        paths.append(path)
        radii.append(_radius(path))
        steps.append(step)

    while len(points) < max_points:
        point = points[-1]
        new = _accepted(shooter, point, shooter.step(point, ds), ds,
                        first and len(points) == 1)
        if new is not None and shooter.refine(new.error):
            continue  # the same step again on the finer mesh
        if new is None:
            ds /= 2
            if ds < ds_min:
                status = "step size fell below ds_min"
                break
            continue
        p = new.u[-1]
        if not lo <= p <= hi:  # land on the end of the range and stop
            bound = hi if p > hi else lo
            new = shooter.hold(point, bound, point.u + (bound - point.u[-1]) /
                               (p - point.u[-1]) * (new.u - point.u))
            if new.ok:
                accept(new, float((shooter.weights * point.tangent) @ (new.u - point.u)))
            status = f"left the range at {bound:g}"
            break
        accept(new, ds)
        if np.sign(new.tangent[-1]) != np.sign(point.tangent[-1]) and len(points) > 2:
            if _repeats(folds, new, hi - lo):
                status = (f"came back onto itself at the fold of cycles near "
                          f"{shooter.param}={p:g}")
                break
            folds.append((p, new.u[-2]))
        lost = None if np.isfinite(new.multipliers[0]) else lost or new.u[-2]
        status = _ended(shooter, points, paths, radii, max_period, lost, watch)
        if status is not None:
            break
        if new.steps <= 5:  # Newton's last step only confirms
            ds = min(1.5 * ds, ds_max)
    return steps, status or "reached max_points"
