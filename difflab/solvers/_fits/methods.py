"""Optimizers of a fit, stepped a chunk at a time: optimistix (Levenberg-Marquardt, BFGS)
and optax (Adam), all behind ``init`` and ``step`` for one start.

``step`` returns the new point, state, the loss at the last accepted point, whether the
optimizer is done and a :class:`Result` code. Numbers (tolerances, learning rate) travel
in ``args["optimizer"]``, so changing them does not recompile.
"""

import equinox as eqx
import jax
import jax.numpy as jnp

from .._result import Result
from .linear import PlainQR

_NOT_FINITE_LIMIT = 20  # Adam skips non-finite steps, and gives up after this many in a row


def _all_finite(tree):
    leaves = [jnp.all(jnp.isfinite(x)) for x in jax.tree.leaves(tree)]
    return jnp.all(jnp.stack(leaves)) if leaves else jnp.array(True)


class Optimistix(eqx.Module):
    """A least-squares solver (``"lm"``) or minimiser (``"bfgs"``) of optimistix."""

    name: str = eqx.field(static=True)
    solver_object: object = eqx.field(static=True, default=None)  # a given optimistix solver
    stalls = True  # a start that stops improving is done (see ``_fit._stalled``)

    @property
    def least_squares(self) -> bool:
        import optimistix as optx

        if self.solver_object is not None:
            return not isinstance(self.solver_object, optx.AbstractMinimiser)
        return self.name in ("lm", "dogleg", "gauss_newton")

    @property
    def adjoint(self) -> str:
        # Gauss-Newton methods linearise the residuals (forward mode, P tangents);
        # a minimiser only needs the gradient, whose mode ``"auto"`` picks.
        return "forward" if self.least_squares else "auto"

    def solver(self, opt):
        import optimistix as optx

        if self.solver_object is not None:
            return self.solver_object
        if self.name == "bfgs":
            return optx.BFGS(rtol=opt["rtol"], atol=opt["atol"])
        make = {"lm": optx.LevenbergMarquardt, "dogleg": optx.Dogleg,
                "gauss_newton": optx.GaussNewton}[self.name]
        # no LAPACK call: batched over starts, it can wedge the CPU's threads (linear.py)
        return make(rtol=opt["rtol"], atol=opt["atol"], linear_solver=PlainQR())

    def objective(self, problem):
        if self.least_squares:
            return lambda u, args: (problem.residuals(u, args, adjoint=self.adjoint), None)
        return lambda u, args: (problem.loss(u, args, adjoint=self.adjoint), None)

    def init(self, problem, u, args):
        fn = self.objective(problem)
        f_struct = jax.eval_shape(lambda: fn(u, args)[0])
        return self.solver(args["optimizer"]).init(fn, u, args, {}, f_struct, None,
                                                   frozenset())

    def step(self, problem, u, state, args):
        import optimistix as optx

        fn, solver = self.objective(problem), self.solver(args["optimizer"])
        new_u, state, _ = solver.step(fn, u, args, {}, state, frozenset())
        done, result = solver.terminate(fn, new_u, args, {}, state, frozenset())
        finite = _all_finite(new_u)
        code = jnp.where(result == optx.RESULTS.successful, Result.SUCCESS, Result.SOLVER_FAILED)
        code = jnp.where(finite, code, Result.DIVERGED).astype(jnp.int32)
        return new_u, state, _state_loss(state), done | ~finite | (code != 0), code


def _state_loss(state):
    info = state.f_info
    residual = getattr(info, "residual", None)
    if residual is not None:
        return 0.5 * sum(jnp.sum(r * r) for r in jax.tree.leaves(residual))
    return info.f


class Adam(eqx.Module):
    """Adam (optax) on ``0.5 * sum(residuals**2)``: for large or neural models.

    Runs ``fit_max_steps`` steps (no convergence test); a step whose loss or gradient is not
    finite is skipped, and the fit ends as diverged after 20 such steps in a row.
    """

    transformation: object = eqx.field(static=True, default=None)  # an optax transformation
    adjoint: str = eqx.field(static=True, default="auto")

    def _optimizer(self):
        import optax

        return self.transformation if self.transformation is not None else optax.scale_by_adam()

    def init(self, problem, u, args):
        return (self._optimizer().init(u), jnp.zeros((), jnp.int32))

    def step(self, problem, u, state, args):
        import optax

        opt_state, bad = state
        loss, grads = jax.value_and_grad(lambda u: problem.loss(u, args, self.adjoint))(u)
        updates, new_opt_state = self._optimizer().update(grads, opt_state, u)
        if self.transformation is None:  # scale_by_adam: the learning rate is traced
            updates = jax.tree.map(lambda x: -args["optimizer"]["learning_rate"] * x, updates)
        finite = jnp.isfinite(loss) & _all_finite(grads)
        new_u = optax.apply_updates(u, updates)
        new_u, new_opt_state = jax.tree.map(lambda a, b: jnp.where(finite, a, b),
                                            (new_u, new_opt_state), (u, opt_state))
        bad = jnp.where(finite, 0, bad + 1)
        diverged = bad >= _NOT_FINITE_LIMIT
        code = jnp.where(diverged, Result.DIVERGED, Result.SUCCESS).astype(jnp.int32)
        return new_u, (new_opt_state, bad), loss, diverged, code


def resolve_method(method):
    """The optimizer for ``method``: a name, an optimistix solver or an optax transformation."""
    if isinstance(method, str):
        if method in ("lm", "bfgs", "dogleg", "gauss_newton"):
            return Optimistix(method)
        if method == "adam":
            return Adam()
        raise ValueError(f"unknown fit method {method!r}; choose 'lm' (Levenberg-Marquardt), "
                         "'bfgs', 'adam', 'dogleg' or 'gauss_newton', or pass an optimistix "
                         "solver or an optax transformation")
    module = type(method).__module__ or ""
    if module.startswith("optimistix"):
        return Optimistix(type(method).__name__, method)
    if hasattr(method, "init") and hasattr(method, "update"):
        return Adam(method)
    raise TypeError(f"method must be a name, an optimistix solver or an optax "
                    f"transformation, not {method!r}")


def method_name(method) -> str:
    if isinstance(method, Optimistix):
        return method.name
    return "adam" if method.transformation is None else "optax"
