"""Solvers by name: ``"rk4"``, ``"tsit5"``, ... or a solver object passed as it is.

diffrax is imported only when an adaptive solver is first asked for, which keeps
``import difflab`` (and so the first result) quick.
"""

import difflib
import functools

from ...models import Model, SDEModel
from .fixed import RK4, Euler, EulerMaruyama, Heun, Leapfrog

FIXED = {
    "euler": Euler(),
    "heun": Heun(),
    "rk4": RK4(),
    "leapfrog": Leapfrog(),
    "euler_maruyama": EulerMaruyama(),
}
#: diffrax's adaptive solvers by name: explicit (non-stiff) ones, then implicit (stiff)
#: ones, which step under the gentler PID gains diffrax suggests for stiff problems.
EXPLICIT = {"tsit5": "Tsit5", "dopri5": "Dopri5", "dopri8": "Dopri8", "bosh3": "Bosh3",
            "ralston": "Ralston"}
IMPLICIT = {"kvaerno3": "Kvaerno3", "kvaerno4": "Kvaerno4", "kvaerno5": "Kvaerno5"}
ADAPTIVE = (*EXPLICIT, *IMPLICIT)


def available_solvers() -> list[str]:
    """The names ``solver=`` accepts."""
    return [*FIXED, *ADAPTIVE]


def solvers_for(model) -> list[str]:
    """The names of the solvers that can advance ``model`` (an instance or a class):
    SDE models take ``euler_maruyama`` only, ``leapfrog`` needs a HamiltonianModel."""
    model_type = model if isinstance(model, type) else type(model)
    fitting = []
    for name in available_solvers():
        try:
            _checked(name, model_type)
        except ValueError:
            continue
        fitting.append(name)
    return fitting


def default_solver(model: Model) -> str:
    """The model's own ``default_solver``, else ``"euler_maruyama"`` (SDEs) or ``"rk4"``."""
    if type(model).default_solver is not None:
        return type(model).default_solver
    return "euler_maruyama" if isinstance(model, SDEModel) else "rk4"


def _adaptive(name: str):
    import diffrax

    from .adaptive import Adaptive

    if name in IMPLICIT:
        return Adaptive(getattr(diffrax, IMPLICIT[name])(), pcoeff=0.3, icoeff=0.3)
    return Adaptive(getattr(diffrax, EXPLICIT[name])())


@functools.lru_cache(maxsize=None)
def _checked(name: str, model_type: type):
    solver = _by_name(name)
    solver.check(model_type)
    return solver


def _by_name(name: str):
    if name in FIXED:
        return FIXED[name]
    if name in ADAPTIVE:
        return _adaptive(name)
    close = difflib.get_close_matches(name, available_solvers(), n=3, cutoff=0.5)
    hint = f"did you mean {', '.join(close)}? " if close else ""
    raise ValueError(
        f"unknown solver {name!r}; {hint}choose from {', '.join(available_solvers())}"
    )


def solver_name(solver, model: Model) -> str:
    """The name a run's ``solver=`` argument is stored under (an object: its class's name)."""
    if solver is None:
        return default_solver(model)
    if isinstance(solver, str):
        return solver
    inner = getattr(solver, "solver", solver)  # an Adaptive wraps a diffrax solver
    return type(inner).__name__.lower()


def resolve_solver(solver, model: Model):
    """The solver object for a name or object, checked against the model."""
    if solver is None:
        solver = default_solver(model)
    if isinstance(solver, str):
        return _checked(solver, type(model))
    if "diffrax" in type(solver).__module__:
        import diffrax

        from .adaptive import Adaptive

        stiff = isinstance(solver, diffrax.AbstractImplicitSolver)  # the catalog's gains
        solver = Adaptive(solver, pcoeff=0.3, icoeff=0.3) if stiff else Adaptive(solver)
    if not hasattr(solver, "adaptive") or not hasattr(solver, "check"):
        raise TypeError(f"solver must be a name or a difflab solver, not {solver!r}")
    solver.check(type(model))
    return solver
