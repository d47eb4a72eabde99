"""``difflab sweep FIELD_MODEL --param F=0.02:0.06:5 --out sweep.h5``: a field model swept
over a grid of parameter values from the command line, with a progress bar, saved with
``difflab.io.save`` (observables over the parameters, final fields over them and the
grid's axes: ``docs/fields.md``)."""

import json
import math
import re
import sys
import time

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

    def __init__(self, meter, total: int):
        self.meter, self.shown = meter, False
        meter.begin(total, 0)  # the clock of points/s starts now

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
    """Run the sweep, save it to ``--out``, print one line of summary (or JSON)."""
    model = _model(args)
    space = dl.grid(dict(map(_values, args.param)))
    observables = _observables(args.observable, model)
    start = time.perf_counter()
    try:
        with dl.io.writing(args.out), _Bar(meter_class(args.quiet), len(space)) as bar:
            res = dl.sweep(model, space, args.t1, dt=args.dt, observables=observables,
                           chunk_size=args.chunk_size, devices=args.devices, progress=bar)
    except dl.solvers.FieldSweepInterrupted as stopped:
        return _save_interrupted(args, stopped)
    except (ValueError, TypeError, dl.io.SessionFileError) as error:
        raise UsageError(one_line(error)) from None
    try:
        name = dl.io.save(args.out, res, name=args.name, overwrite=args.overwrite)
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


def _save_interrupted(args, stopped) -> int:
    """Save the points an interrupted sweep did (the others marked not run, -1)."""
    partial = stopped.partial
    name = dl.io.save(args.out, partial, name=args.name, overwrite=args.overwrite)
    print(f"difflab: {stopped}; they are saved in {args.out} (/sweeps/{name}), the others "
          f"marked not run (result -1)", file=sys.stderr)
    return EXIT_INTERRUPTED
