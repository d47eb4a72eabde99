"""Special points located again as differentiable functions of the model.

``locate(model, point, param)`` runs Newton (optimistix) on the point's defining system
in ``(x, v, p)`` (a fold: ``F = 0``, ``F_x v = 0``, ``c.v = 1``), ``(x, v, kappa, p)``
(a Hopf point: ``F = 0``, ``(F_x^2 + kappa I) v = 0``, ``v.v = 1``, ``w.v = 0``,
``kappa = omega^2``) or ``(x, p, beta, psi)`` (a branch point: ``F + beta psi = 0``,
``psi^T [F_x F_p] = 0``, ``psi.psi = 1``, ``beta = 0`` at the point), from the point as
found by :func:`continuation`; a cusp or Bogdanov-Takens point of a curve in ``(x, v, p,
q)`` (``_codim_two``), a Bautin point by ``locate_bautin``; points of a branch of cycles by ``locate_cycles``. The model is
Newton's argument and the solve's derivative is the implicit function theorem's
(``optimistix.ImplicitAdjoint``: one linear solve with the system's Jacobian, never
through the iterations), so ``jax.grad``, ``jax.jacfwd`` and ``jax.vmap`` go through it
with respect to any of the model's parameters. The normalising vectors ``c`` and ``w``
come from the starting point with gradients stopped: they choose ``v``, not the point.
"""

import jax
import jax.numpy as jnp
import optimistix as optx

from .continuation import SpecialPoint
from .curves import CodimTwoPoint
from .locate_bautin import bautin_start
from .locate_cycles import CYCLE_CODIM_TWO, CYCLE_LOCATABLE, codim_two_start, cycle_point
from .locate_cycles import cycle_start
from .sources import model_of

CODIM_TWO = ("cusp", "bogdanov-takens", "bautin", *CYCLE_CODIM_TWO)
LOCATABLE = ("fold", "hopf", "branch", *CODIM_TWO, *CYCLE_LOCATABLE)


def _field(model, param, t):
    return lambda x, p: model.replace(**{param: p}).vector_field(t, x)


def _fold(model, param, t, n, c):
    def residual(y, model):
        f = _field(model, param, t)
        x, v, p = y[:n], y[n:2 * n], y[-1]
        fx, av = jax.jvp(lambda z: f(z, p), (x,), (v,))
        return jnp.concatenate([fx, av, (c @ v - 1.0)[None]])
    return residual


def _hopf(model, param, t, n, w):
    def residual(y, model):
        f = _field(model, param, t)
        x, v, kappa, p = y[:n], y[n:2 * n], y[2 * n], y[-1]
        fx, av = jax.jvp(lambda z: f(z, p), (x,), (v,))
        aav = jax.jvp(lambda z: f(z, p), (x,), (av,))[1]
        return jnp.concatenate([fx, aav + kappa * v, jnp.stack([v @ v - 1.0, w @ v])])
    return residual


def _branch(model, param, t, n):
    def residual(y, model):
        f = _field(model, param, t)
        x, p, beta, psi = y[:n], y[n], y[n + 1], y[n + 2:]
        fx, pullback = jax.vjp(f, x, p)
        return jnp.concatenate([fx + beta * psi, *(jnp.atleast_1d(g) for g in pullback(psi)),
                                (psi @ psi - 1.0)[None]])
    return residual


def _codim_two(kind, params, t, n, b, c):
    """``F = 0``, ``F_x v = 0``, ``c.v = 1`` in ``(x, v, p, q)`` and, with ``w`` the left
    null vector of ``F_x`` by bordering (``[[F_x, b], [c^T, 0]]^T [w; h] = e``), at a cusp
    ``w.F_xx(v, v) = 0``, at a Bogdanov-Takens point ``w.v = 0`` (a Jordan block at 0)."""
    def residual(y, model):
        x, v, pq = y[:n], y[n:2 * n], y[2 * n:]
        at = model.replace(**{params[0]: pq[0], params[1]: pq[1]})
        f = lambda z: at.vector_field(t, z)  # noqa: E731
        fx, av = jax.jvp(f, (x,), (v,))
        bordered = jnp.block([[jax.jacfwd(f)(x), b[:, None]], [c[None], jnp.zeros((1, 1))]])
        w = jnp.linalg.solve(bordered.T, jnp.zeros(n + 1).at[-1].set(1.0))[:n]
        if kind == "cusp":
            extra = w @ jax.jvp(lambda z: jax.jvp(f, (z,), (v,))[1], (x,), (v,))[1]
        else:
            extra = w @ v
        return jnp.concatenate([fx, av, jnp.stack([c @ v - 1.0, extra])])
    return residual


def _codim_two_start(model, point, params, t):
    fixed = jax.lax.stop_gradient(model)
    x = jnp.asarray(point.state, dtype=float)
    pq = jnp.asarray(point.values, dtype=float)
    at = fixed.replace(**{params[0]: pq[0], params[1]: pq[1]})
    left, _, right = jnp.linalg.svd(jax.jacfwd(lambda z: at.vector_field(t, z))(x))
    b, c = jax.lax.stop_gradient((left[:, -1], right[-1]))
    y0 = jax.lax.stop_gradient(jnp.concatenate([x, c, pq]))
    return y0, _codim_two(point.kind, params, t, x.shape[0], b, c)


