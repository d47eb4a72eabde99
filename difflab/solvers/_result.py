"""Result codes: every trajectory carries one, shown to the user in words."""

import enum

import diffrax
import jax.numpy as jnp


class Result(enum.IntEnum):
    """How a simulation ended."""

    SUCCESS = 0
    MAX_STEPS_REACHED = 1
    DIVERGED = 2
    STEP_SIZE_TOO_SMALL = 3
    SOLVER_FAILED = 4

    @property
    def message(self) -> str:
        return _MESSAGES[self]


_MESSAGES = {
    Result.SUCCESS: "success",
    Result.MAX_STEPS_REACHED: "the solver took max_steps steps before reaching t1; "
    "raise max_steps or loosen rtol/atol",
    Result.DIVERGED: "the state became infinite or NaN (the solution diverged); "
    "try a smaller dt or an adaptive solver",
    Result.STEP_SIZE_TOO_SMALL: "the adaptive step size fell below its minimum; "
    "the problem may be stiff (try kvaerno5) or singular",
    Result.SOLVER_FAILED: "the solver failed (an implicit step did not converge)",
}


def message(code) -> str:
    """The readable message of a result code."""
    return Result(int(code)).message


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


def mark_diverged(code, ys):
    """Turn a success into DIVERGED where the saved states are not all finite."""
    finite = jnp.all(jnp.isfinite(ys))
    return jnp.where((code == Result.SUCCESS) & ~finite, Result.DIVERGED, code).astype(
        jnp.int32
    )
