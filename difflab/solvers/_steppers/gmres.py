"""Restarted GMRES that stops as soon as the residual is small enough.

``jax.scipy.sparse.linalg.gmres`` either takes every iteration of a restart cycle
(``"batched"``) or, stopping early (``"incremental"``), adds the residual's size along
the next Krylov vector to its answer, which an operator of large norm turns into a
residual above the tolerance it was asked for. Here each cycle builds the Krylov basis
(modified Gram-Schmidt, against the vectors made so far) and the QR of the Hessenberg
matrix by Givens rotations, stops when their residual estimate is below the tolerance,
and solves only the iterations taken; the cycles restart from the true residual until it
is small enough or the cycles run out.
"""

import jax
import jax.numpy as jnp
from jax.flatten_util import ravel_pytree


def gmres(matvec, b, *, tol: float, restart: int, cycles: int):
    """``x`` with ``matvec(x)`` within ``tol * |b|`` of ``b`` (2-norms) where GMRES gets
    there in ``cycles`` cycles of at most ``restart`` iterations, from ``x = 0``."""
    flat_b, unravel = ravel_pytree(b)

    def operator(v):
        return ravel_pytree(matvec(unravel(v)))[0]

    goal = tol * jnp.linalg.norm(flat_b)

    def unfinished(state):
        _, residual, _, cycle = state
        return (cycle < cycles) & (jnp.linalg.norm(residual) > goal)

    def cycle(state):
        x, residual, basis, count = state
        dx, basis = _cycle(operator, residual, goal, basis)
        x = x + dx
        return x, flat_b - operator(x), basis, count + 1

    basis = jnp.zeros((restart + 1, flat_b.size), flat_b.dtype)  # kept from cycle to cycle
    x, _, _, _ = jax.lax.while_loop(unfinished, cycle,
                                    (jnp.zeros_like(flat_b), flat_b, basis, jnp.asarray(0)))
    return unravel(x)


def _cycle(operator, r, goal, basis):
    """The correction from one cycle on the residual ``r``, as many iterations as
    ``basis`` has rows but one at most (rows past the iterations taken are not read)."""
    m = basis.shape[0] - 1
    size = jnp.linalg.norm(r)
    basis = basis.at[0].set(r / jnp.where(size > 0, size, 1))
    hessenberg = jnp.eye(m, m + 1, dtype=r.dtype)  # rows are columns; identity past k
    rotations = jnp.zeros((m, 2), r.dtype)
    g = jnp.zeros(m + 1, r.dtype).at[0].set(size)

    def going(state):
        k, _, _, _, g = state
        return (k < m) & (jnp.abs(g[k]) > goal)

    def iteration(state):
        k, basis, hessenberg, rotations, g = state
        w, h = _orthogonalize(operator(basis[k]), basis, k, m)
        norm = jnp.linalg.norm(w)
        basis = basis.at[k + 1].set(w / jnp.where(norm > 0, norm, 1))
        column, rotations = _rotate(h.at[k + 1].set(norm), rotations, k)
        cs, sn = rotations[k]
        g = g.at[k + 1].set(sn * g[k]).at[k].set(cs * g[k])
        return k + 1, basis, hessenberg.at[k].set(column), rotations, g

    k, basis, hessenberg, _, g = jax.lax.while_loop(
        going, iteration, (jnp.asarray(0), basis, hessenberg, rotations, g))
    taken = jnp.arange(m) < k
    y = jax.scipy.linalg.solve_triangular(hessenberg[:, :m].T, jnp.where(taken, g[:m], 0.0),
                                          lower=False)
    return jnp.where(taken, y, 0.0) @ basis[:m], basis


def _orthogonalize(w, basis, k, m: int):
    """``w`` less its projections on rows ``0..k`` of ``basis`` (modified Gram-Schmidt: a
    row at a time, so an iteration costs what its ``k`` asks), and the projections."""
    def project(i, carry):
        w, h = carry
        dot = basis[i] @ w
        return w - dot * basis[i], h.at[i].set(dot)

    return jax.lax.fori_loop(0, k + 1, project, (w, jnp.zeros(m + 1, w.dtype)))


def _rotate(h, rotations, k):
    """``h`` (column ``k`` of the Hessenberg matrix) through the ``k`` rotations so far
    and the new one that zeroes its entry ``k + 1``; the rotations with it."""
    def earlier(i, h):
        cs, sn = rotations[i]
        return h.at[i].set(cs * h[i] - sn * h[i + 1]).at[i + 1].set(sn * h[i] + cs * h[i + 1])

    h = jax.lax.fori_loop(0, k, earlier, h)
    a, b = h[k], h[k + 1]
    radius = jnp.hypot(a, b)
    cs = jnp.where(radius > 0, a / jnp.where(radius > 0, radius, 1), 1.0)
    sn = jnp.where(radius > 0, -b / jnp.where(radius > 0, radius, 1), 0.0)
    h = h.at[k].set(radius).at[k + 1].set(0.0)
    return h, rotations.at[k].set(jnp.stack([cs, sn]))
