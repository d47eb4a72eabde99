"""Sizes typed on the command line, checked before any work: the memory they would need.

An option such as ``--starts 100000000`` would otherwise grow until the kernel ends the
process. Each check estimates the arrays the job holds at once and refuses in one line
naming that memory, through the solvers' own limit (``DIFFLAB_MEMORY_LIMIT``, else a
share of the memory available).
"""

import difflab as dl

from .errors import UsageError

_FLOAT = 8  # bytes of a float64


def _check(need: float, what: str, hint: str) -> None:
    try:
        dl.solvers.check_memory(need, what, hint)
    except ValueError as error:
        raise UsageError(" ".join(str(error).split())) from None


def check_starts(model, starts: int) -> None:
    """``difflab equilibria --starts``: each start keeps a state, a Newton step and a
    Jacobian (``n + n + n^2`` floats), in two copies (a step's input and its output)."""
    n = len(model.state_names)
    _check(2 * starts * (2 * n + n * n) * _FLOAT, f"--starts {starts:,} ({n} states each)",
           "give fewer --starts")


def check_cycle_steps(model, steps: int, segments: int) -> None:
    """``difflab cycles --steps``: the mesh of step sizes and an orbit's states kept at
    every step (``1 + n`` floats per step)."""
    n = len(model.state_names)
    _check(steps * (1 + n) * _FLOAT, f"--steps {steps:,} per period ({n} states)",
           "give fewer --steps")
