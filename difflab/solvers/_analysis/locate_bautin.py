"""Bautin points located again as differentiable functions of the model.

The unknowns are a Hopf point's ``(x, v, kappa)`` (see ``locate``) with both parameters,
``(x, v, kappa, p, q)``; the equations are the Hopf point's and ``l1 = 0``, the first
Lyapunov coefficient in traced form (Kuznetsov, *Elements of Applied Bifurcation
Theory*, eq. 3.20): ``q = A v + i omega v`` is an eigenvector of ``A = F_x`` for
``i omega`` where ``(A^2 + omega^2) v = 0``, and the adjoint ``p`` (``A^T p = -i omega p``)
comes from a bordered solve whose borders are fixed at the start. Scaling ``q`` by a
positive number scales ``l1`` by a positive number, so ``l1 = 0`` does not depend on it.
"""

import itertools

import jax
import jax.numpy as jnp


def _form(f, x, vectors):
    """The symmetric multilinear derivative of ``f`` at ``x`` on complex ``vectors``."""
    total = 0j
    for parts in itertools.product((0, 1), repeat=len(vectors)):
        g = f
        for vector, part in zip(vectors, parts):
            direction = vector.imag if part else vector.real
            g = (lambda h, u: lambda y: jax.jvp(h, (y,), (u,))[1])(g, direction)
        total = total + (1j ** sum(parts)) * g(x)
    return total


def lyapunov_coefficient(f, x, v, omega, b, c):
    """A positive multiple of the first Lyapunov coefficient of ``f`` at the Hopf point
    ``x`` with ``(F_x^2 + omega^2) v = 0``; ``b``, ``c`` (complex) border the adjoint's
    system ``[[A^T + i omega, b], [c^H, 0]] [p; h] = [0; 1]``."""
    n = x.shape[0]
    a = jax.jacfwd(f)(x)
    q = a @ v + 1j * omega * v
    bordered = jnp.block([[a.T + 1j * omega * jnp.eye(n), b[:, None]],
                          [jnp.conj(c)[None], jnp.zeros((1, 1))]])
    p = jnp.linalg.solve(bordered, jnp.zeros(n + 1, complex).at[-1].set(1.0))[:n]
    p = p / jnp.conj(jnp.vdot(p, q))
    qb = jnp.conj(q)
    bqq = _form(f, x, [q, q])
    bqqb = _form(f, x, [q, qb]).real
    term = (_form(f, x, [q, q, qb]) - 2 * _form(f, x, [q, jnp.linalg.solve(a, bqqb)])
            + _form(f, x, [qb, jnp.linalg.solve(2j * omega * jnp.eye(n) - a, bqq)]))
    return jnp.vdot(p, term).real / (2 * omega)


def bautin(params, t, n, w, b, c):
    """``(y, model) -> residual`` in ``y = (x, v, kappa, p, q)``: the Hopf point's
    equations (``w`` normalising ``v``) and ``l1 = 0``."""
    def residual(y, model):
        x, v, kappa, pq = y[:n], y[n:2 * n], y[2 * n], y[2 * n + 1:]
        at = model.replace(**{params[0]: pq[0], params[1]: pq[1]})
        f = lambda z: at.vector_field(t, z)  # noqa: E731
        fx, av = jax.jvp(f, (x,), (v,))
        aav = jax.jvp(f, (x,), (av,))[1]
        l1 = lyapunov_coefficient(f, x, v, jnp.sqrt(kappa), b, c)
        return jnp.concatenate([fx, aav + kappa * v, jnp.stack([v @ v - 1.0, w @ v, l1])])
    return residual


def bautin_start(model, point, params, t):
    """The unknowns at the Bautin ``point`` (a ``CodimTwoPoint``) and the residual, its
    normalising and bordering vectors from the point with gradients stopped."""
    fixed = jax.lax.stop_gradient(model)
    x = jnp.asarray(point.state, dtype=float)
    pq = jnp.asarray(point.values, dtype=float)
    at = fixed.replace(**{params[0]: pq[0], params[1]: pq[1]})
    a = jax.jacfwd(lambda z: at.vector_field(t, z))(x)
    values, vectors = jnp.linalg.eig(a)
    i = jnp.argmin(jnp.abs(values.real) + jnp.where(values.imag > 0, 0.0, jnp.inf))
    omega, q = values[i].imag, vectors[:, i]
    v = jnp.where(jnp.linalg.norm(q.real) >= jnp.linalg.norm(q.imag), q.real, q.imag)
    v = v / jnp.linalg.norm(v)
    av = a @ v
    w = av - (av @ v) * v
    w = w / jnp.linalg.norm(w)
    left = jnp.linalg.eig(a.T)[1][:, jnp.argmin(jnp.abs(jnp.linalg.eigvals(a.T) + 1j * omega))]
    y0 = jnp.concatenate([x, v, (omega**2)[None], pq])
    # the adjoint's borders: b not in the range of A^T + i omega (q^H b != 0), c not
    # normal to its kernel (c^H p != 0)
    w, b, c, y0 = jax.lax.stop_gradient((w, a @ v + 1j * omega * v, left, y0))
    return y0, bautin(params, t, x.shape[0], w, b, c)
