"""``sensitivity``: how every state responds over time to each chosen parameter.

Forward sensitivities ``S[t, i, k] = d y_i(t) / d p_k``, computed in the same solve as the
trajectory (one pass with ``1 + P`` tangents), and the normalised (logarithmic)
sensitivities ``d log y_i / d log p_k = S * p_k / y_i``, as arrays ready to plot.
"""

import dataclasses
from collections.abc import Sequence

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ..models import Model
from ._auto_step import auto_step
from ._datasets import to_dataset
from ._result import Result, message
from ._settings import SolveSettings, solve_arguments
from ._simulate import Trajectory, simulate

_STATIC = ("solver", "n_save", "max_steps")  # compiled in
_TRACED = ("t0", "t1", "dt", "rtol", "atol")


@dataclasses.dataclass(frozen=True, eq=False)
class Sensitivity:
    """The trajectory of a run and its sensitivities to ``parameters``.

    ``raw[t, i, k]`` is ``d y_i(t) / d p_k``; ``normalized[t, i, k]`` is
    ``d log y_i / d log p_k = raw * p_k / y_i`` (NaN where ``y_i = 0``). Select one curve
    with ``sens.curve("prey", "alpha")`` (``normalized=True`` for the logarithmic one).
    Read from a session file it has its ``name`` there; a stored gradient of a scalar
    objective (``gradient``, by parameter) may stand without ``raw``.
    """

    ts: np.ndarray
    ys: np.ndarray
    raw: np.ndarray
    parameters: tuple[str, ...]
    values: np.ndarray
    state_names: tuple[str, ...]
    result: Result
    model: Model
    settings: dict
    name: str | None = None
    gradient: np.ndarray | None = None

    @property
    def normalized(self) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            out = self.raw * self.values[None, None, :] / self.ys[:, :, None]
        return np.where(self.ys[:, :, None] == 0, np.nan, out)

    @property
    def trajectory(self) -> Trajectory:
        return Trajectory(jnp.asarray(self.ts), jnp.asarray(self.ys),
                          jnp.asarray(int(self.result), jnp.int32), jnp.asarray(0),
                          self.state_names)

    def curve(self, state: str, parameter: str, *, normalized: bool = False) -> np.ndarray:
        """The sensitivity of ``state`` to ``parameter`` over time."""
        i, k = _index(self.state_names, state, "state"), _index(self.parameters, parameter,
                                                                "parameter")
        return (self.normalized if normalized else self.raw)[:, i, k]

    @property
    def message(self) -> str:
        return message(self.result)

    def to_xarray(self):
        """This result as an ``xarray.Dataset``: the variables, coordinates and attributes
        of its group in a session file (``docs/hdf5-schema.md``)."""
        return to_dataset(self)


def _index(names, name, kind) -> int:
    try:
        return names.index(name)
    except ValueError:
        raise KeyError(f"no {kind} {name!r}; choose from {', '.join(names)}") from None


def sensitivity(model: Model, t1=None, *, params: Sequence[str] | None = None, t0=None,
                dt=None, solver=None, n_save: int | None = None, y0=None, key=None, rtol=None,
                atol=None, max_steps: int | None = None,
                settings: SolveSettings | None = None) -> Sensitivity:
    """The trajectory of ``model`` and its forward sensitivities to ``params``.

    Args:
        model: a :class:`difflab.Model`.
        params: names of scalar parameters (default: all of the model's parameters).
        t1, t0, dt, solver, n_save, y0, key, rtol, atol, max_steps, settings: the run,
            as in :func:`simulate`. The initial state defaults to
            ``model.initial_state()``, so parameters that set it (``prey0``) have
            sensitivities from ``t0`` on.

    Returns a :class:`Sensitivity`; ``raw`` has shape ``(n_save, n_states, n_params)``.
    """
    names = _parameter_names(model, params)
    solve = solve_arguments(settings, t1=t1, t0=t0, dt=dt, solver=solver, n_save=n_save,
                            y0=y0, key=key, rtol=rtol, atol=atol, max_steps=max_steps)
    if solve["t1"] is None:
        raise TypeError("t1, the end time, is missing (give t1 or settings=)")
    if solve["dt"] is None or solve["n_save"] is None:  # chosen on the concrete model, as
        auto = auto_step(model, solve["t1"], t0=solve["t0"], solver=solve["solver"],  # simulate
                         y0=solve["y0"], rtol=solve["rtol"], dt=solve["dt"],
                         n_save=solve["n_save"])
        solve["dt"], solve["n_save"] = auto.dt, auto.n_save
    values = jnp.stack([jnp.asarray(getattr(model, n), jnp.result_type(float)) for n in names])
    static = {k: solve[k] for k in _STATIC if solve[k] is not None}
    traced = {k: jnp.asarray(solve[k], jnp.result_type(float)) for k in _TRACED
              if solve[k] is not None}
    ts, ys, jac, result = _jacobian(model, values, solve["y0"], solve["key"], traced, names,
                                    tuple(sorted(static.items())))
    recorded = {k: v for k, v in solve.items() if v is not None and k not in ("y0", "key")}
    return Sensitivity(np.asarray(ts), np.asarray(ys), np.asarray(jac), names,
                       np.asarray(values), tuple(model.state_names), Result(int(result)),
                       model, {**recorded, "t1": float(solve["t1"])})


def _parameter_names(model, params) -> tuple[str, ...]:
    if not isinstance(model, Model):
        raise TypeError(f"model must be a difflab.Model, not {type(model).__name__}")
    specs = model.parameter_specs()
    names = tuple(specs) if params is None else tuple(params)
    if isinstance(params, str):
        names = (params,)
    if not names:
        raise ValueError(f"{type(model).__name__} has no scalar parameters to differentiate by")
    for n in names:
        if n not in specs:
            raise ValueError(f"{type(model).__name__} has no parameter {n!r}; its parameters "
                             f"are {', '.join(specs) or 'none'}")
    return names


@eqx.filter_jit
def _jacobian(model, values, y0, key, traced, names, static):
    def states(values):
        m = model.replace(**{n: values[k] for k, n in enumerate(names)})
        traj = simulate(m, y0=y0, key=key, throw=False, adjoint="forward", **traced,
                        **dict(static))
        return traj.ys, (traj.ts, traj.ys, traj.result)

    jac, (ts, ys, result) = jax.jacfwd(states, has_aux=True)(values)
    return ts, ys, jac, jnp.max(result)
