"""Folds of cycles, period doublings and branch points of cycles located again as
differentiable functions of the model.

The orbit is ``m`` shooting points on a uniform mesh of RK4 steps (as ``shooting.py``),
``u = [x_0 .. x_{m-1}, T, p]``, and ``G(u)`` its shooting conditions
``phi(x_i) - x_{i+1} = 0`` with a Poincare phase condition through the starting orbit.
The defining systems, square in their unknowns (Kuznetsov, *Elements of Applied
Bifurcation Theory*, 10.3; Govaerts, *Numerical Methods for Bifurcations of Dynamical
Equilibria*, 4.2):

- fold of cycles: ``G = 0`` and ``g = 0``, the border of ``[[A, b], [c^T, 0]]`` with
  ``A = G_{x,T}``, singular where the branch turns;
- period doubling: the same with ``A`` the anti-cyclic matrix of the segments' Jacobians,
  singular where a multiplier is -1;
- branch point of cycles, in ``(u, beta, psi)``: ``G + beta psi = 0``, ``psi^T G_u = 0``,
  ``psi.psi = 1``: ``G_u`` has a left null vector, and ``beta`` (0 at the point)
  unfolds it so the system stays square and regular.

``b``, ``c``, the phase condition's normal and ``psi``'s start come from the starting
orbit with gradients stopped: they choose the equations, not the point.
"""

from functools import reduce

import jax
import jax.numpy as jnp

from .cycle_system import _antiperiodic, _bordered
from .periodic import CycleSpecialPoint
from .shooting import _blocks, _field, _jacobian, _segment, orbit_path

CYCLE_LOCATABLE = ("fold-of-cycles", "period-doubling", "branch-point-of-cycles")
CYCLE_CODIM_TWO = ("cusp-of-cycles", "fold-flip")


def _mesh(segments, steps):
    k = max(1, round(steps / segments))
    return jnp.full((segments, k), 1.0 / (segments * k))


def _conditions(model, param, t, mesh, ref, d):
    """``u -> (G(u), segment Jacobians in x and T)``."""
    f = _field(model, param, t)

    def conditions(u):
        xs, ends, a, b, c = _blocks(f, u, mesh)
        g = jnp.concatenate([(ends - jnp.roll(xs, -1, axis=0)).ravel(),
                             ((xs[0] - ref) @ d)[None]])
        return g, (a, b, c)

    return conditions


def _matrix(kind, a, b, c, d):
    if kind == "period-doubling":
        return _antiperiodic(a)
    return _jacobian(a, b, c, d)[:, :-1]


def _start(model, point, param, t, mesh):
    """The orbit ``u`` through the point on ``mesh``, the phase condition's normal and
    the borders of the defining system, all from the model with gradients stopped."""
    fixed = jax.lax.stop_gradient(model)
    x = jnp.asarray(point.state, dtype=float)
    period = jnp.asarray(point.period, dtype=float)
    value = jnp.asarray(point.value, dtype=float)
    path = orbit_path(fixed, param, t, x, period, value, mesh.ravel())
    u = jnp.concatenate([path[:-1:mesh.shape[1]].ravel(), period[None], value[None]])
    d = _field(fixed, param, t)(x, value)
    d = d / jnp.linalg.norm(d)
    g, (a, b, c) = _conditions(fixed, param, t, mesh, x, d)(u)
    if point.kind == "branch-point-of-cycles":
        jac = _jacobian(a, b, c, d)
        psi = jnp.linalg.svd(jac)[0][:, -1]
        return jax.lax.stop_gradient(jnp.concatenate([u, jnp.zeros(1), psi])), x, d, None
    left, _, right = jnp.linalg.svd(_matrix(point.kind, a, b, c, d))
    borders = jax.lax.stop_gradient((left[:, -1], right[-1]))
    return jax.lax.stop_gradient(u), x, d, borders


def cycle_residual(kind, param, t, mesh, ref, d, borders):
    """``(y, model) -> residual`` of the ``kind`` point's defining system."""
    size = mesh.shape[0] * ref.shape[0] + 2

    def residual(y, model):
        conditions = _conditions(model, param, t, mesh, ref, d)
        if kind == "branch-point-of-cycles":
            u, beta, psi = y[:size], y[size], y[size + 1:]
            g, pullback, _ = jax.vjp(conditions, u, has_aux=True)
            return jnp.concatenate([g + beta * psi, pullback(psi)[0],
                                    (psi @ psi - 1.0)[None]])
        g, (a, b, c) = conditions(y)
        extra = _bordered(_matrix(kind, a, b, c, d), *borders)
        return jnp.concatenate([g, extra[None]])

    return residual


def cycle_start(model, point, param, t, segments, steps):
    """The unknowns at ``point`` and its defining system's residual."""
    mesh = _mesh(segments, steps)
    y0, ref, d, borders = _start(model, point, param, t, mesh)
    return y0, cycle_residual(point.kind, param, t, mesh, ref, d, borders), mesh


