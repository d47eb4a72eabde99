"""Observations to fit: measured times and values of some states, with noise levels.

Read them from CSV (``read_csv``), HDF5 (``read_observations("data.h5")``), a dict of
arrays (``{"t": ts, "prey": ..., "predator": ...}``), a :class:`difflab.Trajectory`, or
arrays. Missing values are NaN (an empty CSV cell); they are left out of a fit.

CSV layout: a header, then one row per time::

    t,prey,predator,sigma_prey,sigma_predator
    0.0,10.3,9.8,0.5,0.5

The time column is ``t`` or ``time``; a column ``sigma_<state>`` (or ``<state>_sigma``)
gives the standard deviation of each value of ``<state>``.
"""

import csv
import dataclasses
import os
from collections.abc import Mapping, Sequence

import numpy as np

TIME_NAMES = ("t", "time")


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

    def __post_init__(self):
        t = np.asarray(self.t, dtype=np.float64).reshape(-1)
        y = np.asarray(self.y, dtype=np.float64)
        y = y.reshape(len(t), -1) if y.ndim == 1 else y
        states = tuple(str(s) for s in self.states)
        _check(t, y, states)
        sigma = None if self.sigma is None else _sigma_array(self.sigma, y.shape, states)
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
        sd = _sigma_array(sigma, self.y.shape, self.states)
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


def _sigma_array(sigma, shape, states) -> np.ndarray:
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


# -- readers --------------------------------------------------------------------------


def read_csv(path: str | os.PathLike, *, states: Sequence[str] | None = None) -> Observations:
    """Observations from a CSV file: a ``t`` (or ``time``) column, one column per state,
    optional ``sigma_<state>`` columns; empty cells are missing values.

    ``states`` picks the state columns to keep (default: every other column).
    """
    with open(path, newline="") as f:
        rows = [row for row in csv.reader(f) if row and not row[0].lstrip().startswith("#")]
    if len(rows) < 2:
        raise ValueError(f"{os.fspath(path)}: a CSV of observations needs a header and rows")
    header = [h.strip() for h in rows[0]]
    try:
        values = np.array([[_number(cell) for cell in row] for row in rows[1:]], dtype=float)
    except ValueError as error:
        raise ValueError(f"{os.fspath(path)}: {error}") from None
    if values.shape[1] != len(header):
        raise ValueError(f"{os.fspath(path)}: rows have {values.shape[1]} cells, "
                         f"the header {len(header)}")
    return from_dict(dict(zip(header, values.T)), states=states)


def _number(cell: str) -> float:
    cell = cell.strip()
    if cell == "" or cell.lower() in ("nan", "na"):
        return np.nan
    try:
        return float(cell)
    except ValueError:
        raise ValueError(f"{cell!r} is not a number") from None


def _sigma_key(name: str, columns) -> str | None:
    for key in (f"sigma_{name}", f"{name}_sigma"):
        if key in columns:
            return key
    return None


def from_dict(data: Mapping, *, states: Sequence[str] | None = None, sigma=None) -> Observations:
    """Observations from ``{"t": times, state: values, ..., "sigma_<state>": ...}``."""
    columns = dict(data)
    time_key = next((k for k in TIME_NAMES if k in columns), None)
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


def read_observations_h5(path: str | os.PathLike, *, group: str | None = None,
                         states: Sequence[str] | None = None) -> Observations:
    """Observations from an HDF5 group holding ``time`` (or ``t``), ``state`` names and
    ``y`` (time, state), and optionally ``sigma``: a run of a DiffLab session file
    (default: the first of ``/runs``), the ``data`` of a fit, or any such group.
    Only datasets are read; nothing in the file is executed.
    """
    import h5py  # imported on use (slow to import)

    with h5py.File(path, "r") as f:
        g = f[group] if group is not None else _default_group(f, path)
        time_key = next((k for k in TIME_NAMES if k in g), None)
        if time_key is None or "y" not in g or "state" not in g:
            raise ValueError(f"{os.fspath(path)}:{g.name} has no time, state and y datasets")
        names = [s.decode() if isinstance(s, bytes) else str(s) for s in g["state"][()]]
        y = np.asarray(g["y"][()], dtype=np.float64)
        sigma = np.asarray(g["sigma"][()], dtype=np.float64) if "sigma" in g else None
        t = np.asarray(g[time_key][()], dtype=np.float64)
    obs = Observations(t, y, tuple(names), sigma)
    return obs if states is None else select(obs, states)


def _default_group(f, path):
    if any(k in f for k in TIME_NAMES):
        return f
    runs = f.get("runs")
    if runs is not None and len(runs):
        return runs[sorted(runs)[0]]
    raise ValueError(f"{os.fspath(path)}: no observations found; pass group='path/in/file'")


def select(obs: Observations, states: Sequence[str]) -> Observations:
    """The observations of ``states`` only."""
    idx = [obs.states.index(s) if s in obs.states else _no_state(s, obs) for s in states]
    sigma = None if obs.sigma is None else obs.sigma[:, idx]
    return Observations(obs.t, obs.y[:, idx], tuple(states), sigma)


def _no_state(state, obs):
    raise ValueError(f"state {state!r} is not observed; observed: {', '.join(obs.states)}")


def read_observations(source, *, states: Sequence[str] | None = None,
                      group: str | None = None) -> Observations:
    """Observations from whatever holds them: an :class:`Observations`, a dict of columns,
    a :class:`difflab.Trajectory`, a ``.csv`` file, or an HDF5 file (``.h5``/``.hdf5``)."""
    if isinstance(source, Observations):
        return source if states is None else select(source, states)
    if isinstance(source, Mapping):
        return from_dict(source, states=states)
    if hasattr(source, "ts") and hasattr(source, "ys") and hasattr(source, "state_names"):
        obs = Observations(np.asarray(source.ts), np.asarray(source.ys), source.state_names)
        return obs if states is None else select(obs, states)
    if isinstance(source, (str, os.PathLike)):
        suffix = os.path.splitext(os.fspath(source))[1].lower()
        if suffix == ".csv":
            return read_csv(source, states=states)
        if suffix in (".h5", ".hdf5"):
            return read_observations_h5(source, group=group, states=states)
        raise ValueError(f"observations must be a .csv, .h5 or .hdf5 file, not {os.fspath(source)!r}")
    raise TypeError(f"cannot read observations from {type(source).__name__}; pass a dict, "
                    "a Trajectory, an Observations or a .csv/.h5 path")


def write_observations_csv(path: str | os.PathLike, obs: Observations, *,
                           digits: int = 6) -> None:
    """Write observations as CSV in the layout ``read_csv`` reads (NaN as empty cells)."""
    columns = obs.to_dict()
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(list(columns))
        for row in np.column_stack(list(columns.values())):
            writer.writerow(["" if not np.isfinite(v) else f"{v:.{digits}g}" for v in row])
