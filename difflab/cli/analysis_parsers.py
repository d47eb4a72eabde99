"""The parsers of ``difflab equilibria``, ``continue``, ``lyapunov`` and ``cycles``."""

import math

from .errors import UsageError


def _bounds(text: str) -> tuple[str, tuple[float, float]]:
    """``--box STATE=LO:HI``."""
    name, sep, rest = text.partition("=")
    lo, colon, hi = rest.partition(":")
    try:
        values = (float(lo), float(hi))
    except ValueError:
        values = None
    if not (sep and name.strip() and colon and values) or not all(map(math.isfinite, values)):
        raise UsageError(f"--box expects STATE=LO:HI with finite numbers, got {text!r}")
    if values[0] >= values[1]:
        raise UsageError(f"--box {text}: LO must be less than HI")
    return name.strip(), values


def _state_value(text: str) -> tuple[str, float]:
    """``--state NAME=VALUE``."""
    name, sep, value = text.partition("=")
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not (sep and name.strip()) or not math.isfinite(number):
        raise UsageError(f"--state expects NAME=VALUE with a finite number, got {text!r}")
    return name.strip(), number


def _common(parser, assignment) -> None:
    parser.add_argument("model", help="a model name from `difflab models`, a Python model file "
                                      "FILE.py:CLASS, or an equation file FILE.eqn")
    parser.add_argument("--set", dest="params", metavar="NAME=VALUE", action="append",
                        default=[], type=assignment, help="set a parameter (repeatable)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON on stdout")
    parser.add_argument("--out", default=None, metavar="FILE.h5",
                        help="add the result to a session file (made if absent), as `run` does")
    parser.add_argument("--name", default=None,
                        help="the result's name under /analyses (default: its kind and a number)")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace a result of the same --name, or an --out that is not a "
                             "session")
    parser.add_argument("--compress", action="store_true",
                        help="gzip + shuffle the result's arrays in the file")


def add_analysis_parsers(commands, assignment, finite) -> None:
    """Add the three analysis commands to the ``commands`` subparsers."""
    eq = commands.add_parser(
        "equilibria", help="find a model's equilibria and their stability",
        description="Find the equilibria in a box of state space by multi-start Newton on the "
                    "exact vector field, with the Jacobian's eigenvalues and a stability class. "
                    "See docs/analysis.md.",
        epilog="example: difflab equilibria lorenz --set rho=10 --box z=0:40 --json")
    _common(eq, assignment)
    eq.add_argument("--box", metavar="STATE=LO:HI", action="append", default=[], type=_bounds,
                    help="the range searched for one state (repeatable; default: ten times "
                         "the initial state's scale, every root found kept)")
    eq.add_argument("--starts", type=int, default=256, help="Newton starts (default 256)")
    eq.set_defaults(handler="difflab.cli.analysis_command:equilibria")

    cont = commands.add_parser(
        "continue", help="continue an equilibrium branch in one parameter",
        description="Follow the equilibrium nearest --state at --from by pseudo-arclength "
                    "continuation until the parameter leaves [--from, --to]; report stability "
                    "along the branch and its folds, Hopf and branch points. With --param2, "
                    "also the curves of those folds and Hopf points in two parameters, with "
                    "their cusp, Bogdanov-Takens and Bautin points (docs/analysis.md).",
        epilog="example: difflab continue lorenz --param rho --from 2 --to 30 "
               "--state x=1 --state y=1 --json")
    _common(cont, assignment)
    cont.add_argument("--param", required=True, help="the parameter to vary")
    cont.add_argument("--from", dest="start", type=finite, required=True, help="first value")
    cont.add_argument("--to", dest="stop", type=finite, required=True, help="last value")
    cont.add_argument("--state", dest="state", metavar="NAME=VALUE", action="append",
                      default=[], type=_state_value,
                      help="start near this state (repeatable; others: the initial state)")
    cont.add_argument("--ds", type=finite, default=None,
                      help="first arclength step (default (to - from) / 100)")
    cont.add_argument("--max-points", type=int, default=2000, help="most points (default 2000)")
    cont.add_argument("--param2", default=None,
                      help="a second parameter: from each fold and Hopf point found, follow "
                           "the curve of such points in (--param, --param2); with --out, "
                           "stored beside the branch as NAME_curve0, NAME_curve1, ...")
    cont.add_argument("--from2", dest="start2", type=finite, default=None,
                      help="--param2's first value")
    cont.add_argument("--to2", dest="stop2", type=finite, default=None,
                      help="--param2's last value (curves end where --param2 leaves the range)")
    cont.set_defaults(handler="difflab.cli.analysis_command:continue_branch")

    lyap = commands.add_parser(
        "lyapunov", help="compute a model's Lyapunov spectrum",
        description="The full Lyapunov spectrum by tangent dynamics (exact Jacobian-vector "
                    "products, RK4) and repeated QR, with a convergence estimate.",
        epilog="example: difflab lyapunov lorenz --t1 2000 --transient 20 --json")
    _common(lyap, assignment)
    lyap.add_argument("--t1", type=finite, required=True, help="averaging time")
    lyap.add_argument("--transient", type=finite, default=0.0,
                      help="time dropped first (default 0)")
    lyap.add_argument("--dt", type=finite, default=0.01, help="largest RK4 step (default 0.01)")
    lyap.set_defaults(handler="difflab.cli.analysis_command:lyapunov")
    _add_cycles(commands, assignment, finite)


def _add_cycles(commands, assignment, finite) -> None:
    """``difflab cycles``: periodic orbits from the first Hopf point of a branch."""
    cyc = commands.add_parser(
        "cycles", help="continue the periodic orbits born at a Hopf point",
        description="Continue the equilibrium nearest --state from --from to --to, then the "
                    "periodic orbits born at its first Hopf point (multiple shooting) while the "
                    "parameter stays in the range; report their periods, Floquet multipliers "
                    "and stability, and the folds of cycles, period doublings and "
                    "Neimark-Sacker points on the way. See docs/analysis.md.",
        epilog="example: difflab cycles fitzhugh_nagumo --param current --from 0 --to 1.5 "
               "--json")
    _common(cyc, assignment)
    cyc.add_argument("--param", required=True, help="the parameter to vary")
    cyc.add_argument("--from", dest="start", type=finite, required=True, help="first value")
    cyc.add_argument("--to", dest="stop", type=finite, required=True, help="last value")
    cyc.add_argument("--state", dest="state", metavar="NAME=VALUE", action="append",
                     default=[], type=_state_value,
                     help="start the equilibria near this state (repeatable)")
    cyc.add_argument("--segments", type=int, default=16,
                     help="shooting segments per orbit (default 16)")
    cyc.add_argument("--steps", type=int, default=400,
                     help="RK4 steps per period (default 400)")
    cyc.add_argument("--max-points", type=int, default=1000,
                     help="most orbits (default 1000)")
    cyc.set_defaults(handler="difflab.cli.cycles_command:cycles")
