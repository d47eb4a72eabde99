"""Result codes: every trajectory carries one, shown to the user in words."""

import enum

import jax.numpy as jnp


class Result(enum.IntEnum):
    """How a simulation ended."""

    SUCCESS = 0
    MAX_STEPS_REACHED = 1
    DIVERGED = 2
    STEP_SIZE_TOO_SMALL = 3
    SOLVER_FAILED = 4
    UNSTABLE = 5

    @property
    def message(self) -> str:
        return _MESSAGES[self]


_MESSAGES = {
    Result.SUCCESS: "success",
    Result.MAX_STEPS_REACHED: "the solver took max_steps steps before reaching t1; "
    "raise max_steps or loosen rtol/atol, or, if most steps were rejected, use a stiff "
    "solver (kvaerno5) or give a small first step dt",
    Result.DIVERGED: "the state became infinite or NaN (the solution diverged); "
    "try a smaller dt or an adaptive solver",
    Result.STEP_SIZE_TOO_SMALL: "the adaptive step size fell below its minimum; "
    "the problem may be stiff (try kvaerno5) or singular",
    Result.SOLVER_FAILED: "the solver failed (an implicit step did not converge)",
    Result.UNSTABLE: "the fixed step dt is outside the solver's stability region (dt times "
    "the spectral radius of the Jacobian is too large), so the states are garbage; use a "
    "stiff solver (solver='kvaerno5') or a smaller dt",
}


class SimulationError(RuntimeError):
    """A simulation did not succeed; ``result`` holds its :class:`Result` code."""

    def __init__(self, text: str, result: Result):
        super().__init__(text)
        self.result = result


def message(code) -> str:
    """The readable message of a result code."""
    return Result(int(code)).message


def mark_diverged(code, ys):
    """Turn a success into DIVERGED where the saved states are not all finite."""
    finite = jnp.all(jnp.isfinite(ys))
    return jnp.where((code == Result.SUCCESS) & ~finite, Result.DIVERGED, code).astype(
        jnp.int32
    )
