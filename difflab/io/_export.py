"""Results to CSV and NumPy ``.npz``; one run into a session file."""

import contextlib
import csv
import dataclasses
import errno
import json
import os

import numpy as np

from .._version import __version__
from ..solvers import FitResult, Sensitivity, SweepResult, Trajectory
from ._models import ModelRecord, record_of
from ._writer import write_session

SWEEP_ROWS = 1 << 16  # rows of a sweep read at a time while writing CSV


def save_run(path: str | os.PathLike, traj, *, model=None, settings: dict | None = None,
             key=None, name: str | None = None, overwrite: bool = False, compress: bool = False,
             command_line: str | None = None, fit: str | None = None) -> str:
    """Add one run to a session file (made if absent), atomically; returns the run's name.

    Everything already in the file is kept. A trajectory of ``simulate`` knows its model
    and settings; ``model``, ``settings`` (``simulate``'s keyword arguments) and ``key``
    override them. A ``name`` already in the file needs ``overwrite=True``. ``fit``: the
    run is the one the fit of that name (in the file) kept, stored as ``<fit>_run``.
    """
    with write_session(path, overwrite=overwrite, compress=compress,
                       command_line=command_line) as session:
        if fit is not None:
            return session.add_run_of("fits", fit, traj, model=model, settings=settings,
                                      key=key)
        return session.add_run(traj, model=model, settings=settings, key=key, name=name)


def _plain(value):
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value.item() if isinstance(value, np.generic) else value


def _arrays(prefix: str, value, arrays: dict, plain: dict) -> None:
    """Numbers and names of ``value`` into ``arrays``; small scalars and text into ``plain``."""
    if isinstance(value, dict):
        for key, item in value.items():
            _arrays(f"{prefix}.{key}", item, arrays, plain)
    elif isinstance(value, (str, bool, int, float, np.generic)) or value is None:
        plain[prefix] = _plain(value)
    elif isinstance(value, (tuple, list)) and all(isinstance(v, str) for v in value):
        arrays[prefix] = np.array(value, dtype=str)
    elif hasattr(value, "shape") or isinstance(value, (tuple, list)):
        arrays[prefix] = np.asarray(value)


def _refuse_existing(path, overwrite: bool) -> None:
    """A file already at ``path`` is replaced only with ``overwrite=True``; a session never."""
    if not os.path.lexists(path):
        return
    if not overwrite:
        raise FileExistsError(errno.EEXIST, "a file is already there; it is not replaced unless "
                              "you ask to (overwrite=True, --overwrite)", os.fspath(path))
    head = b""
    with contextlib.suppress(OSError):  # non-blocking: a FIFO there does not hang us
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        try:
            head = os.read(fd, 8)
        finally:
            os.close(fd)
    if head == b"\x89HDF\r\n\x1a\n":
        raise FileExistsError(errno.EEXIST, "an HDF5 file is there (perhaps a session); "
                              "an export never replaces one", os.fspath(path))


def _create(path, overwrite: bool):
    """A new text file at ``path`` (``x`` mode: created here, unless ``overwrite``)."""
    _refuse_existing(path, overwrite)
    return open(path, "w" if overwrite else "x", newline="")


def export_npz(result, path: str | os.PathLike, *, overwrite: bool = False) -> None:
    """Write a result's arrays to ``.npz`` (a Trajectory, SweepResult, FitResult, Sensitivity).

    Each array field becomes an array (dicts as ``field.key``), names unicode arrays,
    and the scalar fields one JSON string (``attrs``), so ``np.load(path)`` reads it with
    ``allow_pickle=False``. An existing file is replaced only with ``overwrite=True``,
    and never an HDF5 file (a session).
    """
    _refuse_existing(path, overwrite)
    arrays, plain = {}, {}
    for field in dataclasses.fields(result):
        value = getattr(result, field.name)
        if field.name in ("model", "start_model", "space", "settings", "data", "stats"):
            continue
        _arrays(field.name, value, arrays, plain)
    if isinstance(result, SweepResult):
        _arrays("parameters", result.space.columns, arrays, plain)
    arrays["attrs"] = np.array(json.dumps(plain))
    with open(path, "wb" if overwrite else "xb") as f:  # x: made here, never replaced
        np.savez(f, **arrays)


