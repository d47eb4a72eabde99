"""Trajectories to CSV and to a single-run HDF5 file."""

import csv
import os
from pathlib import Path

import numpy as np

from .._version import __version__


def write_csv(path: str | os.PathLike, traj) -> None:
    """Write a trajectory as CSV: a header ``t,<state>,...`` then one row per saved time."""
    rows = np.column_stack([np.asarray(traj.ts), np.asarray(traj.ys)])
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["t", *traj.state_names])
        writer.writerows(rows.tolist())


def write_run_h5(path: str | os.PathLike, traj, *, model, settings: dict) -> None:
    """Write one run to HDF5: ``/runs/run0`` with ``time`` and ``state`` dimension scales.

    ``settings`` (solver, t0, t1, dt, ...) are stored as attributes of the run group.
    """
    import h5py  # imported on use: it adds a third of a second to `import difflab`

    tmp = Path(path).with_name(Path(path).name + ".tmp")
    with h5py.File(tmp, "w") as f:
        f.attrs["difflab_version"] = __version__
        run = f.create_group("runs/run0")
        run.attrs["model"] = type(model).registry_name or type(model).__name__
        for name, value in model.parameters().items():
            run.attrs[f"param.{name}"] = float(value)
        for key, value in settings.items():
            if value is not None:
                run.attrs[key] = value
        run.attrs["result"] = int(np.max(np.asarray(traj.result)))
        time = run.create_dataset("time", data=np.asarray(traj.ts))
        time.attrs["units"] = "s"
        time.make_scale("time")
        state = run.create_dataset("state", data=np.array(traj.state_names, dtype="S"))
        state.make_scale("state")
        ys = run.create_dataset("y", data=np.asarray(traj.ys))
        ys.attrs["long_name"] = "state"
        ys.dims[0].attach_scale(time)
        ys.dims[1].attach_scale(state)
    with open(tmp, "rb+") as f:
        os.fsync(f.fileno())
    os.replace(tmp, path)
