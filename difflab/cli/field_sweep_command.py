"""``difflab sweep FIELD_MODEL --param F=0.02:0.06:5 --out sweep.h5``: a field model swept
over a grid of parameter values from the command line, with a progress bar, saved with
``difflab.io.save`` (observables over the parameters, final fields over them and the
grid's axes: ``docs/fields.md``)."""

import json
import math
import re
import signal
import sys
import time
from pathlib import Path

import numpy as np

import difflab as dl

from .config_file import one_line
from .errors import EXIT_INTERRUPTED, UsageError
from .field_command import _on_grid, is_field_model


def _values(text: str) -> tuple[str, np.ndarray]:
    """``"F=0.02:0.06:5"`` as ``("F", linspace(0.02, 0.06, 5))``."""
    name, _, spec = text.partition("=")
    parts = spec.split(":")
    try:
        start, stop, n = float(parts[0]), float(parts[1]), int(parts[2])
        ok = len(parts) == 3 and n >= 1 and math.isfinite(start) and math.isfinite(stop)
    except (ValueError, IndexError):
        ok = False
    if not ok or not name.strip():
        raise UsageError(f"--param expects NAME=START:STOP:N, e.g. F=0.02:0.06:5; "
                         f"not {text!r}")
    return name.strip(), np.linspace(start, stop, n)


def _observables(texts, model) -> dict:
    """``{name: spec}`` of the ``--observable`` options (default: each field's mean)."""
    texts = texts or [f"mean({f})" for f in model.field_names]
    out = {}
    for text in texts:
        name, sep, spec = text.partition("=")
        if not sep:  # mean(u) is named mean_u
            name, spec = re.sub(r"\W+", "_", text).strip("_"), text
        out[name.strip()] = spec
    return out


def _model(args):
    try:
        model = dl.models.resolve(args.config)()
    except (ValueError, KeyError, TypeError) as error:
        raise UsageError(f"{args.config}: {one_line(error)}") from None
    if not is_field_model(model):
        raise UsageError(f"--param sweeps a field model; {args.config} is not one (an ODE "
                         f"model's sweep is described in a TOML file: docs/sweeps.md)")
    model = _on_grid(model, args)
    for name, value in args.params:
        try:
            model = model.replace(**{name: value})
        except (ValueError, TypeError) as error:
            raise UsageError(f"--set {name}: {one_line(error)}") from None
    return model


class _Bar:
    """The sweep's progress bar, shown from the first chunk's end: a value refused before
    the sweep runs is then the only line on stderr."""

    def __init__(self, meter, total: int, done: int = 0):
        self.meter, self.shown = meter, False
        meter.begin(total, done)  # the clock of points/s starts now

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.shown:
            self.meter.__exit__(*exc)

    def __call__(self, chunk) -> None:
        if not self.shown:
            self.meter.__enter__()
            self.shown = True
        self.meter(chunk)


def sweep_field_model(args, meter_class) -> int:
    """Run the sweep (the points an interrupted run of the same command left, where
    ``--out`` holds one), save it to ``--out``, print one line of summary (or JSON)."""
    model = _model(args)
    space = dl.grid(dict(map(_values, args.param)))
    observables = _observables(args.observable, model)
    name, earlier = _unfinished(args, model, space, observables)
    todo = np.arange(len(space)) if earlier is None else np.flatnonzero(earlier.result < 0)
    dt = args.dt if earlier is None else earlier.settings["dt"]
    start = time.perf_counter()
    try:
        with dl.io.writing(args.out), _Bar(meter_class(args.quiet), len(space),
                                           len(space) - len(todo)) as bar:
            res = dl.sweep(model, _rows(space, todo), args.t1, dt=dt, observables=observables,
                           chunk_size=args.chunk_size, devices=args.devices, progress=bar)
    except dl.solvers.FieldSweepInterrupted as stopped:
        partial = _merged(space, todo, earlier, stopped.partial)
        return _save_interrupted(args, name, partial, replace=earlier is not None)
    except (ValueError, TypeError, dl.io.SessionFileError) as error:
        raise UsageError(one_line(error)) from None
    res = _merged(space, todo, earlier, res)
    try:
        name = dl.io.save(args.out, res, name=name,
                          overwrite=args.overwrite or earlier is not None)
    except (ValueError, dl.io.SessionFileError) as error:
        raise UsageError(one_line(error)) from None
    stats = {"name": name, "out": args.out, "points": len(res),
             "failed": int((res.result != 0).sum()), "seconds": time.perf_counter() - start}
    if args.json:
        print(json.dumps(stats, sort_keys=True))
    else:
        print(f"{name} in {args.out}: {stats['points']} points, {stats['failed']} failed; "
              f"{stats['seconds']:.2f} s", file=sys.stderr)
    return 0


