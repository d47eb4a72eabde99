"""What each CLI command does; the same functions serve the app and tests."""

import contextlib
from pathlib import Path

import jax
import numpy as np
from rich.console import Console
from rich.markup import escape
from rich.table import Table

import difflab as dl

from .background import in_background
from .errors import EXIT_FAILED, UsageError, printable
from .field_command import describe_fields, is_field_model, run_fields


def _out() -> Console:
    return Console(highlight=False)


def _err() -> Console:
    return Console(stderr=True, highlight=False)


def _model_class(name: str):
    """A model name, ``FILE.py:CLASS`` or ``FILE.eqn`` (errors: one line, with file and line)."""
    try:
        return dl.models.resolve(name)
    except ValueError as error:
        raise UsageError(str(error)) from None


def _format_params(cls) -> str:
    return ", ".join(
        f"{s.name}={s.default:g}" + (f" {s.unit}" if s.unit else "")
        for s in cls.parameter_specs().values()
    )


def _format_states(model, most: int = 6) -> str:
    names = model.state_names
    if len(names) <= most:
        return ", ".join(names)
    return f"{names[0]} ... {names[-1]} ({len(names)})"


def models(args) -> int:
    """``difflab models [NAME]``: the model table, or one model's parameters."""
    if args.name:
        return _model_detail(_model_class(args.name))
    table = Table(title="DiffLab models", title_justify="left")
    names = [*dl.models.available(), *dl.models.field_models()]
    table.add_column("model", no_wrap=True, min_width=max(map(len, names)))  # names whole
    for column in ("domain", "states", "parameters (defaults)"):
        table.add_column(column)
    for name in dl.models.available():
        try:
            cls = dl.models.get(name)
        except dl.models.PluginError as error:
            _err().print(escape(f"difflab: warning: {printable(error)}"), soft_wrap=True)
            continue
        table.add_row(name, cls.domain, _format_states(cls()), _format_params(cls))
    for name in dl.models.field_models():  # models on grids: their fields and grid
        cls = dl.models.get(name)
        table.add_row(name, cls.domain, describe_fields(cls()), _format_params(cls))
    _out().print(table)
    return 0


def _model_detail(cls) -> int:
    console = _out()
    name, about = (escape(printable(t)) for t in (cls.registry_name or cls.__name__,
                                                   cls.description))
    console.print(f"[bold]{name}[/]: {about}")
    model = cls()
    console.print(f"fields: {describe_fields(model)}" if is_field_model(model)
                  else f"states: {_format_states(model, most=12)}")
    table = Table()
    for column in ("parameter", "default", "bounds", "unit", "description"):
        table.add_column(column)
    for s in cls.parameter_specs().values():
        table.add_row(s.name, f"{s.default:g}", f"[{s.bounds[0]:g}, {s.bounds[1]:g}]",
                      s.unit, s.doc)
    console.print(table)
    return 0


def _build_model(args):
    cls = _model_class(args.model)
    try:
        return cls().replace(**dict(args.params))
    except (ValueError, TypeError) as error:  # TypeError: a user class that needs arguments
        raise UsageError(str(error).splitlines()[0]) from None


def run(args) -> int:
    """``difflab run MODEL``: one simulation, summarised or added to a session file."""
    model = _build_model(args)
    if args.out is not None and not args.out.strip():
        raise UsageError("--out is empty: give a file name ending in .csv, .h5 or .hdf5")
    out = Path(args.out) if args.out else None
    if out is not None and out.suffix not in (".csv", ".h5", ".hdf5"):
        raise UsageError(f"--out must end in .csv, .h5 or .hdf5, not {out.name!r}")
    if is_field_model(model) or args.grid is not None:
        return run_fields(model, args, out, _writing)
    settings = dict(t0=args.t0, dt=args.dt, solver=args.solver, n_save=args.n_save,
                    y0=args.y0, rtol=args.rtol, atol=args.atol, max_steps=args.max_steps)
    key = jax.random.key(args.key) if isinstance(model, dl.SDEModel) else None
    with _writing(out, args.name, args.overwrite):
        try:
            traj = in_background(dl.simulate, model, args.t1, key=key, throw=False,
                                 **settings)  # so that Ctrl-C stops it at once
        except (ValueError, TypeError) as error:
            raise UsageError(str(error)) from None
        if out is not None:  # first: a --name the file refuses is then the only line
            _save(out, traj, args)
        _report(model, traj)
    return 0 if traj.ok else EXIT_FAILED


@contextlib.contextmanager
def _writing(out: Path | None, name: str | None, overwrite: bool, kind: str = "runs"):
    """Hold the one-writer lock of ``out``, after checking it can be written, before computing.

    An existing file is replaced only with ``--overwrite``, unless it is a session to add to
    (that has no result of ``kind``, ``"runs"`` or ``"analyses"``, called ``name``).
    """
    if out is None:
        yield
        return
    try:
        with dl.io.writing(out):
            if out.exists() and not overwrite:
                _check_addable(out, name, kind)
            yield
    except dl.io.SessionFileError as error:
        raise UsageError(str(error)) from None


_A = {"runs": "a run", "analyses": "an analysis"}


def _check_addable(out: Path, name: str | None, kind: str = "runs") -> None:
    """``UsageError`` unless ``out`` is a session that has no result of ``kind`` called ``name``."""
    if out.suffix == ".csv":
        raise UsageError(f"{out} exists; --overwrite replaces it")
    try:
        session = dl.io.open_session(out)
    except dl.io.SessionFileError as error:
        if error.problem.startswith("is locked"):  # a healthy file: replacing it loses data
            raise UsageError(str(error)) from None
        raise UsageError(f"{error}; --overwrite replaces it") from None
    if name is not None and name in [s.name for s in session.stored(kind)]:
        raise UsageError(f"{out} already holds {_A[kind]} named {name!r}; choose another "
                         "--name or pass --overwrite to replace it")


def _report(model, traj) -> None:
    err = _err()
    name = type(model).registry_name or type(model).__name__
    if not traj.ok:
        err.print(escape(printable(f"difflab: {name} failed {_failed_when(traj)}: "
                                   f"{traj.message}")), soft_wrap=True)
        return
    final = ", ".join(f"{n}={v:.6g}" for n, v in zip(traj.state_names, np.asarray(traj.final)))
    print(f"t={float(traj.ts[-1]):g}: {final}")
    err.print(f"{name}: {int(traj.steps)} steps in {traj.wall_time:.3f} s")


def _failed_when(traj) -> str:
    """When a failed run broke down, as its saved states tell: the first one not finite."""
    ts, ys = np.asarray(traj.ts), np.asarray(traj.ys)
    broken = ~np.all(np.isfinite(ys), axis=-1)
    if not broken.any():
        return f"before t={ts[-1]:g}"
    i = int(np.argmax(broken))
    return f"at t={ts[0]:g}" if i == 0 else f"between t={ts[i - 1]:g} and t={ts[i]:g}"


def _save(out: Path, traj, args) -> None:
    if out.suffix == ".csv":
        try:
            dl.io.export_csv(traj, out, overwrite=args.overwrite)
        except FileExistsError as error:
            raise UsageError(f"{out}: {error.strerror}") from None
        _err().print(f"saved {out}")
        return
    seed = {"seed": args.key} if isinstance(traj.model, dl.SDEModel) else None
    try:
        name = dl.io.save_run(out, traj, settings=seed, name=args.name,
                              overwrite=args.overwrite, compress=args.compress)
    except ValueError as error:  # a --name the file cannot hold; nothing was written
        raise UsageError(f"--name: {error}") from None
    _err().print(f"saved {out} (/runs/{name})")