def csv_header(result=None, *, model=None, settings=None) -> list[str]:
    """The ``#`` lines that open an exported CSV: the DiffLab version, the model, its
    parameters and the solver settings (``model`` and ``settings`` default to the
    result's). Readers skip them (``numpy.loadtxt``, ``pandas.read_csv(comment="#")``)."""
    model = model if model is not None else getattr(result, "model", None)
    settings = settings if settings is not None else getattr(result, "settings", None)
    lines = [f"# DiffLab {__version__}"]
    if model is not None:
        record = model if isinstance(model, ModelRecord) else record_of(model)
        params = ", ".join(f"{k}={float(v)!r}" for k, v in record.parameters.items())
        lines += [f"# model: {record.name}", f"# parameters: {params or 'none'}"]
    if settings is not None:
        values = settings.as_dict() if hasattr(settings, "as_dict") else dict(settings)
        lines.append("# settings: " + ", ".join(
            f"{k}={_setting(v)}" for k, v in values.items() if _shown_setting(k, v)))
    return lines


def _shown_setting(key: str, value) -> bool:
    """Settings worth a header line: not the key, not a long initial state."""
    if key == "key" or (key == "optimize" and value):
        return False
    return not (isinstance(value, (list, tuple)) and len(value) > 16)


def _setting(value) -> str:
    if isinstance(value, (list, tuple)):
        return "[" + " ".join(_setting(v) for v in value) + "]"
    return repr(value) if isinstance(value, float) else str(value)


def export_csv(result, path: str | os.PathLike, *, overwrite: bool = False) -> None:
    """Write a result as CSV, opened by the ``#`` lines of :func:`csv_header`.

    A run (:class:`Trajectory`): ``t,<states>``. A sweep: one row per point and time,
    ``point,<parameters>,result,t,<states>``. A fit: ``step,loss,<parameters>``. A
    sensitivity: ``t,state,<parameters>`` (or ``parameter,gradient``). An existing file
    is replaced only with ``overwrite=True``, and never an HDF5 file (a session).
    """
    rows = {Trajectory: _run_rows, SweepResult: _sweep_rows, FitResult: _fit_rows,
            Sensitivity: _sensitivity_rows}.get(type(result))
    if rows is None:
        raise TypeError(f"cannot export a {type(result).__name__} as CSV")
    with _create(path, overwrite) as f:
        f.writelines(line + "\n" for line in csv_header(result))
        rows(csv.writer(f), result)


def _run_rows(writer, run) -> None:
    writer.writerow(["t", *run.state_names])
    writer.writerows(np.column_stack([np.asarray(run.ts), np.asarray(run.ys)]).tolist())


def _sweep_rows(writer, sweep) -> None:
    names = [n for n in sweep.space.names if n != "y0"]
    ts = np.asarray(sweep.ts)
    writer.writerow(["point", *names, "result", "t", *sweep.state_names])
    per_block = max(1, SWEEP_ROWS // max(1, len(ts)))
    n = len(sweep)
    for start in range(0, n, per_block):
        stop = min(start + per_block, n)
        params = np.column_stack([sweep.space[c][start:stop] for c in names]) if names else (
            np.zeros((stop - start, 0)))
        ys, results = np.asarray(sweep.y[start:stop]), np.asarray(sweep.result[start:stop])
        for i in range(stop - start):
            head = [start + i, *params[i].tolist(), int(results[i])]
            writer.writerows([*head, t, *y] for t, y in zip(ts.tolist(), ys[i].tolist()))


def _fit_rows(writer, fit) -> None:
    writer.writerow(["step", "loss", *fit.names])
    loss, params = np.asarray(fit.loss_history), np.asarray(fit.parameter_history)
    writer.writerows([i, l, *p] for i, (l, p) in enumerate(zip(loss.tolist(), params.tolist())))


def _sensitivity_rows(writer, sens) -> None:
    if sens.raw is None:
        writer.writerow(["parameter", "gradient"])
        writer.writerows(zip(sens.parameters, np.asarray(sens.gradient).tolist()))
        return
    writer.writerow(["t", "state", *sens.parameters])
    ts, d = np.asarray(sens.ts), np.asarray(sens.raw)
    for i, t in enumerate(ts.tolist()):
        writer.writerows([t, s, *d[i, j].tolist()] for j, s in enumerate(sens.state_names))
