"""``sweep`` for field models: every point's run in one vmapped program, reduced on the
device to the observables asked for, so only numbers per point come back."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from ..models import AbstractFieldModel
from ._field_checks import check_memory_of, check_solver, check_stable
from ._field_runs import FIXED_STEPS, _default_dt, simulate_field_model
from ._result import Result
from ._sweeps.spaces import Space, as_space

DEFAULT_SWEEP_FRAMES = 11


@dataclasses.dataclass(eq=False)
class FieldSweepResult:
    """A field model's sweep: ``observables[name]`` (points,) per observable, ``final``
    ``{field: (points, *grid.shape)}`` (the last frames), ``result`` (points,) the
    :class:`Result` code of each point (``DIVERGED`` where a value is not finite)."""

    space: Space
    observables: dict
    final: dict
    result: np.ndarray
    model: object = None

    def __len__(self) -> int:
        return len(self.result)

    def __getitem__(self, name: str) -> np.ndarray:
        """The observable ``name`` at every point."""
        try:
            return self.observables[name]
        except KeyError:
            raise KeyError(f"no observable {name!r}; the observables are "
                           f"{', '.join(self.observables) or 'none'}") from None


def _check_columns(model: AbstractFieldModel, space: Space) -> None:
    specs = model.parameter_specs()
    for name in space.columns:
        if name not in specs:
            raise ValueError(f"{type(model).__name__} has no parameter {name!r} to sweep; "
                             f"its parameters are {', '.join(specs) or 'none'}")


def _check_observables(observables) -> dict:
    if not isinstance(observables, dict) or not all(map(callable, observables.values())):
        raise TypeError("a field sweep's observables are {name: f} with f(traj) -> number, "
                        "f given the point's FieldTrajectory")
    return observables


def _points(model, space: Space):
    """The model at every point (host side, concrete: for checks before the run)."""
    for i in range(len(space)):
        yield model.replace(**{k: float(v[i]) for k, v in space.columns.items()})


def _step(model, space: Space, solver: str, t1: float, t0: float, dt):
    """The shared fixed step: the one given (checked stable at every point) or the
    default, the smallest any point needs."""
    if dt is None:
        return min(_default_dt(solver, m, t1 - t0) for m in _points(model, space))
    for m in _points(model, space):
        check_stable(solver, m, float(dt))
    return float(dt)


def sweep_fields(model: AbstractFieldModel, space, t1, *, observables, t0=None, dt=None,
                 solver=None, n_save=None, y0=None, throw: bool = False) -> FieldSweepResult:
    """Run ``model`` at every point of ``space`` (columns naming its parameters) as one
    vmapped program and return each point's observables (``{name: f}``, ``f`` given the
    point's :class:`FieldTrajectory`, run on the device) and final fields."""
    space = as_space(space)
    _check_columns(model, space)
    observables = _check_observables(observables)
    check_memory_of(model, len(space) * 2)
    solver = model.default_solver if solver is None else solver
    check_solver(solver, model)
    if solver not in FIXED_STEPS:
        raise ValueError(f"a field sweep steps with {', '.join(FIXED_STEPS)}, not {solver!r}")
    t0 = 0.0 if t0 is None else float(t0)
    n_save = DEFAULT_SWEEP_FRAMES if n_save is None else int(n_save)
    check_memory_of(model, len(space) * n_save)
    dt = _step(model, space, solver, float(t1), t0, dt)
    columns = {k: jnp.asarray(v, dtype=float) for k, v in space.columns.items()}

    def one(values):
        traj = simulate_field_model(model.replace(**values), t1, t0=t0, dt=dt, solver=solver,
                                    n_save=n_save, y0=y0, throw=False)
        return {k: f(traj) for k, f in observables.items()}, traj.final

    values, final = jax.vmap(one)(columns)
    values = {k: np.asarray(v) for k, v in values.items()}
    final = {k: np.asarray(v) for k, v in final.items()}
    finite = np.ones(len(space), dtype=bool)
    for v in (*values.values(), *final.values()):
        finite &= np.isfinite(v.reshape(len(space), -1)).all(axis=1)
    result = np.where(finite, int(Result.SUCCESS), int(Result.DIVERGED))
    if throw and not finite.all():
        raise ValueError(f"{int((~finite).sum())} of {len(space)} points diverged")
    return FieldSweepResult(space, values, final, result, model)
