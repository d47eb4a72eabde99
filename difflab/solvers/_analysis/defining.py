"""The defining systems of fold and Hopf curves in two parameters, differentiated by JAX.

The unknowns are ``u = [x, v, p, q]`` for a fold and ``u = [x, v, kappa, p, q]`` for a
Hopf point (``n`` states, a vector ``v``, ``kappa = omega^2``, the two parameters last),
one more than the equations (Kuznetsov, *Elements of Applied Bifurcation Theory*, 10.2):

    fold:  F(x, p, q) = 0,  F_x v = 0,  c.v = 1,  with c = v0 / |v0|^2
    Hopf:  F(x, p, q) = 0,  (F_x^2 + kappa I) v = 0,  v.v = 1,  w.v = 0,

with ``v0`` the ``v`` of the step's start and ``w`` the unit part of ``F_x v0`` normal to
``v0``, so the start solves the system it is corrected with and ``v`` turns continuously
along the curve. The Hopf system stays regular where ``kappa`` passes through zero (a
Bogdanov-Takens point); beyond it, ``kappa < 0``, it describes neutral saddles.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optimistix as optx

from .equilibria import jacobian


class CurveSystem(eqx.Module):
    """The defining system of a ``kind`` (``"fold"`` or ``"hopf"``) curve of ``model``
    in the parameters ``params`` at time ``t``."""

    model: object
    params: tuple[str, str] = eqx.field(static=True)
    t: jax.Array
    kind: str = eqx.field(static=True)
    n: int = eqx.field(static=True)

    def field(self, u):
        """``x -> F(x)`` at the parameters of ``u``."""
        model = self.model.replace(**{self.params[0]: u[-2], self.params[1]: u[-1]})
        return lambda x: model.vector_field(self.t, x)

    def residual(self, u0):
        """``u -> G(u)``, normalised at the step's start ``u0``."""
        n, v0 = self.n, u0[self.n:2 * self.n]
        if self.kind == "fold":
            c = v0 / (v0 @ v0)
            return lambda u: jnp.concatenate([*self._fx_av(u), (c @ u[n:2 * n] - 1)[None]])
        av0 = jax.jvp(self.field(u0), (u0[:n],), (v0,))[1]
        w = av0 - (av0 @ v0) * v0
        w = w / jnp.linalg.norm(w)

        def hopf(u):
            fx, av = self._fx_av(u)
            v, kappa = u[n:2 * n], u[2 * n]
            aav = jax.jvp(self.field(u), (u[:n],), (av,))[1]
            return jnp.concatenate([fx, aav + kappa * v, jnp.stack([v @ v - 1, w @ v])])

        return hopf

    def _fx_av(self, u):
        return jax.jvp(self.field(u), (u[:self.n],), (u[self.n:2 * self.n],))

    def second_derivative(self, u):
        """``F_xx(v, v)`` at ``u``."""
        f, x, v = self.field(u), u[:self.n], u[self.n:2 * self.n]
        return jax.jvp(lambda y: jax.jvp(f, (y,), (v,))[1], (x,), (v,))[1]


@eqx.filter_jit
def _correct(system, y0, c, ds, guess, v, tol, max_steps):
    """Newton on ``[G(y); c.(y - y0) - ds]`` from ``guess``; the tangent there (oriented
    along ``v``), ``F_xx(v, v)`` and the state Jacobian."""
    g = system.residual(y0)
    residual = lambda y, args: jnp.concatenate([g(y), (c @ (y - y0) - ds)[None]])
    sol = optx.root_find(residual, optx.Newton(rtol=tol, atol=tol), guess,
                         throw=False, max_steps=max_steps)
    y = sol.value
    last = jnp.zeros_like(y).at[-1].set(1.0)
    w = jnp.linalg.solve(jnp.concatenate([jax.jacfwd(g)(y), v[None]]), last)
    w = w / jnp.linalg.norm(w)
    ok = (sol.result == optx.RESULTS.successful) & jnp.all(jnp.isfinite(y)) \
        & jnp.all(jnp.isfinite(w))
    jx = jax.jacfwd(system.field(y))(y[:system.n])
    return y, w, ok, sol.stats["num_steps"], system.second_derivative(y), jx


@eqx.filter_jit
def _system_jacobian(system, y):
    return jax.jacfwd(system.residual(y))(y)


class CurveTracer:
    """The corrector of one curve system with its tolerances bound (see ``arclength``)."""

    def __init__(self, system, tol, max_steps):
        self.system, self.tol, self.max_steps = system, tol, max_steps

    def arclength(self, y0, v, ds):
        return self.correct(y0, v, ds, y0 + ds * v, v)

    def correct(self, y0, c, ds, guess, v):
        out = _correct(self.system, jnp.asarray(y0), jnp.asarray(c), jnp.asarray(ds, float),
                       jnp.asarray(guess), jnp.asarray(v), self.tol, self.max_steps)
        y, w, ok, steps, bvv, jx = jax.device_get(out)
        return y, w, bool(ok), int(steps), bvv, jx

    def kernel(self, y) -> np.ndarray:
        """The unit null vector of ``G_u`` at ``y``: the curve's tangent up to sign."""
        return np.linalg.svd(np.asarray(_system_jacobian(self.system, jnp.asarray(y))))[2][-1]


def start_unknowns(system, state, p, q) -> np.ndarray:
    """``u`` at a fold or Hopf point ``state`` of ``model`` at ``(p, q)``: ``v`` the
    unit null vector of ``F_x``, or a unit vector of the eigenplane of ``+-i omega``."""
    model = system.model.replace(**{system.params[0]: p, system.params[1]: q})
    a = np.asarray(jacobian(model, jnp.asarray(state), system.t), dtype=float)
    if system.kind == "fold":
        return np.concatenate([state, np.linalg.svd(a)[2][-1], [p, q]])
    values, vectors = np.linalg.eig(a)
    if not np.any(values.imag > 0):
        raise ValueError("from_point has no pair of complex eigenvalues: not a Hopf point")
    i = int(np.argmin(np.abs(values.real) + np.where(values.imag > 0, 0, np.inf)))
    parts = (vectors[:, i].real, vectors[:, i].imag)
    v = max(parts, key=np.linalg.norm)
    return np.concatenate([state, v / np.linalg.norm(v), [values[i].imag ** 2, p, q]])


def adjugate(a) -> np.ndarray:
    """The adjugate of a square matrix by its SVD, well defined where it is singular."""
    u, s, vt = np.linalg.svd(a)
    others = np.array([np.prod(np.delete(s, i)) for i in range(len(s))])
    return np.linalg.det(u) * np.linalg.det(vt) * (vt.T * others) @ u.T
