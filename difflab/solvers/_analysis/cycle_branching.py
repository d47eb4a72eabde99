"""Branch points of cycles: where they are on a branch, and the first orbit of the other
branch through one.

At a branch point of cycles a second Floquet multiplier is 1 (besides the trivial one)
and the branch is not at a fold: the shooting system's Jacobian ``J = G_u`` (rows: the
segments' matching and the phase condition) loses rank with two branches through the
point, as at a symmetry-breaking pitchfork of cycles. The test function is
``sign(t_p) sign(prod (mu - 1))`` over the non-trivial multipliers: the determinant of
``J`` bordered by the branch's tangent ``t`` has this sign (``det [J; t^T] = det(G_{x,T})
|t|^2 / t_p`` and ``det G_{x,T}`` has the sign of ``prod (mu - 1)``). At a fold both
factors change sign together, so the test stays put there and only a branch point
changes it: one point never fires as both.

The other branch starts along ``psi``, the vector of ``J``'s two-dimensional kernel
orthogonal to the first branch's tangent (kept by the special point as its components in
``(x_0, T, p)``); the hyperplane normal to ``psi`` a step away cuts the other branch,
not the first one, as at branch points of equilibria.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .cycle_steps import _Orbit
from .shooting import _blocks, _field, _jacobian, orbit_path

KIND = "branch-point-of-cycles"


def branching(point) -> float | None:
    """``sign(t_p) sign(prod (mu - 1))`` over the non-trivial multipliers of ``point``
    (an ``_Orbit``); ``None`` where the multipliers cannot be trusted."""
    mu = point.multipliers
    if not np.all(np.isfinite(mu)):
        return None
    others = np.delete(mu, np.argmin(np.abs(mu - 1.0))) - 1.0
    sign = np.sign(np.real(np.prod(others / np.maximum(np.abs(others), 1e-300))))
    return float(sign * np.sign(point.tangent[-1]))


def reduced(tangent, n: int) -> np.ndarray:
    """A branch's tangent in ``(x_0, T, p)``: what a special point keeps of it."""
    return np.concatenate([tangent[:n], tangent[-2:]])


@eqx.filter_jit
def _jacobian_at(model, param, t, u, direction, mesh):
    """``J`` at ``u`` (phase condition normal to ``direction``) and the segments' state
    Jacobians."""
    _, _, a, b, c = _blocks(_field(model, param, t), u, mesh)
    return _jacobian(a, b, c, direction), a


def branch_seed(shooter, point, direction: int) -> _Orbit:
    """The orbit at the branch point ``point`` (a ``CycleSpecialPoint`` with its branch's
    ``tangent``) on ``shooter``'s mesh, with the other branch's tangent ``psi`` (turned
    by ``direction``)."""
    if point.tangent is None:
        raise ValueError("this branch point of cycles has no tangent of its branch (a file "
                         "written before they were kept): find it again with periodic_orbits")
    n, k = shooter.n, shooter.k
    x, period, value = np.asarray(point.state, float), float(point.period), float(point.value)
    path = np.asarray(orbit_path(shooter.model, shooter.param, shooter.t, jnp.asarray(x),
                                 period, value, jnp.asarray(shooter.mesh.ravel())))
    u = np.concatenate([path[:-1:k].ravel(), [period, value]])
    flow = np.array(shooter.model.replace(**{shooter.param: value})
                    .vector_field(shooter.t, jnp.asarray(x)), float)
    flow /= np.linalg.norm(flow)
    jac, blocks = jax.device_get(_jacobian_at(shooter.model, shooter.param, shooter.t,
                                              jnp.asarray(u), jnp.asarray(flow),
                                              jnp.asarray(shooter.mesh)))
    kernel = np.linalg.svd(jac)[2][-2:].T  # (m n + 2, 2)
    old = kernel @ np.linalg.lstsq(reduced(kernel, n), np.asarray(point.tangent, float),
                                   rcond=None)[0]
    g = kernel.T @ (shooter.weights * old)
    psi = kernel @ np.array([-g[1], g[0]])
    psi *= direction / np.sqrt(psi @ (shooter.weights * psi))
    return _Orbit(u, psi, True, 0, blocks, flow)
