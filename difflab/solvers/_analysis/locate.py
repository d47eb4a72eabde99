"""Fold and Hopf points located again as differentiable functions of the model.

``locate(model, point, param)`` runs Newton (optimistix) on the point's defining system
in ``(x, v, p)`` (a fold: ``F = 0``, ``F_x v = 0``, ``c.v = 1``) or ``(x, v, kappa, p)``
(a Hopf point: ``F = 0``, ``(F_x^2 + kappa I) v = 0``, ``v.v = 1``, ``w.v = 0``,
``kappa = omega^2``), from the point as found by :func:`continuation`. The model is
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
from .sources import model_of

LOCATABLE = ("fold", "hopf")


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


def _start(model, point, param, t):
    """The unknowns at ``point`` and the residual normalised there (gradients stopped)."""
    fixed = jax.lax.stop_gradient(model)
    x = jnp.asarray(point.state, dtype=float)
    p = jnp.asarray(point.value, dtype=float)
    n = x.shape[0]
    a = jax.jacfwd(lambda z: _field(fixed, param, t)(z, p))(x)
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
           max_steps: int = 50):
    """The fold or Hopf ``point`` (a :class:`SpecialPoint` from :func:`continuation` in
    ``param``) of ``model``, found again by Newton on its defining system from where it
    was: a ``SpecialPoint`` whose ``value``, ``state`` (and at a Hopf point
    ``frequency``) are JAX arrays differentiable with respect to the model (by the
    implicit function theorem), e.g.
    ``jax.grad(lambda a: locate(Brusselator(a=a), hopf, "b").value)(1.0)``. ``model`` may
    also be the branch the point is on (e.g. one read back from a session)."""
    model = model_of(model)
    kind = getattr(point, "kind", None)
    if kind not in LOCATABLE:
        raise ValueError(f"locate takes a fold or Hopf SpecialPoint, not {kind or point!r}")
    if param not in model.parameter_specs():
        raise ValueError(f"{type(model).__name__} has no parameter {param!r}")
    y0, residual = _start(model, point, param, jnp.asarray(t, dtype=float))
    solution = optx.root_find(residual, optx.Newton(rtol=tol, atol=tol), y0, args=model,
                              max_steps=max_steps, adjoint=optx.ImplicitAdjoint())
    y, n = solution.value, len(point.state)
    if kind == "fold":
        return SpecialPoint(kind="fold", value=y[-1], state=y[:n])
    return SpecialPoint(kind="hopf", value=y[-1], state=y[:n],
                        frequency=jnp.sqrt(jnp.abs(y[2 * n])))