def _unfinished(args, model, space, observables) -> tuple:
    """``(name, sweep)``: the incomplete field sweep in ``--out`` that this command
    started (its model, grid, points, t1 and observables; ``--name`` if given), to
    finish; ``(--name, None)`` where there is none."""
    if args.overwrite or not Path(args.out).is_file():
        return args.name, None
    try:
        sweeps = dl.open(args.out).sweeps
        names = [n for n in sweeps.names() if args.name in (None, n)]
        for name in reversed(names):  # the latest first
            res = sweeps[name]
            if _same_sweep(res, model, space, observables, args):
                return name, res
    except dl.io.SessionFileError:
        pass  # not a session DiffLab can read: saving to it says why
    return args.name, None


def _same_sweep(res, model, space, observables, args) -> bool:
    if not isinstance(res, dl.solvers.FieldSweepResult) or res.complete or res.model is None:
        return False
    ours, theirs = model.parameters(), res.model.parameters()
    return (type(res.model) is type(model) and res.model.grid == model.grid
            and all(np.array_equal(ours[k], theirs[k]) for k in ours if k not in space.names)
            and res.space.names == space.names and res.space.shape == space.shape
            and all(np.array_equal(res.space[c], space[c]) for c in space.names)
            and res.settings.get("t1") == args.t1 and res.specs == observables
            and (args.dt is None or res.settings.get("dt") == args.dt))


def _rows(space, rows: np.ndarray):
    """The points ``rows`` of ``space`` (all of them: the space itself)."""
    if len(rows) == len(space):
        return space
    return dl.solvers.Space({c: space[c][rows] for c in space.names}, (len(rows),))


def _merged(space, rows, earlier, res):
    """``res``, a sweep of the points ``rows`` of ``space``, laid over ``earlier`` (an
    interrupted sweep of all of them), or ``res`` itself where there was none."""
    if earlier is None:
        return res
    observables = {k: v.copy() for k, v in earlier.observables.items()}
    final = {k: v.copy() for k, v in earlier.final.items()}
    result = earlier.result.copy()
    for name, values in res.observables.items():
        observables[name][rows] = values
    for name, values in res.final.items():
        final[name][rows] = values
    result[rows] = res.result
    return dl.solvers.FieldSweepResult(space, observables, final, result, res.model,
                                       earlier.settings, earlier.specs)


def _save_interrupted(args, name, partial, replace: bool) -> int:
    """Save the points an interrupted sweep did (the others marked not run, -1), over the
    sweep it went on with if ``replace``; a second Ctrl-C waits for the save."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        name = dl.io.save(args.out, partial, name=name, overwrite=args.overwrite or replace)
    finally:
        signal.signal(signal.SIGINT, previous)
    done = int((partial.result >= 0).sum())
    print(f"difflab: interrupted after {done} of {len(partial)} points; they are saved in "
          f"{args.out} (/sweeps/{name}), the others marked not run (result -1): run the same "
          f"command again to finish it", file=sys.stderr)
    return EXIT_INTERRUPTED
