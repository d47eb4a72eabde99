"""The ``difflab`` command line: list models, run one, show devices.

Bad input prints one line on stderr and exits with status 2; a simulation that fails
exits with status 1.
"""

import argparse
import importlib
import sys

from .._version import __version__

EXIT_BAD_INPUT = 2
EXIT_FAILED = 1


class UsageError(Exception):
    """Bad input from the command line, shown as one line."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def _parameter_assignment(text: str) -> tuple[str, float]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise UsageError(f"--set expects NAME=VALUE, got {text!r}")
    try:
        return name.strip(), float(value)
    except ValueError:
        raise UsageError(f"--set {text}: {value!r} is not a number") from None


def _numbers(text: str) -> list[float]:
    try:
        return [float(v) for v in text.split(",")]
    except ValueError:
        raise UsageError(f"--y0 expects comma-separated numbers, got {text!r}") from None


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="difflab",
        description="DiffLab: simulate, sweep and fit differentiable physical models.",
        epilog="Run `difflab COMMAND --help` for the options of a command.",
    )
    parser.add_argument("--version", action="version", version=f"difflab {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    models = commands.add_parser("models", help="list the built-in models and their parameters")
    models.add_argument("name", nargs="?", help="show one model in detail")
    models.set_defaults(handler="difflab.app.commands:models")

    run = commands.add_parser(
        "run", help="simulate one model",
        description="Simulate one model and print its final state, or save the run.",
        epilog="example: difflab run lorenz --set rho=28 --t1 50 --dt 1e-3 --out run.h5",
    )
    run.add_argument("model", help="a model name from `difflab models`")
    run.add_argument("--set", dest="params", metavar="NAME=VALUE", action="append",
                     default=[], type=_parameter_assignment,
                     help="set a parameter (repeatable)")
    run.add_argument("--t0", type=float, default=0.0, help="start time (default 0)")
    run.add_argument("--t1", type=float, default=10.0, help="end time (default 10)")
    run.add_argument("--dt", type=float, default=None,
                     help="step size; the initial step for adaptive solvers "
                          "(default: (t1 - t0) / 1000 for fixed steps)")
    run.add_argument("--solver", default=None,
                     help="euler, heun, rk4, leapfrog, euler_maruyama, tsit5, dopri5, dopri8, "
                          "kvaerno5 (default rk4; euler_maruyama for SDEs)")
    run.add_argument("--n-save", type=int, default=None,
                     help="number of saved points (default: every step, at most 1001)")
    run.add_argument("--y0", type=_numbers, default=None, help="initial state, e.g. 1,0,0")
    run.add_argument("--rtol", type=float, default=1e-6, help="adaptive relative tolerance")
    run.add_argument("--atol", type=float, default=1e-9, help="adaptive absolute tolerance")
    run.add_argument("--seed", type=int, default=0, help="random seed for stochastic models")
    run.add_argument("--out", default=None, help="save the run to a .csv or .h5 file")
    run.set_defaults(handler="difflab.app.commands:run")

    devices = commands.add_parser("devices", help="show the JAX backend, its devices and the precision")
    devices.set_defaults(handler="difflab.app.commands:devices")
    return parser


def _handler(path: str):
    """The command function named ``"module:function"``, imported on use."""
    module, _, function = path.partition(":")
    return getattr(importlib.import_module(module), function)


def main(argv=None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return 0
        from ._compilation_cache import enable_compilation_cache

        enable_compilation_cache()
        return _handler(args.handler)(args)
    except UsageError as error:
        print(f"difflab: error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT


if __name__ == "__main__":
    sys.exit(main())
