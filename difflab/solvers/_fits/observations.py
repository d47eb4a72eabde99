"""Observations to fit: measured times and values of some states, with noise levels.

The data a fit takes, in memory: an :class:`Observations`, a dict of columns
(``{"t": ts, "prey": ..., "sigma_prey": ...}``) or a :class:`difflab.Trajectory`.
Files are read by ``difflab.io.read_observations`` (CSV, HDF5). Missing values are NaN;
they are left out of a fit.
"""

import dataclasses
from collections.abc import Mapping, Sequence
from typing import ClassVar

import numpy as np


@dataclasses.dataclass(frozen=True, eq=False)
class Observations:
    """Observed values ``y[i, j]`` of state ``states[j]`` at time ``t[i]``.

    ``y`` is NaN where a state was not observed. ``sigma`` (same shape, optional) is the
    standard deviation of each value's noise; ``None`` when unknown.
    """

    t: np.ndarray
    y: np.ndarray
    states: tuple[str, ...]
    sigma: np.ndarray | None = None
    TIME_NAMES: ClassVar[tuple[str, ...]] = ("t", "time")  # the time column's names

    def __post_init__(self):
        t = np.asarray(self.t, dtype=np.float64).reshape(-1)
        y = np.asarray(self.y, dtype=np.float64)
        y = y.reshape(len(t), -1) if y.ndim == 1 else y
        states = tuple(str(s) for s in self.states)
        _check(t, y, states)
        sigma = None if self.sigma is None else sigma_array(self.sigma, y.shape, states)
        object.__setattr__(self, "t", t)
        object.__setattr__(self, "y", y)
        object.__setattr__(self, "states", states)
        object.__setattr__(self, "sigma", sigma)

    @property
    def n_values(self) -> int:
        """How many values are observed (not NaN)."""
        return int(np.isfinite(self.y).sum())

    def __getitem__(self, state: str) -> np.ndarray:
        try:
            return self.y[:, self.states.index(state)]
        except ValueError:
            raise KeyError(f"no observed state {state!r}; observed: {', '.join(self.states)}") from None

    def with_noise(self, sigma, *, seed: int = 0) -> "Observations":
        """A copy with Gaussian noise of standard deviation ``sigma`` added (and recorded).

        ``sigma``: a number, a dict ``{state: number}`` or an array like ``y``.
        """
        sd = sigma_array(sigma, self.y.shape, self.states)
        noise = np.random.default_rng(seed).standard_normal(self.y.shape) * sd
        return Observations(self.t, self.y + noise, self.states, sd)

    def to_dict(self) -> dict[str, np.ndarray]:
        """``{"t": t, state: values, ..., "sigma_<state>": ...}``."""
        out = {"t": self.t, **{s: self.y[:, j] for j, s in enumerate(self.states)}}
        if self.sigma is not None:
            out.update({f"sigma_{s}": self.sigma[:, j] for j, s in enumerate(self.states)})
        return out

    def __repr__(self) -> str:
        span = f"t in [{self.t.min():g}, {self.t.max():g}]" if len(self.t) else "empty"
        return (f"Observations({len(self.t)} times, {span}, states={list(self.states)}, "
                f"sigma={'given' if self.sigma is not None else 'unknown'})")


def _check(t, y, states) -> None:
    if len(t) == 0:
        raise ValueError("observations need at least one time")
    if y.shape != (len(t), len(states)):
        raise ValueError(f"observed values must have shape (times, states) = "
                         f"({len(t)}, {len(states)}), not {y.shape}")
    if len(set(states)) != len(states):
        raise ValueError(f"observed states repeat: {list(states)}")
    if not np.all(np.isfinite(t)):
        raise ValueError("observation times must be finite numbers")
    if np.any(np.diff(t) < 0):
        raise ValueError("observation times must be in increasing order")
    if not np.any(np.isfinite(y)):
        raise ValueError("no observed value is a finite number")


def sigma_array(sigma, shape, states) -> np.ndarray:
    if isinstance(sigma, Mapping):
        unknown = [s for s in sigma if s not in states]
        if unknown:
            raise ValueError(f"sigma names {unknown[0]!r}, which is not observed "
                             f"(observed: {', '.join(states)})")
        missing = [s for s in states if s not in sigma]
        if missing:
            raise ValueError(f"sigma gives no value for state {missing[0]!r}")
        sigma = np.array([float(sigma[s]) for s in states])
    sd = np.broadcast_to(np.asarray(sigma, dtype=np.float64), shape).copy()
    if not np.all(sd[np.isfinite(sd)] > 0):
        raise ValueError("sigma must be positive")
    return sd


def _sigma_key(name: str, columns) -> str | None:
    for key in (f"sigma_{name}", f"{name}_sigma"):
        if key in columns:
            return key
    return None


def from_dict(data: Mapping, *, states: Sequence[str] | None = None, sigma=None) -> Observations:
    """Observations from ``{"t": times, state: values, ..., "sigma_<state>": ...}``."""
    columns = dict(data)
    time_key = next((k for k in Observations.TIME_NAMES if k in columns), None)
    if time_key is None:
        raise ValueError(f"observations need a time column named 't' or 'time'; "
                         f"got {', '.join(map(str, columns))}")
    t = np.asarray(columns.pop(time_key), dtype=np.float64)
    sigma_keys = {k for k in columns if k.startswith("sigma_") or k.endswith("_sigma")}
    names = list(states) if states is not None else [k for k in columns if k not in sigma_keys]
    missing = [s for s in names if s not in columns]
    if missing:
        raise ValueError(f"no column {missing[0]!r} in the observations")
    if not names:
        raise ValueError("observations need at least one state column besides the time")
    y = np.column_stack([np.asarray(columns[s], dtype=np.float64) for s in names])
    if sigma is None:
        keys = [_sigma_key(s, columns) for s in names]
        if any(k is not None for k in keys):
            sigma = np.column_stack([np.asarray(columns[k], dtype=np.float64) if k else
                                     np.full(len(t), np.nan) for k in keys])
    return Observations(t, y, tuple(names), sigma)


def select(obs: Observations, states: Sequence[str]) -> Observations:
    """The observations of ``states`` only."""
    idx = [obs.states.index(s) if s in obs.states else _no_state(s, obs) for s in states]
    sigma = None if obs.sigma is None else obs.sigma[:, idx]
    return Observations(obs.t, obs.y[:, idx], tuple(states), sigma)


def _no_state(state, obs):
    raise ValueError(f"state {state!r} is not observed; observed: {', '.join(obs.states)}")


def as_observations(source, *, states: Sequence[str] | None = None) -> Observations:
    """Observations from an :class:`Observations`, a dict of columns or a Trajectory."""
    if isinstance(source, Observations):
        return source if states is None else select(source, states)
    if isinstance(source, Mapping):
        return from_dict(source, states=states)
    if hasattr(source, "ts") and hasattr(source, "ys") and hasattr(source, "state_names"):
        obs = Observations(np.asarray(source.ts), np.asarray(source.ys), source.state_names)
        return obs if states is None else select(obs, states)
    raise TypeError(f"cannot make observations from a {type(source).__name__}: pass an "
                    "Observations, a dict of columns or a Trajectory (read a .csv or .h5 file "
                    "with difflab.io.read_observations)")