def _shooting(model, param, t, mesh, ref, d):
    """``u -> G(u)`` alone (no Jacobians), for its second derivative."""
    f = _field(model, param, t)

    def g(u):
        xs, period, p = u[:-2].reshape(mesh.shape[0], -1), u[-2], u[-1]
        ends = jax.vmap(lambda x, hs: _segment(f, x, period, p, hs)[0])(xs, mesh)
        return jnp.concatenate([(ends - jnp.roll(xs, -1, axis=0)).ravel(),
                                ((xs[0] - ref) @ d)[None]])

    return g


def _null_vectors(matrix, border, normal):
    """The right and left null vectors of ``matrix`` by bordering."""
    k = matrix.shape[0]
    full = jnp.block([[matrix, border[:, None]], [normal[None], jnp.zeros((1, 1))]])
    e = jnp.zeros(k + 1).at[-1].set(1.0)
    return jnp.linalg.solve(full, e)[:k], jnp.linalg.solve(full.T, e)[:k]


def codim_two_residual(kind, params, t, mesh, ref, d, borders):
    """``(y, model) -> residual`` in ``y = [x_0 .. x_{m-1}, T, p, q]``: the shooting
    conditions, the fold-of-cycles border and, at a fold-flip, the period-doubling
    border, at a cusp of cycles the fold's quadratic coefficient ``w.G_uu(v, v)``."""
    def residual(y, model):
        at = model.replace(**{params[1]: y[-1]})
        u = y[:-1]
        g, (a, b, c) = _conditions(at, params[0], t, mesh, ref, d)(u)
        fold = _matrix("fold-of-cycles", a, b, c, d)
        if kind == "fold-flip":
            extra = _bordered(_antiperiodic(a), *borders[1])
        else:
            v, w = _null_vectors(fold, *borders[0])
            v = jnp.append(v, 0.0)
            shoot = _shooting(at, params[0], t, mesh, ref, d)
            extra = w @ jax.jvp(lambda z: jax.jvp(shoot, (z,), (v,))[1], (u,), (v,))[1]
        return jnp.concatenate([g, jnp.stack([_bordered(fold, *borders[0]), extra])])

    return residual


def codim_two_start(model, point, params, t, segments, steps):
    """The unknowns at a cusp of cycles or fold-flip ``point`` (a ``CodimTwoPoint`` of a
    curve of cycles, with its period) and the residual, from the model with gradients
    stopped."""
    if point.period is None:
        raise ValueError(f"this {point.kind} point has no period (a file written before "
                         f"it was kept): find it again with periodic_orbits")
    mesh = _mesh(segments, steps)
    fixed = jax.lax.stop_gradient(model).replace(**{params[1]: point.values[1]})
    x = jnp.asarray(point.state, dtype=float)
    period = jnp.asarray(point.period, dtype=float)
    value = jnp.asarray(point.values[0], dtype=float)
    path = orbit_path(fixed, params[0], t, x, period, value, mesh.ravel())
    u = jnp.concatenate([path[:-1:mesh.shape[1]].ravel(), period[None], value[None]])
    d = _field(fixed, params[0], t)(x, value)
    d = d / jnp.linalg.norm(d)
    _, (a, b, c) = _conditions(fixed, params[0], t, mesh, x, d)(u)
    borders = []
    for matrix in (_matrix("fold-of-cycles", a, b, c, d), _antiperiodic(a)):
        left, _, right = jnp.linalg.svd(matrix)
        borders.append((left[:, -1], right[-1]))
    y0 = jnp.append(u, jnp.asarray(point.values[1], dtype=float))
    borders, y0 = jax.lax.stop_gradient((borders, y0))
    return y0, codim_two_residual(point.kind, params, t, mesh, x, d, borders), mesh


def cycle_point(model, point, param, t, y, mesh):
    """The located ``CycleSpecialPoint`` from the solution ``y`` on ``mesh``: the orbit's
    extremes from its path; its multipliers (not differentiated) from the monodromy."""
    m, n = mesh.shape[0], len(point.state)
    u = y[:m * n + 2]
    f = _field(model, param, t)
    _, _, a, _, _ = _blocks(f, jax.lax.stop_gradient(u), mesh)
    monodromy = reduce(lambda product, block: block @ product, list(a))
    multipliers = jax.lax.stop_gradient(jnp.linalg.eigvals(monodromy))
    path = orbit_path(model, param, t, u[:n], u[-2], u[-1], mesh.ravel())
    return CycleSpecialPoint(kind=point.kind, value=u[-1], period=u[-2], state=u[:n],
                             minimum=path.min(axis=0), maximum=path.max(axis=0),
                             multipliers=multipliers, tangent=point.tangent)
