"""Trajectories and stored results to CSV and NumPy ``.npz``; one run into a session file."""

import csv
import json
import os

import numpy as np

from ._writer import write_session

SWEEP_ROWS = 1 << 16  # rows of a sweep read at a time while writing CSV


def write_csv(path: str | os.PathLike, traj) -> None:
    """Write a trajectory as CSV: a header ``t,<state>,...`` then one row per saved time."""
    rows = np.column_stack([np.asarray(traj.ts), np.asarray(traj.ys)])
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["t", *traj.state_names])
        writer.writerows(rows.tolist())


def save_run(path: str | os.PathLike, traj, *, model=None, settings: dict | None = None,
             key=None, name: str | None = None, overwrite: bool = False, compress: bool = False,
             command_line: str | None = None) -> str:
    """Add one run to a session file (made if absent), atomically; returns the run's name.

    Everything already in the file is kept. A trajectory of ``simulate`` knows its model
    and settings; ``model``, ``settings`` (``simulate``'s keyword arguments) and ``key``
    override them. A ``name`` already in the file needs ``overwrite=True``.
    """
    with write_session(path, overwrite=overwrite, compress=compress,
                       command_line=command_line) as session:
        return session.add_run(traj, model=model, settings=settings, key=key, name=name)


def _plain(value):
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value.item() if isinstance(value, np.generic) else value


def export_npz(result, path: str | os.PathLike) -> None:
    """Write a stored result's variables (and its data group) to ``.npz``.

    Names become unicode arrays and the attributes one JSON string (``attrs``), so
    ``np.load(path)`` reads it with ``allow_pickle=False``.
    """
    arrays = {}
    for prefix, variables in (("", result.variables),
                              *((f"{g}.", v) for g, v in result.groups.items())):
        for name, var in variables.items():
            data = var.data
            arrays[prefix + name] = (np.array(data, dtype=str) if isinstance(data, list)
                                     else np.asarray(data))
    arrays["attrs"] = np.array(json.dumps({k: _plain(v) for k, v in result.attrs.items()}))
    np.savez(path, **arrays)


def export_csv(result, path: str | os.PathLike) -> None:
    """Write a stored result as CSV.

    A run: ``t,<states>``. A sweep: one row per point and time,
    ``point,<parameters>,result,t,<states>``. A fit: ``step,loss,<parameters>``. A
    sensitivity: ``parameter,gradient`` or ``t,state,<parameters>``.
    """
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        {"runs": _run_rows, "sweeps": _sweep_rows, "fits": _fit_rows,
         "sensitivities": _sensitivity_rows}[result.kind](writer, result)


def _run_rows(writer, run) -> None:
    writer.writerow(["t", *run.state_names])
    writer.writerows(np.column_stack([np.asarray(run.time), np.asarray(run.y)]).tolist())


def _sweep_rows(writer, sweep) -> None:
    names, ts = sweep.parameter_names, np.asarray(sweep.time)
    writer.writerow(["point", *names, "result", "t", *sweep.state_names])
    per_block = max(1, SWEEP_ROWS // max(1, len(ts)))
    for start in range(0, sweep.n_points, per_block):
        stop = min(start + per_block, sweep.n_points)
        params, ys = np.asarray(sweep.parameters[start:stop]), np.asarray(sweep.y[start:stop])
        results = np.asarray(sweep.result[start:stop])
        for i in range(stop - start):
            head = [start + i, *params[i].tolist(), int(results[i])]
            writer.writerows([*head, t, *y] for t, y in zip(ts.tolist(), ys[i].tolist()))


def _fit_rows(writer, fit) -> None:
    writer.writerow(["step", "loss", *fit.parameter_names])
    loss, params = np.asarray(fit.loss), np.asarray(fit.parameters)
    writer.writerows([i, l, *p] for i, (l, p) in enumerate(zip(loss.tolist(), params.tolist())))


def _sensitivity_rows(writer, sens) -> None:
    names = sens.parameter_names
    if sens.dy_dp is None:
        writer.writerow(["parameter", "gradient"])
        writer.writerows(zip(names, np.asarray(sens.gradient).tolist()))
        return
    writer.writerow(["t", "state", *names])
    ts, d = np.asarray(sens.time), np.asarray(sens.dy_dp)
    for i, t in enumerate(ts.tolist()):
        writer.writerows([t, s, *d[i, j].tolist()] for j, s in enumerate(sens.state_names))
