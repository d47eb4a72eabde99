"""The ``difflab`` command line: list models, run one, show devices.

Bad input prints one line on stderr and exits with status 2; a simulation that fails
exits with status 1.
"""

import argparse
import importlib
import math
import os
import sys

from .._version import __version__
from .analysis_parsers import add_analysis_parsers
from .errors import (
    EXIT_BAD_INPUT,
    EXIT_BROKEN_PIPE,
    EXIT_INTERRUPTED,
    UsageError,
    leave,
    out_of_resources,
    printable,
)


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def _parameter_assignment(text: str) -> tuple[str, float]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise UsageError(f"--set expects NAME=VALUE, got {text!r}")
    try:
        number = float(value)
    except ValueError:
        raise UsageError(f"--set {text}: {value!r} is not a number") from None
    if not math.isfinite(number):
        raise UsageError(f"--set {text}: {value!r} is not a finite number")
    return name.strip(), number


def _numbers(text: str) -> list[float]:
    try:
        values = [float(v) for v in text.split(",")]
    except ValueError:
        raise UsageError(f"--y0 expects comma-separated numbers, got {text!r}") from None
    if not all(map(math.isfinite, values)):
        raise UsageError(f"--y0 expects finite numbers, got {text!r}")
    return values


def _grid_points(text: str) -> tuple[int, ...]:
    """``"64x64"`` as ``(64, 64)``: 1 to 3 positive whole numbers joined by ``x``."""
    parts = text.lower().split("x")
    if not 1 <= len(parts) <= 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise argparse.ArgumentTypeError(f"points per axis such as 128 or 64x64, not {text!r}")
    return tuple(int(p) for p in parts)