def _start(model, point, param, t):
    """The unknowns at ``point`` and the residual normalised there (gradients stopped)."""
    fixed = jax.lax.stop_gradient(model)
    x = jnp.asarray(point.state, dtype=float)
    p = jnp.asarray(point.value, dtype=float)
    n = x.shape[0]
    a = jax.jacfwd(lambda z: _field(fixed, param, t)(z, p))(x)
    if point.kind == "branch":
        ap = jax.jacfwd(lambda q: _field(fixed, param, t)(x, q))(p)
        psi = jnp.linalg.svd(jnp.concatenate([a, ap[:, None]], axis=1))[0][:, -1]
        y0 = jnp.concatenate([x, p[None], jnp.zeros(1), psi])
        return jax.lax.stop_gradient(y0), _branch(model, param, t, n)
    if point.kind == "fold":
        v = jnp.linalg.svd(a)[2][-1]
        return jnp.concatenate([x, v, p[None]]), _fold(model, param, t, n, v)
    kappa = jnp.asarray(point.frequency, dtype=float) ** 2
    v = jnp.linalg.svd(a @ a + kappa * jnp.eye(n))[2][-1]  # in the eigenplane of +-i w
    av = a @ v
    w = av - (av @ v) * v
    w = w / jnp.linalg.norm(w)
    return jnp.concatenate([x, v, kappa[None], p[None]]), _hopf(model, param, t, n, w)


def locate(model, point, param: str, *, t: float = 0.0, tol: float = 1e-12,
           max_steps: int = 50, segments: int = 16, steps: int = 400):
    """The special ``point`` of ``model`` in ``param``, found again by Newton on its
    defining system from where it was: a fold, Hopf or branch point (a
    :class:`SpecialPoint` of :func:`continuation`) gives a ``SpecialPoint`` whose
    ``value``, ``state`` (and at a Hopf point ``frequency``) are JAX arrays
    differentiable with respect to the model (by the implicit function theorem), e.g.
    ``jax.grad(lambda a: locate(Brusselator(a=a), hopf, "b").value)(1.0)``; a fold of
    cycles, period doubling or branch point of cycles (a :class:`CycleSpecialPoint` of
    :func:`periodic_orbits`) gives a ``CycleSpecialPoint`` whose ``value``, ``period``,
    ``state``, ``minimum`` and ``maximum`` are, its orbit shot on ``segments`` segments
    of ``steps`` RK4 steps per period in all (its ``multipliers`` are not
    differentiated); a cusp, Bogdanov-Takens or Bautin point (a :class:`CodimTwoPoint`
    of a curve of folds or Hopf points in ``param = (p, q)``) gives a ``CodimTwoPoint`` whose
    ``values`` and ``state`` are; so does a cusp of cycles or fold-flip point of a curve
    of cycles (and its ``period``), shot as a fold of cycles is.
    ``model`` may also be the branch or curve the point is on (e.g. one read back from
    a session)."""
    model = model_of(model)
    kind = getattr(point, "kind", None)
    if kind not in LOCATABLE:
        raise ValueError(f"locate takes a fold, Hopf or branch point, a cusp, "
                         f"Bogdanov-Takens or Bautin point, a fold of cycles, a period "
                         f"doubling, a branch point of cycles, a cusp of cycles or a "
                         f"fold-flip point, not "
                         f"{kind or type(point).__name__!r}")
    params = (param,) if isinstance(param, str) else tuple(param)
    for name in params:
        if name not in model.parameter_specs():
            raise ValueError(f"{type(model).__name__} has no parameter {name!r}")
    wanted = "two parameters (p, q)" if kind in CODIM_TWO else "one parameter"
    if len(params) != (2 if kind in CODIM_TWO else 1):
        raise ValueError(f"a {kind} point is located in {wanted}, got {param!r}")
    param = params[0]
    t = jnp.asarray(t, dtype=float)
    if kind == "bautin":
        y0, residual = bautin_start(model, point, params, t)
    elif kind in CYCLE_CODIM_TWO:
        y0, residual, mesh = codim_two_start(model, point, params, t, int(segments),
                                             int(steps))
    elif kind in CODIM_TWO:
        y0, residual = _codim_two_start(model, point, params, t)
    elif kind in CYCLE_LOCATABLE:
        y0, residual, mesh = cycle_start(model, point, param, t, int(segments), int(steps))
    else:
        y0, residual = _start(model, point, param, t)
    solution = optx.root_find(residual, optx.Newton(rtol=tol, atol=tol), y0, args=model,
                              max_steps=max_steps, adjoint=optx.ImplicitAdjoint())
    y, n = solution.value, len(point.state)
    if kind in CYCLE_CODIM_TWO:
        return CodimTwoPoint(kind=kind, values=y[-2:], state=y[:n], period=y[-3])
    if kind in CODIM_TWO:
        return CodimTwoPoint(kind=kind, values=y[-2:], state=y[:n])
    if kind in CYCLE_LOCATABLE:
        return cycle_point(model, point, param, t, y, mesh)
    if kind == "branch":
        return SpecialPoint(kind="branch", value=y[n], state=y[:n], tangent=point.tangent)
    if kind == "fold":
        return SpecialPoint(kind="fold", value=y[-1], state=y[:n])
    return SpecialPoint(kind="hopf", value=y[-1], state=y[:n],
                        frequency=jnp.sqrt(jnp.abs(y[2 * n])))
