"""The defining systems of curves of cycles in two parameters, compiled.

A point is an orbit by multiple shooting as in ``shooting.py`` (``m`` segments of RK4
steps with traced sizes, the period scaled out) with both parameters free: the unknowns
are ``y = [x_0 .. x_{m-1}, T, p, q]``; the equations are the shooting conditions
``phi(x_i) - x_{i+1} = 0``, a Poincare phase condition through the step's start, and one
more (MatCont's minimally augmented systems; Kuznetsov, *Elements of Applied Bifurcation
Theory*, 10.3):

- ``fold-of-cycles``: ``g = 0``, the border of ``[[A, b], [c^T, 0]] [v; g] = [0; 1]``,
  ``A`` the Jacobian of the shooting and phase conditions in ``(x, T)``, singular where
  the branch in ``p`` turns;
- ``period-doubling``: the same with ``A`` the anti-cyclic matrix of the segments'
  Jacobians (``A_i v_i = v_{i+1}``, ``v_m = -v_0``), singular where a multiplier is -1;
- ``homoclinic``: ``T = T_0``, a large period held (AUTO's and MatCont's large-period
  approximation: the orbit lingers by the saddle, ``p`` within ``exp(-lambda T_0)`` of
  the homoclinic orbit's).

``b`` and ``c`` are the singular vectors of ``A``'s least singular value at the step's
start, so ``g`` is regular along the curve. The unknowns are scaled, ``z = s y`` with
``s^2`` the branch's weights (each orbit counts as one state, the period relative to
the first), so that the arclength engine's plain norm is the branch's.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optimistix as optx
from jax.scipy.linalg import block_diag

from .shooting import _jacobian, _segment

CURVE_KINDS = ("fold-of-cycles", "period-doubling", "homoclinic")


def _bordered(matrix, b, c):
    """``g`` of ``[[matrix, b], [c^T, 0]] [v; g] = [0; 1]``."""
    k = matrix.shape[0]
    full = jnp.concatenate([jnp.concatenate([matrix, b[:, None]], axis=1),
                            jnp.concatenate([c, jnp.zeros(1)])[None]])
    return jnp.linalg.solve(full, jnp.zeros(k + 1).at[-1].set(1.0))[-1]


def _antiperiodic(a):
    """``A_i v_i - v_{i+1}`` with ``v_m = -v_0``, as a matrix (m n, m n)."""
    m, n = a.shape[:2]
    turn = jnp.roll(jnp.eye(m), 1, axis=1).at[m - 1, 0].multiply(-1.0)
    return block_diag(*a) - jnp.kron(turn, jnp.eye(n))


class CycleSystem(eqx.Module):
    """The defining system of a ``kind`` curve of cycles of ``model`` in ``params``."""

    model: object
    params: tuple[str, str] = eqx.field(static=True)
    t: jax.Array
    kind: str = eqx.field(static=True)
    n: int = eqx.field(static=True)
    mesh: jax.Array  # (m, k) RK4 step sizes, summing to one
    scale: jax.Array  # z = scale * y
    period: jax.Array  # the period held on a homoclinic curve

    def split(self, y):
        """``(x_i (m, n), T, [p, q])``."""
        m, n = self.mesh.shape[0], self.n
        return y[:m * n].reshape(m, n), y[m * n], y[m * n + 1:]

    def field(self, pq):
        model = self.model.replace(**{self.params[0]: pq[0], self.params[1]: pq[1]})
        return lambda x: model.vector_field(self.t, x)

    def _end(self, pq):
        f = lambda x, pq: self.field(pq)(x)  # noqa: E731
        return lambda x, period, hs: _segment(f, x, period, pq, hs)[0]

    def ends(self, y):
        """Each segment's end (m, n)."""
        xs, period, pq = self.split(y)
        return jax.vmap(self._end(pq), (0, None, 0))(xs, period, self.mesh)

    def flows(self, y):
        """Each segment's end, its Jacobian in ``x`` (m, n, n) and in ``T`` (m, n)."""
        xs, period, pq = self.split(y)
        end = self._end(pq)
        jac = jax.jacfwd(lambda x, period, hs: (end(x, period, hs),) * 2, argnums=(0, 1),
                         has_aux=True)
        (a, b), ends = jax.vmap(jac, (0, None, 0))(xs, period, self.mesh)
        return ends, a, b

    def _matrix(self, a, b, d):
        if self.kind == "period-doubling":
            return _antiperiodic(a)
        return _jacobian(a, b, jnp.zeros_like(b), d)[:, :-1]

    def residual(self, z0):
        """``z -> G(z)`` with the phase condition and borders taken at ``z0``."""
        xs0, _, pq0 = self.split(z0 / self.scale)
        d = self.field(pq0)(xs0[0])
        d = d / jnp.linalg.norm(d)
        if self.kind != "homoclinic":
            _, a0, b0 = self.flows(z0 / self.scale)
            u, _, vt = jnp.linalg.svd(self._matrix(a0, b0, d))
            border, normal = u[:, -1], vt[-1]

        def g(z):
            y = z / self.scale
            xs, period, _ = self.split(y)
            if self.kind == "homoclinic":
                ends, extra = self.ends(y), (period - self.period) / self.period
            else:
                ends, a, b = self.flows(y)
                extra = _bordered(self._matrix(a, b, d), border, normal)
            return jnp.concatenate([(ends - jnp.roll(xs, -1, axis=0)).ravel(),
                                    ((xs[0] - xs0[0]) @ d)[None], extra[None]])

        return g


