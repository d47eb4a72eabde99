"""Solvers by name: ``"rk4"``, ``"tsit5"``, ... or a solver object passed as it is."""

import difflib

import diffrax

from ..models import Model, SDEModel
from ._adaptive import Adaptive
from ._steppers import RK4, AbstractStepper, Euler, EulerMaruyama, Heun, Leapfrog

SOLVERS = {
    "euler": Euler(),
    "heun": Heun(),
    "rk4": RK4(),
    "leapfrog": Leapfrog(),
    "euler_maruyama": EulerMaruyama(),
    "tsit5": Adaptive(diffrax.Tsit5()),
    "dopri5": Adaptive(diffrax.Dopri5()),
    "dopri8": Adaptive(diffrax.Dopri8()),
    "kvaerno5": Adaptive(diffrax.Kvaerno5(), pcoeff=0.3, icoeff=0.3),
}


def available_solvers() -> list[str]:
    """The names ``solver=`` accepts."""
    return list(SOLVERS)


def default_solver(model: Model) -> str:
    return "euler_maruyama" if isinstance(model, SDEModel) else "rk4"


def resolve_solver(solver, model: Model):
    """The solver object for a name or object, checked against the model."""
    if solver is None:
        solver = default_solver(model)
    if isinstance(solver, str):
        if solver not in SOLVERS:
            close = difflib.get_close_matches(solver, SOLVERS, n=3, cutoff=0.5)
            hint = f"did you mean {', '.join(close)}? " if close else ""
            raise ValueError(
                f"unknown solver {solver!r}; {hint}choose from {', '.join(SOLVERS)}"
            )
        solver = SOLVERS[solver]
    elif isinstance(solver, diffrax.AbstractAdaptiveSolver):
        solver = Adaptive(solver)
    if not isinstance(solver, (AbstractStepper, Adaptive)):
        raise TypeError(f"solver must be a name or a difflab solver, not {solver!r}")
    solver.check(model)
    return solver