def _finite(text: str) -> float:
    """A float option's value: a finite number (argparse names the option)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid float value: {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def _tolerances(text: str):
    """``--atol``: one finite number, or one per state separated by commas."""
    values = [_finite(v) for v in text.split(",")]
    return values[0] if len(values) == 1 else tuple(values)


def _seed(text: str) -> int:
    """``--key``: an integer that fits in 64 bits."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if not -(2**63) <= value < 2**63:
        raise argparse.ArgumentTypeError(f"{text} does not fit in 64 bits")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="difflab",
        description="DiffLab: simulate, sweep and fit differentiable physical models.",
        epilog="Run `difflab COMMAND --help` for the options of a command.",
    )
    parser.add_argument("--version", action="version", version=f"difflab {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    models = commands.add_parser("models", help="list the built-in models and their parameters")
    models.add_argument("name", nargs="?",
                        help="show one model in detail (a name, FILE.py:CLASS or FILE.eqn)")
    models.set_defaults(handler="difflab.cli.commands:models")

    run = commands.add_parser(
        "run", help="simulate one model",
        description="Simulate one model and print its final state, or save the run.",
        epilog="example: difflab run lorenz --set rho=28 --t1 50 --dt 1e-3 --out run.h5",
    )
    run.add_argument("model", help="a model name from `difflab models`, a Python model file "
                                   "FILE.py:CLASS, or an equation file FILE.eqn")
    run.add_argument("--set", dest="params", metavar="NAME=VALUE", action="append",
                     default=[], type=_parameter_assignment,
                     help="set a parameter (repeatable)")
    run.add_argument("--t0", type=_finite, default=0.0, help="start time (default 0)")
    run.add_argument("--t1", type=_finite, default=10.0, help="end time (default 10)")
    run.add_argument("--dt", type=_finite, default=None,
                     help="step size; the initial step for adaptive solvers (default for "
                          "fixed steps: the automatic rule of docs/solvers.md, from the "
                          "model's stability and rtol, at most (t1 - t0) / 1000)")
    run.add_argument("--solver", default=None,
                     help="fixed steps: euler, heun, rk4, leapfrog, euler_maruyama; adaptive: "
                          "tsit5, dopri5, dopri8, bosh3, ralston; stiff: kvaerno3, kvaerno4, "
                          "kvaerno5 (default: the model's, else rk4; euler_maruyama for SDEs; "
                          "see docs/solvers.md)")
    run.add_argument("--n-save", type=int, default=None,
                     help="number of saved points (default: the automatic rule of "
                          "docs/solvers.md, enough per characteristic time of the model)")
    run.add_argument("--y0", type=_numbers, default=None, help="initial state, e.g. 1,0,0")
    run.add_argument("--grid", type=_grid_points, default=None, metavar="NxM",
                     help="field models: points per axis, e.g. 64x64 (default: the model's)")
    run.add_argument("--rtol", type=_finite, default=None,
                     help="relative tolerance of adaptive solvers (default 1e-6)")
    run.add_argument("--atol", type=_tolerances, default=None,
                     help="absolute tolerance of adaptive solvers: a number, or one per state "
                          "as 1e-8,1e-10,1e-8 (default 1e-9)")
    run.add_argument("--max-steps", type=int, default=None,
                     help="the most steps an adaptive solver may take (default 100000); "
                          "fixed steps may number a billion, or up to this")
    run.add_argument("--key", "--seed", dest="key", type=_seed, default=0,
                     help="stochastic models: the key is jax.random.key(KEY) (default 0)")
    run.add_argument("--out", default=None,
                     help="add the run to a session file (.h5; made if absent) or write a .csv")
    run.add_argument("--name", default=None, help="the run's name under /runs (default runN)")
    run.add_argument("--overwrite", action="store_true",
                     help="replace a run of the same --name, or an --out that is not a session")
    run.add_argument("--compress", action="store_true",
                     help="gzip + shuffle the results in an .h5 file (smaller, slower to write)")
    run.set_defaults(handler="difflab.cli.commands:run")

    devices = commands.add_parser(
        "devices", help="show the JAX backend, its devices and their memory, the precision",
        description="Show what JAX computes on: the platform, each device's kind and memory "
                    "(the host's for a CPU), the processes and the default precision.",
        epilog="example: difflab devices --json",
    )
    devices.add_argument("--json", action="store_true", help="print one JSON object")
    devices.set_defaults(handler="difflab.cli.devices_command:devices")

    trust = commands.add_parser(
        "trust", help="list, add or revoke trusted Python model files",
        description="Model files named in a session run only when trusted. Trusting a file "
                    "trusts its current content (sha256); editing it needs trusting again.",
    )
    trust.add_argument("files", nargs="*", metavar="FILE", help="Python model files to trust")
    trust.add_argument("--list", action="store_true", help="list the trusted contents")
    trust.add_argument("--revoke", metavar="FILE_OR_SHA256", action="append", default=[],
                       help="stop trusting a file's content or a sha256 (repeatable)")
    trust.set_defaults(handler="difflab.cli.trust_command:command")

    opened = commands.add_parser(
        "open", help="show what a session file (.h5) holds",
        description="Summarise a DiffLab session file: models, runs, sweeps, fits, "
                    "sensitivities, analyses and provenance. The file is only read, never "
                    "executed.",
        epilog="example: difflab open run.h5 --json",
    )
    opened.add_argument("path", help="a DiffLab session file")
    opened.add_argument("--json", action="store_true", help="print the summary as JSON")
    opened.set_defaults(handler="difflab.cli.open_command:open_session")

    gui = commands.add_parser(
        "gui", help="open the desktop app (the default with no command)",
        description="Open the DiffLab desktop app, optionally with a session file.",
        epilog="example: difflab gui run.h5",
    )
    gui.add_argument("session", nargs="?", default=None, help="a session file (.h5) to open")
    gui.set_defaults(handler="difflab.cli.gui_command:gui")

    sweep = commands.add_parser(
        "sweep", help="run a parameter sweep described by a TOML file",
        description="Simulate a model at every point of a parameter space, on every device, "
                    "streaming the results to an HDF5 file chunk by chunk. Running the same "
                    "command again continues an interrupted sweep. See docs/sweeps.md.",
        epilog="example: difflab sweep examples/sweep_lorenz.toml --out sweep.h5",
    )
    sweep.add_argument("config", nargs="?", default=None,
                       help="the sweep's TOML file, or a field model swept by --param")
    sweep.add_argument("--out", required=True, help="the HDF5 session file to write (.h5)")
    sweep.add_argument("--name", default=None, help="the sweep's group under /sweeps")
    sweep.add_argument("--resume", action="store_true",
                       help="continue the sweep in --out (its stored config if none is given)")
    sweep.add_argument("--overwrite", action="store_true",
                       help="start afresh, replacing a sweep of the same name")
    sweep.add_argument("--devices", type=int, default=None, help="use the first N devices")
    sweep.add_argument("--chunk-size", type=int, default=None, help="points per chunk")
    sweep.add_argument("--json", action="store_true", help="print the summary as JSON on stdout")
    sweep.add_argument("--quiet", action="store_true", help="no progress bar on stderr")
    sweep.add_argument("--distributed", action="store_true",
                       help="join a multi-process sweep (jax.distributed.initialize)")
    sweep.add_argument("--coordinator", default=None,
                       help="HOST:PORT of process 0 (default: $DIFFLAB_COORDINATOR or the "
                            "cluster's own, e.g. SLURM)")
    sweep.add_argument("--coordinator-timeout", type=float, default=None,
                       help="seconds to wait for the coordinator and the other processes "
                            "(default: $DIFFLAB_COORDINATOR_TIMEOUT or 120)")
    sweep.add_argument("--num-processes", type=int, default=None,
                       help="processes in all (default: $DIFFLAB_NUM_PROCESSES or the cluster's)")
    sweep.add_argument("--process-id", type=int, default=None,
                       help="this process's rank (default: $DIFFLAB_PROCESS_ID or the cluster's)")
    sweep.add_argument("--keep-shards", action="store_true",
                       help="multi-process: leave --out a virtual view of the per-process "
                            "shard files instead of copying them in")
    sweep.add_argument("--param", action="append", default=[], metavar="NAME=START:STOP:N",
                       help="field models: sweep a parameter over N values (repeatable: a grid)")
    sweep.add_argument("--observable", action="append", default=[], metavar="[NAME=]SPEC",
                       help="field models: a number per point, mean(u), max(u), min(u) or "
                            "norm(u) of a field at t1 (repeatable; default: mean of each)")
    sweep.add_argument("--grid", type=_grid_points, default=None, metavar="NxM",
                       help="field models: points per axis, e.g. 64x64 (default: the model's)")
    sweep.add_argument("--set", dest="params", metavar="NAME=VALUE", action="append",
                       default=[], type=_parameter_assignment,
                       help="field models: set a parameter (repeatable)")
    sweep.add_argument("--t1", type=_finite, default=10.0, help="field models: end time")
    sweep.add_argument("--dt", type=_finite, default=None, help="field models: step size")
    sweep.set_defaults(handler="difflab.cli.sweep_command:sweep")

    fit = commands.add_parser(
        "fit", help="fit a model to observations described by a TOML file",
        description="Fit a model's parameters to observed data (CSV or HDF5), streaming the "
                    "loss history to an HDF5 session file; prints the fitted values, standard "
                    "errors and correlations. See docs/fitting.md.",
        epilog="example: difflab fit examples/fit_lotka_volterra/fit.toml --out fit.h5",
    )
    fit.add_argument("config", help="the fit's TOML file")
    fit.add_argument("--out", required=True, help="the HDF5 session file to write (.h5)")
    fit.add_argument("--name", default=None, help="the fit's group under /fits")
    fit.add_argument("--devices", type=int, default=None,
                     help="lay the starts over the first N devices")
    fit.add_argument("--json", action="store_true", help="print the result as JSON on stdout")
    fit.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    fit.set_defaults(handler="difflab.cli.fit_command:fit")
    add_analysis_parsers(commands, _parameter_assignment, _finite)
    return parser


def _handler(path: str):
    """The command function named ``"module:function"``, imported on use."""
    module, _, function = path.partition(":")
    return getattr(importlib.import_module(module), function)


def main(argv=None) -> int:
    """Run the command line; returns the exit status.

    With ``argv`` left ``None`` (the process's own arguments) the process may end at once
    instead, where shutting down would crash (:func:`errors.leave`).
    """
    status = _main(argv)
    return status if argv is not None else leave(status)


def _main(argv) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command is None:  # `difflab` alone opens the app
            args = parser.parse_args(["gui"])
        return _handler(args.handler)(args)  # DiffLab turns the compilation cache on with JAX
    except UsageError as error:
        print(f"difflab: error: {printable(error)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("difflab: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `difflab ... | head`: the reader has all it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no error at exit
        return EXIT_BROKEN_PIPE
    except (MemoryError, OSError) as error:  # a full disk or memory: one line; others raise
        return out_of_resources(error)


if __name__ == "__main__":
    sys.exit(main())