@eqx.filter_jit
def _correct(system, z0, c, ds, guess, v, tol, max_steps):
    """Newton on ``[G(z); c.(z - z0) - ds]`` from ``guess``; the tangent there (oriented
    along ``v``) and the segments' Jacobians."""
    g = system.residual(z0)
    residual = lambda z, args: jnp.concatenate([g(z), (c @ (z - z0) - ds)[None]])  # noqa: E731
    sol = optx.root_find(residual, optx.Newton(rtol=tol, atol=tol), guess,
                         throw=False, max_steps=max_steps)
    z = sol.value
    last = jnp.zeros_like(z).at[-1].set(1.0)
    w = jnp.linalg.solve(jnp.concatenate([jax.jacfwd(g)(z), v[None]]), last)
    w = w / jnp.linalg.norm(w)
    ok = (sol.result == optx.RESULTS.successful) & jnp.all(jnp.isfinite(z)) \
        & jnp.all(jnp.isfinite(w))
    return z, w, ok, sol.stats["num_steps"], system.flows(z / system.scale)[1]


@eqx.filter_jit
def _fine_residual(system, z):
    """``G(z)`` on the mesh of half steps, its phase condition and borders taken at ``z``."""
    fine = eqx.tree_at(lambda s: s.mesh, system, jnp.repeat(system.mesh / 2, 2, axis=1))
    return fine.residual(z)(z)


def period_error(system, z) -> float:
    """The relative error of the period at ``z`` on a fold-of-cycles or period-doubling
    curve, by Richardson: one Newton step (this mesh's Jacobian, ``q`` held) towards the
    curve on the mesh of half steps moves the period by ``dT``; RK4's error being
    ``O(h^4)``, this mesh's error is ``16/15 dT``."""
    z = jnp.asarray(z)
    last = np.zeros(len(z))
    last[-1] = 1.0
    held = np.vstack([np.asarray(_system_jacobian(system, z)), last])
    dz = np.linalg.solve(held, np.append(np.asarray(_fine_residual(system, z)), 0.0))
    i = system.mesh.shape[0] * system.n
    return float(abs(dz[i] / z[i]) * (16.0 / 15.0))


@eqx.filter_jit
def cusp_test(system, z):
    """``(w.G_uu(v, v)) (w.G_p)`` at the point ``z`` of a fold-of-cycles curve, ``G``
    the shooting and phase conditions in ``u = (x, T)`` at fixed ``(p, q)``, ``v`` and
    ``w`` the right and left null vectors of ``G_u``: the fold's quadratic coefficient
    (its sign kept by the transversal ``w.G_p``), zero at a cusp of cycles."""
    y = z / system.scale
    xs0, _, pq = system.split(y)
    d = system.field(pq)(xs0[0])
    d = d / jnp.linalg.norm(d)

    def g(u):
        full = jnp.concatenate([u, pq[1:]])
        xs = system.split(full)[0]
        return jnp.concatenate([(system.ends(full) - jnp.roll(xs, -1, axis=0)).ravel(),
                                ((xs[0] - xs0[0]) @ d)[None]])

    u = y[:-1]
    jac = jax.jacfwd(g)(u)
    left, _, right = jnp.linalg.svd(jac[:, :-1])
    v, w = jnp.append(right[-1], 0.0), left[:, -1]
    second = jax.jvp(lambda s: jax.jvp(g, (s,), (v,))[1], (u,), (v,))[1]
    return (w @ second) * (w @ jac[:, -1])


@eqx.filter_jit
def _system_jacobian(system, z):
    return jax.jacfwd(system.residual(z))(z)


class CycleTracer:
    """The corrector of one cycle system with its tolerances bound (see ``arclength``):
    a point is ``(z, tangent, ok, newton steps, segment Jacobians)``."""

    def __init__(self, system, tol, max_steps):
        self.system, self.tol, self.max_steps = system, tol, max_steps

    def arclength(self, z0, v, ds):
        return self.correct(z0, v, ds, z0 + ds * v, v)

    def correct(self, z0, c, ds, guess, v):
        out = _correct(self.system, jnp.asarray(z0), jnp.asarray(c), jnp.asarray(ds, float),
                       jnp.asarray(guess), jnp.asarray(v), self.tol, self.max_steps)
        z, w, ok, steps, blocks = jax.device_get(out)
        return z, w, bool(ok), int(steps), blocks

    def kernel(self, z) -> np.ndarray:
        """The unit null vector of ``G_z`` at ``z``: the curve's tangent up to sign."""
        return np.linalg.svd(np.asarray(_system_jacobian(self.system, jnp.asarray(z))))[2][-1]
