"""The linear least-squares solve of the Gauss-Newton fit methods, in plain XLA operations.

Levenberg-Marquardt, dogleg and Gauss-Newton solve a linear least-squares problem each
step; lineax does it by ``lineax.QR``, on the CPU a LAPACK custom call (``geqrf``).
Batched (the starts of a fit are ``vmap``-ed), that kernel splits the batch over the CPU
client's thread pool and waits for its parts on a thread of that same pool: with one
device per core every pool thread can be such a waiting kernel, and a fit of 64 starts on
two CPU devices waited for ever (0 % CPU). :class:`PlainQR` factorises with Householder
reflections in ``lax`` loops instead, which XLA compiles into the device's own program:
no custom call, no thread pool, the same program on every backend.
"""

from typing import Any

import equinox.internal as eqxi
import jax
import jax.numpy as jnp
import lineax as lx
from lineax.internal import (pack_structures, ravel_vector, transpose_packed_structures,
                             unravel_solution)


def householder(a):
    """``(w, r)`` with ``a = Q @ r`` for ``a`` of shape (m, n), m >= n: ``r`` (n, n) upper
    triangular, ``Q = H_0 ... H_{n-1}`` with ``H_k = I - outer(w[k], w[k])``."""
    m, n = a.shape
    rows = jnp.arange(m)

    def body(k, carry):
        r, w = carry
        x = jnp.where(rows >= k, r[:, k], 0.0)
        norm = jnp.sqrt(jnp.sum(x * x))
        alpha = -jnp.where(x[k] >= 0, 1.0, -1.0) * norm
        v = x.at[k].add(-alpha)
        vv = jnp.sum(v * v)
        v = jnp.where(vv > 0, v * jnp.sqrt(2.0 / jnp.where(vv > 0, vv, 1.0)), 0.0)
        r = r - jnp.outer(v, v @ r)
        return r, w.at[k].set(v)

    r, w = jax.lax.fori_loop(0, n, body, (a, jnp.zeros((n, m), a.dtype)))
    return w, jnp.triu(r[:n])


def apply_qt(w, b):
    """``Q^T @ b``."""
    return jax.lax.fori_loop(0, w.shape[0], lambda k, b: b - w[k] * (w[k] @ b), b)


def apply_q(w, b):
    """``Q @ b``."""
    n = w.shape[0]
    return jax.lax.fori_loop(0, n, lambda i, b: b - w[n - 1 - i] * (w[n - 1 - i] @ b), b)


def solve_upper(r, c):
    """``x`` with ``r @ x = c``, ``r`` upper triangular (back substitution)."""
    n = r.shape[0]

    def body(i, x):
        k = n - 1 - i
        return x.at[k].set((c[k] - r[k] @ x) / r[k, k])

    return jax.lax.fori_loop(0, n, body, jnp.zeros_like(c))


def solve_lower_transposed(r, c):
    """``y`` with ``r.T @ y = c``, ``r`` upper triangular (forward substitution)."""
    return jax.lax.fori_loop(
        0, r.shape[0], lambda k, y: y.at[k].set((c[k] - r[:, k] @ y) / r[k, k]),
        jnp.zeros_like(c))


class PlainQR(lx.AbstractLinearSolver):
    """Least squares (tall operators) or the least-norm solution (wide ones), as
    ``lineax.QR`` but compiled from ``lax`` loops (see the module's note)."""

    def init(self, operator, options: dict[str, Any]):
        del options
        matrix = operator.as_matrix()
        wide = matrix.shape[1] > matrix.shape[0]
        factors = householder(matrix.T if wide else matrix)
        return factors, eqxi.Static(wide), pack_structures(operator)

    def compute(self, state, vector, options: dict[str, Any]):
        del options
        (w, r), wide, structures = state
        b = ravel_vector(vector, structures)
        if wide.value:  # A = R^T Q^T: x = Q [R^-T b; 0]
            y = solve_lower_transposed(r, b)
            x = apply_q(w, jnp.zeros(w.shape[1], b.dtype).at[: y.shape[0]].set(y))
        else:
            x = solve_upper(r, apply_qt(w, b)[: r.shape[0]])
        return unravel_solution(x, structures), lx.RESULTS.successful, {}

    def transpose(self, state, options: dict[str, Any]):
        factors, wide, structures = state
        return (factors, eqxi.Static(not wide.value), transpose_packed_structures(structures)), {}

    def conj(self, state, options: dict[str, Any]):
        return state, {}  # real matrices only

    def assume_full_rank(self):
        return True
