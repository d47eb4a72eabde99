"""Observations to fit: measured times and values of some states, with noise levels.

Read them from CSV (``read_csv``) or HDF5 (``read_observations("data.h5")``); the
in-memory forms (a dict of columns, a :class:`difflab.Trajectory`) pass through
``difflab.solvers.as_observations``. Missing values are NaN (an empty CSV cell).

CSV layout: a header, then one row per time::

    t,prey,predator,sigma_prey,sigma_predator
    0.0,10.3,9.8,0.5,0.5

The time column is ``t`` or ``time``; a column ``sigma_<state>`` (or ``<state>_sigma``)
gives the standard deviation of each value of ``<state>``.
"""

import csv
import io
import os
from collections.abc import Sequence

import numpy as np

from ..models import read_bounded_text
from ..solvers import Observations, as_observations
from ._netcdf import labels

# -- readers --------------------------------------------------------------------------


def read_csv(path: str | os.PathLike, *, states: Sequence[str] | None = None) -> Observations:
    """Observations from a CSV file: a ``t`` (or ``time``) column, one column per state,
    optional ``sigma_<state>`` columns; empty cells are missing values.

    ``states`` picks the state columns to keep (default: every other column).
    """
    text = read_bounded_text(path)  # a regular file of at most 64 MiB: no device, no FIFO
    rows = [row for row in csv.reader(io.StringIO(text, newline=""))
            if row and not row[0].lstrip().startswith("#")]
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
    return as_observations(dict(zip(header, values.T)), states=states)


def _number(cell: str) -> float:
    cell = cell.strip()
    if cell == "" or cell.lower() in ("nan", "na"):
        return np.nan
    try:
        return float(cell)
    except ValueError:
        raise ValueError(f"{cell!r} is not a number") from None


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
        time_key = next((k for k in Observations.TIME_NAMES if k in g), None)
        if time_key is None or "y" not in g or "state" not in g:
            raise ValueError(f"{os.fspath(path)}:{g.name} has no time, state and y datasets")
        names = [s.decode() if isinstance(s, bytes) else str(s) for s in labels(g["state_name" if "state_name" in g else "state"][()])]
        y = np.asarray(g["y"][()], dtype=np.float64)
        sigma = np.asarray(g["sigma"][()], dtype=np.float64) if "sigma" in g else None
        t = np.asarray(g[time_key][()], dtype=np.float64)
    obs = Observations(t, y, tuple(names), sigma)
    return as_observations(obs, states=states)


def _default_group(f, path):
    if any(k in f for k in Observations.TIME_NAMES):
        return f
    runs = f.get("runs")
    if runs is not None and len(runs):
        return runs[sorted(runs)[0]]
    raise ValueError(f"{os.fspath(path)}: no observations found; pass group='path/in/file'")


def read_observations(source, *, states: Sequence[str] | None = None,
                      group: str | None = None) -> Observations:
    """Observations from whatever holds them: an :class:`Observations`, a dict of columns,
    a :class:`difflab.Trajectory`, a ``.csv`` file, or an HDF5 file (``.h5``/``.hdf5``)."""
    if isinstance(source, (str, os.PathLike)):
        suffix = os.path.splitext(os.fspath(source))[1].lower()
        if suffix == ".csv":
            return read_csv(source, states=states)
        if suffix in (".h5", ".hdf5"):
            return read_observations_h5(source, group=group, states=states)
        raise ValueError(f"observations must be a .csv, .h5 or .hdf5 file, not {os.fspath(source)!r}")
    return as_observations(source, states=states)


def write_observations_csv(path: str | os.PathLike, obs: Observations, *,
                           digits: int = 6) -> None:
    """Write observations as CSV in the layout ``read_csv`` reads (NaN as empty cells)."""
    columns = obs.to_dict()
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(list(columns))
        for row in np.column_stack(list(columns.values())):
            writer.writerow(["" if not np.isfinite(v) else f"{v:.{digits}g}" for v in row])
