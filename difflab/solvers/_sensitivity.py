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
from ._result import Result, message
from ._simulate import Trajectory, simulate

_SETTINGS = ("t0", "dt", "solver", "n_save", "rtol", "atol", "max_steps")


@dataclasses.dataclass(frozen=True, eq=False)
class Sensitivity:
    """The trajectory of a run and its sensitivities to ``parameters``.

    ``raw[t, i, k]`` is ``d y_i(t) / d p_k``; ``normalized[t, i, k]`` is
    ``d log y_i / d log p_k = raw * p_k / y_i`` (NaN where ``y_i = 0``). Select one curve
    with ``sens.curve("prey", "alpha")`` (``normalized=True`` for the logarithmic one).
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


def _index(names, name, kind) -> int:
    try:
        return names.index(name)
    except ValueError:
        raise KeyError(f"no {kind} {name!r}; choose from {', '.join(names)}") from None


def sensitivity(model: Model, t1, *, params: Sequence[str] | None = None, y0=None, key=None,
                **settings) -> Sensitivity:
    """The trajectory of ``model`` and its forward sensitivities to ``params``.

    Args:
        model: a :class:`difflab.Model`.
        t1: the end time.
        params: names of scalar parameters (default: all of the model's parameters).
        y0, key: as in :func:`simulate`; the initial state defaults to
            ``model.initial_state()``, so parameters that set it (``prey0``) have
            sensitivities from ``t0`` on.
        settings: ``t0``, ``dt``, ``solver``, ``n_save``, ``rtol``, ``atol``,
            ``max_steps`` of :func:`simulate`.

    Returns a :class:`Sensitivity`; ``raw`` has shape ``(n_save, n_states, n_params)``.
    """
    names = _parameter_names(model, params)
    unknown = [k for k in settings if k not in _SETTINGS]
    if unknown:
        raise TypeError(f"sensitivity() got an unexpected setting {unknown[0]!r}")
    values = jnp.stack([jnp.asarray(getattr(model, n), jnp.result_type(float)) for n in names])
    static = {k: settings[k] for k in ("solver", "n_save", "max_steps") if k in settings}
    traced = {k: jnp.asarray(v, jnp.result_type(float)) for k, v in settings.items()
              if k not in static and v is not None}
    ts, ys, jac, result = _jacobian(model, values, jnp.asarray(t1, jnp.result_type(float)),
                                    y0, key, traced, names, tuple(sorted(static.items())))
    return Sensitivity(np.asarray(ts), np.asarray(ys), np.asarray(jac), names,
                       np.asarray(values), tuple(model.state_names), Result(int(result)),
                       model, {"t1": float(t1), **settings})


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
def _jacobian(model, values, t1, y0, key, traced, names, static):
    def states(values):
        m = model.replace(**{n: values[k] for k, n in enumerate(names)})
        traj = simulate(m, t1, y0=y0, key=key, throw=False, adjoint="forward",
                        **traced, **dict(static))
        return traj.ys, (traj.ts, traj.ys, traj.result)

    jac, (ts, ys, result) = jax.jacfwd(states, has_aux=True)(values)
    return ts, ys, jac, jnp.max(result)
