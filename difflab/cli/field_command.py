"""``difflab run`` for field models (models on grids), and how ``difflab models`` lists them."""

import time
from pathlib import Path

import numpy as np
from rich.markup import escape

import difflab as dl

from .background import in_background
from .errors import EXIT_FAILED, UsageError, printable


def is_field_model(model) -> bool:
    return isinstance(model, dl.models.AbstractFieldModel)


def describe_fields(model) -> str:
    """``"u, v on a 128x128 grid"`` (``"u on a 50-point grid"`` on a line)."""
    return f"{', '.join(model.field_names)} on a {model.grid.size_text} grid"


def _on_grid(model, args):
    if args.grid is None:
        return model
    if not is_field_model(model):
        raise UsageError(f"--grid sets the points of a field model's grid; "
                         f"{type(model).__name__} has no grid")
    try:
        return model.with_points(args.grid)
    except ValueError as error:
        raise UsageError(f"--grid: {error}") from None


def _check_options(args, out: Path | None) -> None:
    if args.y0 is not None:
        raise UsageError("--y0 is an ODE model's initial state; a field model starts from "
                         "its initial fields")
    if out is not None and out.suffix == ".csv":
        raise UsageError("a field run is saved in a session file (.h5), not a .csv")


def run_fields(model, args, out: Path | None, writing) -> int:
    """``difflab run FIELD_MODEL``: simulate, save to ``out`` (a session file) with
    ``difflab.io.save_fields``, and print each field's range at the end."""
    model = _on_grid(model, args)
    _check_options(args, out)
    settings = dict(t0=args.t0, dt=args.dt, solver=args.solver, n_save=args.n_save,
                    rtol=args.rtol, atol=args.atol, max_steps=args.max_steps)
    name = type(model).registry_name or type(model).__name__
    with writing(out, args.name, args.overwrite):
        start = time.perf_counter()
        try:
            if out is None:
                traj = in_background(dl.simulate, model, args.t1, **settings)
            else:
                traj = _stream(model, args, out, settings)
        except (ValueError, TypeError) as error:
            raise UsageError(str(error)) from None
        except dl.SimulationError as error:  # names the field, the time and the point
            kept = f"; the frames before it are in {out}" if out is not None else ""
            _note(f"difflab: {name} failed: {error}{kept}")
            return EXIT_FAILED
        seconds = time.perf_counter() - start
    _report(model, traj, seconds)
    return 0


#: bytes of frames a chunk of a run streamed to a file holds at most
CHUNK_BYTES = 64 * 2**20
MAX_CHUNK_FRAMES = 10


def _stream(model, args, out: Path, settings: dict):
    """Stream the run into ``out`` chunk by chunk (``difflab.stream`` into
    ``difflab.io.field_writer``), with a progress bar of frames; returns the run's last
    frame as a ``FieldTrajectory``."""
    frame = 8 * len(model.field_names) * int(np.prod(model.grid.shape, dtype=np.float64))
    size = max(1, min(MAX_CHUNK_FRAMES, CHUNK_BYTES // frame))
    chunks = dl.stream(model, args.t1, chunk_size=size, **settings)
    chunk = in_background(next, chunks)  # the checks: a bad value raises here
    recorded = dict(chunk.settings)
    try:
        with dl.io.field_writer(out, model, name=args.name, settings=recorded,
                                overwrite=args.overwrite, compress=args.compress) as writer:
            with _Bar(chunk.total) as bar:
                while chunk is not None:
                    writer.append(chunk.ts, chunk.ys)
                    bar(len(chunk.ts))
                    last, chunk = chunk, _next_chunk(chunks)
    except ValueError as error:  # a --name the file cannot hold; nothing was written
        raise UsageError(f"--name: {error}") from None
    _note(f"saved {out} (/runs/{writer.name})")
    final = {n: u[-1:] for n, u in last.ys.items()}
    return dl.solvers.FieldTrajectory(last.ts[-1:], final, model.grid, recorded["solver"],
                                      last.result, model)


def _next_chunk(chunks):
    """The next chunk of the run, or ``None`` at its end; what the run refuses is bad
    input, not the file's (``--name``)."""
    try:
        return in_background(next, chunks, None)
    except (ValueError, TypeError) as error:
        raise UsageError(str(error)) from None


class _Bar:
    """A progress bar of frames on stderr."""

    def __init__(self, total: int):
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self.progress = Progress(TextColumn("frames"), BarColumn(), MofNCompleteColumn(),
                                 console=Console(stderr=True, highlight=False),
                                 transient=True)
        self.task = self.progress.add_task("frames", total=total)

    def __enter__(self):
        self.progress.start()
        return self

    def __exit__(self, *exc):
        self.progress.stop()

    def __call__(self, frames: int) -> None:
        self.progress.update(self.task, advance=frames)


def _note(text: str) -> None:
    from rich.console import Console

    Console(stderr=True, highlight=False).print(escape(printable(text)), soft_wrap=True)


def _report(model, traj, seconds: float) -> None:
    name = type(model).registry_name or type(model).__name__
    ranges = "; ".join(f"{n} in [{np.min(u):.6g}, {np.max(u):.6g}], mean {np.mean(u):.6g}"
                       for n, u in ((n, np.asarray(u)) for n, u in traj.final.items()))
    print(f"t={float(traj.ts[-1]):g}: {ranges}")
    _note(f"{name}: {describe_fields(model)}, {traj.solver}, {seconds:.3f} s")
