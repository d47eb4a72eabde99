"""The linear solve of the implicit (Kvaerno) solvers, in plain XLA operations.

diffrax's Kvaerno solvers find each stage by Newton (chord) iterations whose linear
solves lineax does by LU factorisation: ``jax.scipy.linalg.lu_factor``, on the CPU a
LAPACK custom call. Batched (a sweep ``vmap``-s it), that kernel splits the batch over the
CPU client's thread pool and waits for its parts, on a thread of that same pool. With one
device per core every pool thread can be such a waiting kernel, and then nothing is left
to do the parts: the sweep of a stiff model with tens of states on two CPU devices waited
for ever (0 % CPU, in ``block_until_ready``). :class:`PlainLU` factorises with partial
pivoting in ``lax`` loops instead, which XLA compiles into the device's own program like
any other operation: no custom call, no thread pool, and the same program on every
backend. The pivots are LAPACK's (the first largest magnitude in the column), so the
factors agree with ``getrf``'s to rounding.
"""

from typing import Any

import diffrax
import equinox as eqx
import equinox.internal as eqxi
import jax
import jax.numpy as jnp
import lineax as lx
from lineax.internal import (pack_structures, ravel_vector, transpose_packed_structures,
                             unravel_solution)


class PlainLU(lx.AbstractLinearSolver):
    """LU with partial pivoting for square nonsingular operators, as ``lineax.LU`` but
    compiled from ``lax`` loops (no LAPACK custom call, see the module's note)."""

    def init(self, operator: lx.AbstractLinearOperator, options: dict[str, Any]):
        del options
        if operator.in_size() != operator.out_size():
            raise ValueError("PlainLU solves square systems only")
        return lu_factor(operator.as_matrix()), pack_structures(operator), eqxi.Static(False)

    def compute(self, state, vector, options: dict[str, Any]):
        del options
        factors, structures, transposed = state
        b = ravel_vector(vector, structures)
        x = (lu_solve_transposed if transposed.value else lu_solve)(factors, b)
        return unravel_solution(x, structures), lx.RESULTS.successful, {}

    def transpose(self, state, options: dict[str, Any]):
        factors, structures, transposed = state
        return (factors, transpose_packed_structures(structures),
                eqxi.Static(not transposed.value)), {}

    def conj(self, state, options: dict[str, Any]):
        (lu, perm), structures, transposed = state
        return ((lu.conj(), perm), structures, transposed), {}

    def assume_full_rank(self):
        return True


def lu_factor(a):
    """``(lu, perm)`` with ``a[perm] = L @ U``: ``L`` unit lower (below the diagonal of
    ``lu``), ``U`` upper (on and above it)."""
    n = a.shape[-1]
    idx = jnp.arange(n)

    def eliminate(k, carry):
        lu, perm = carry
        p = jnp.argmax(jnp.where(idx >= k, jnp.abs(lu[:, k]), -1.0))
        swap = jnp.where(idx == k, p, jnp.where(idx == p, k, idx))
        lu, perm = lu[swap], perm[swap]
        below = idx > k
        l = jnp.where(below, lu[:, k] / lu[k, k], 0.0)
        lu = lu - l[:, None] * jnp.where(below, lu[k], 0.0)[None, :]
        return lu.at[:, k].set(jnp.where(below, l, lu[:, k])), perm

    return jax.lax.fori_loop(0, n, eliminate, (a, idx))


def _forward(m, b, unit: bool):
    """``x`` with ``tril(m) @ x = b`` (``unit``: ones on the diagonal)."""
    idx = jnp.arange(b.shape[0])

    def row(i, x):
        xi = b[i] - jnp.dot(jnp.where(idx < i, m[i], 0.0), x)
        return x.at[i].set(xi if unit else xi / m[i, i])

    return jax.lax.fori_loop(0, b.shape[0], row, jnp.zeros_like(b))


def _backward(m, b, unit: bool):
    """``x`` with ``triu(m) @ x = b`` (``unit``: ones on the diagonal)."""
    n = b.shape[0]
    idx = jnp.arange(n)

    def row(j, x):
        i = n - 1 - j
        xi = b[i] - jnp.dot(jnp.where(idx > i, m[i], 0.0), x)
        return x.at[i].set(xi if unit else xi / m[i, i])

    return jax.lax.fori_loop(0, n, row, jnp.zeros_like(b))


def lu_solve(factors, b):
    """``x`` with ``a @ x = b`` for ``factors = lu_factor(a)``."""
    lu, perm = factors
    return _backward(lu, _forward(lu, jnp.asarray(b)[perm], unit=True), unit=False)


def lu_solve_transposed(factors, b):
    """``x`` with ``a.T @ x = b`` for ``factors = lu_factor(a)``."""
    lu, perm = factors
    w = _backward(lu.T, _forward(lu.T, jnp.asarray(b), unit=False), unit=True)
    return jnp.zeros_like(w).at[perm].set(w)


def with_plain_lu(solver):
    """``solver`` with its root finder's LU solve (lineax's default) done by
    :class:`PlainLU`; any other solver, or another linear solver chosen, as it is."""
    if not isinstance(solver, diffrax.AbstractImplicitSolver):
        return solver
    finder = solver.root_finder
    current = getattr(finder, "linear_solver", None)
    if not isinstance(current, (lx.AutoLinearSolver, lx.LU)):
        return solver
    if isinstance(current, lx.AutoLinearSolver) and current.well_posed is False:
        return solver  # a least-squares choice, not an LU
    return eqx.tree_at(lambda s: s.root_finder.linear_solver, solver, PlainLU())
