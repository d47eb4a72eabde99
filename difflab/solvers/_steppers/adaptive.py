"""Adaptive and stiff solvers from diffrax, stepped under a PID step-size controller."""

from typing import ClassVar

import diffrax
import equinox as eqx
import jax.numpy as jnp

from ...models import Model, SDEModel
from .._result import Result, mark_diverged


class Adaptive(eqx.Module):
    """A diffrax solver under PID error control: ``Adaptive(diffrax.Tsit5())``.

    The default gains suit smooth problems; for stiff ones diffrax suggests the
    less sensitive ``pcoeff=0.3, icoeff=0.3`` (which ``"kvaerno5"`` uses).
    """

    solver: diffrax.AbstractAdaptiveSolver
    pcoeff: float = eqx.field(static=True, default=0.4)
    icoeff: float = eqx.field(static=True, default=1.0)
    stochastic: ClassVar[bool] = False
    adaptive: ClassVar[bool] = True

    def check(self, model_type: type[Model]) -> None:
        if issubclass(model_type, SDEModel):
            raise ValueError(
                f"{model_type.__name__} is stochastic: use solver='euler_maruyama'"
            )

    def controller(self, rtol, atol):
        return diffrax.PIDController(
            rtol=rtol, atol=atol, pcoeff=self.pcoeff, icoeff=self.icoeff
        )

    def solve(self, model, y0, t0, t1, ts, dt0, rtol, atol, max_steps, adjoint=None):
        """Solve from ``t0`` to ``t1`` saving at ``ts``: (ys, result code, steps taken).

        ``adjoint``: how diffrax differentiates the solve (default ``ForwardMode``, for
        difflab's forward sensitivities; ``RecursiveCheckpointAdjoint`` for reverse mode).
        """
        term = diffrax.ODETerm(lambda t, y, args: model.vector_field(t, y))
        sol = diffrax.diffeqsolve(
            term,
            self.solver,
            t0,
            t1,
            dt0,
            y0,
            saveat=diffrax.SaveAt(ts=ts),
            stepsize_controller=self.controller(rtol, atol),
            max_steps=max_steps,
            throw=False,
            adjoint=diffrax.ForwardMode() if adjoint is None else adjoint,
        )
        return sol.ys, from_diffrax(sol.result, sol.ys), sol.stats["num_steps"]


def from_diffrax(result, ys):
    """Map a diffrax result (and the saved states) to a :class:`Result` code, under jit."""
    R = diffrax.RESULTS
    code = jnp.select(
        [
            result == R.successful,
            result == R.max_steps_reached,
            result == R.dt_min_reached,
        ],
        [Result.SUCCESS, Result.MAX_STEPS_REACHED, Result.STEP_SIZE_TOO_SMALL],
        Result.SOLVER_FAILED,
    )
    return mark_diverged(code, ys)
