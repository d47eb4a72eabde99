"""Matrix-free solves of implicit stages on field states: Newton-Krylov.

A stage of an implicit method on fields solves ``U - c F(t, U) = R`` for ``U`` (``c`` the
step times the method's diagonal). Newton's corrections solve ``(I - c J) dU = -G(U)``
by GMRES (``gmres.py``, preconditioned where the stepper has a preconditioner:
``preconditioner.py``), where ``J v`` is a Jacobian-vector product (``jax.linearize`` of
``F``): no Jacobian is ever formed, so the memory is a few dozen copies of the state (GMRES's Krylov
basis) however many values the fields hold. Derivatives of the solution go through the
implicit function theorem (``jax.lax.custom_root``), not through the iterations: the
tangent solve (forward mode) and its transpose (reverse mode) are GMRES solves as the
Newton corrections' (``jax.lax.custom_linear_solve``), to the same tolerance relative to
their right-hand side's 2-norm. A cotangent as sparse as one grid value (a loss on one
point) is solved as any other: its Krylov space may close early (an exact solve), and
its zero values need no accuracy of their own (a tolerance scaled value by value, as
``lineax.GMRES``'s, can never be met there).

A stage that does not converge returns NaN fields, which the run reports as diverged;
a derivative solve that does not converge gives NaN derivatives.
"""

import equinox as eqx
import jax
import jax.numpy as jnp

from .gmres import gmres


class NewtonKrylov(eqx.Module):
    """How stages are solved: Newton stops when the correction is below ``rtol`` times
    the state (2-norms over all fields), after at most ``max_newton`` iterations; GMRES
    (restarted every ``restart`` iterations, at most ``restarts`` times) reduces each
    linear residual by ``linear_rtol``."""

    rtol: float = eqx.field(static=True, default=1e-10)
    max_newton: int = eqx.field(static=True, default=8)
    linear_rtol: float = eqx.field(static=True, default=1e-11)
    restart: int = eqx.field(static=True, default=30)
    restarts: int = eqx.field(static=True, default=20)

    def linear_solve(self, matvec, b, precondition=None):
        """``x`` with ``matvec(x) = b`` (GMRES from 0), NaN where it did not converge.
        ``b`` is scaled to norm 1 first: GMRES takes vectors below machine epsilon in
        norm (a late Newton residual) for zero. ``precondition``: an approximate inverse
        of ``matvec``, applied on the right (GMRES solves ``matvec(precondition(y)) = b``,
        so its residual is the true one)."""
        size = _norm(b)
        unit = _scale(1 / jnp.where(size > 0, size, 1.0), b)
        operator = matvec if precondition is None else lambda y: matvec(precondition(y))
        y = gmres(operator, unit, tol=self.linear_rtol, restart=self.restart,
                  cycles=self.restarts)
        x = y if precondition is None else precondition(y)
        miss = _norm(_sub(matvec(x), unit)) > 10 * self.linear_rtol
        return jax.tree.map(lambda v: jnp.where(miss, jnp.nan, size * v), x)

    def stage(self, f, t, c, rhs, affine: bool = False, precondition=None):
        """``U`` with ``U - c f(t, U) = rhs``, from ``rhs``. ``affine``: ``f`` is affine in
        ``U``, so one Newton step from ``rhs`` solves it. ``precondition``: an approximate
        inverse of ``I - c f'`` (symmetric: the transposed solves take it too)."""
        def residual(u):
            return _sub(_sub(u, _scale(c, f(t, u))), rhs)

        def solve(g, guess):
            return self._newton(g, guess, 1 if affine else self.max_newton, precondition)

        def linear_solve(matvec, b):
            return self.linear_solve(matvec, b, precondition)

        def tangent_solve(g, y):  # reverse mode transposes it: GMRES on g's transpose
            return jax.lax.custom_linear_solve(g, y, linear_solve, linear_solve)

        return jax.lax.custom_root(residual, rhs, solve, tangent_solve)

    def _newton(self, g, guess, iterations: int, precondition=None):
        def correction(u):
            r, jvp = jax.linearize(g, u)
            return self.linear_solve(jvp, _scale(-1.0, r), precondition)

        if iterations == 1:
            return _add(guess, correction(guess))

        def body(carry):
            u, k, _ = carry
            du = correction(u)
            u = _add(u, du)
            return u, k + 1, _norm(du) <= self.rtol * (_norm(u) + 1e-300)

        def go_on(carry):
            _, k, done = carry
            return (k < iterations) & ~done

        u, _, done = jax.lax.while_loop(go_on, body, (guess, 0, False))
        return jax.tree.map(lambda v: jnp.where(done, v, jnp.nan), u)


def _add(a, b):
    return jax.tree.map(jnp.add, a, b)


def _sub(a, b):
    return jax.tree.map(jnp.subtract, a, b)


def _scale(c, a):
    return jax.tree.map(lambda v: c * v, a)


def _norm(tree):
    return jnp.sqrt(sum(jnp.sum(jnp.abs(v) ** 2) for v in jax.tree.leaves(tree)))
