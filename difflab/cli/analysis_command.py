"""``difflab equilibria``, ``difflab continue`` and ``difflab lyapunov``."""

import json

from rich.table import Table

import difflab as dl

from .commands import _build_model, _err, _out
from .errors import UsageError


def _analysed(function, *args, **kwargs):
    try:
        return function(*args, **kwargs)
    except (ValueError, KeyError) as error:
        message = error.args[0] if isinstance(error, KeyError) and error.args else error
        raise UsageError(str(message).splitlines()[0]) from None


def _print_json(result) -> int:
    print(json.dumps(result.to_dict()))
    return 0


def _fmt_state(names, values) -> str:
    return ", ".join(f"{n}={v:.6g}" for n, v in zip(names, values))


def _fmt_complex(value) -> str:
    return f"{value.real:.6g}" + (f"{value.imag:+.6g}i" if value.imag else "")


def equilibria(args) -> int:
    """``difflab equilibria MODEL``."""
    model = _build_model(args)
    if args.starts < 1:
        raise UsageError(f"--starts must be at least 1, got {args.starts}")
    box = dict(args.box) or None
    result = _analysed(dl.equilibria, model, box=box, n_starts=args.starts)
    if args.json:
        return _print_json(result)
    table = Table(title=f"{len(result)} equilibria", title_justify="left")
    for column in ("state", "eigenvalues", "stability"):
        table.add_column(column)
    for state, values, kind in zip(result.states, result.eigenvalues, result.stability):
        table.add_row(_fmt_state(result.state_names, state),
                      ", ".join(map(_fmt_complex, values)), kind)
    _out().print(table)
    return 0


def continue_branch(args) -> int:
    """``difflab continue MODEL --param P --from A --to B``."""
    model = _build_model(args)
    if args.max_points < 2:
        raise UsageError(f"--max-points must be at least 2, got {args.max_points}")
    branch = _analysed(dl.continuation, model, args.param, args.start, args.stop,
                       state=dict(args.state) or None, ds=args.ds, max_points=args.max_points)
    if args.json:
        return _print_json(branch)
    out = _out()
    stable = branch.stable
    changes = [0] + [i for i in range(1, len(stable)) if stable[i] != stable[i - 1]]
    for i, j in zip(changes, [*changes[1:], len(stable)]):
        out.print(f"{args.param} from {branch.values[i]:.6g} to {branch.values[j - 1]:.6g}: "
                  f"{'stable' if stable[i] else 'unstable'}")
    table = Table(title="special points", title_justify="left")
    for column in ("type", args.param, "state", "note"):
        table.add_column(column)
    for s in branch.special:
        note = "" if s.lyapunov_coefficient is None else \
            f"l1={s.lyapunov_coefficient:.4g} ({s.criticality}), omega={s.frequency:.6g}"
        table.add_row(s.kind, f"{s.value:.10g}", _fmt_state(branch.state_names, s.state), note)
    out.print(table)
    _err().print(f"{len(branch.values)} points; {branch.status}")
    return 0


def lyapunov(args) -> int:
    """``difflab lyapunov MODEL --t1 T``."""
    model = _build_model(args)
    spectrum = _analysed(dl.lyapunov, model, args.t1, transient=args.transient, dt=args.dt)
    if args.json:
        return _print_json(spectrum)
    table = Table(title="Lyapunov exponents", title_justify="left")
    for column in ("i", "exponent", "spread (last quarter)"):
        table.add_column(column)
    for i, (value, error) in enumerate(zip(spectrum.exponents, spectrum.error), 1):
        table.add_row(str(i), f"{value:.6g}", f"{error:.2g}")
    _out().print(table)
    _out().print(f"sum {spectrum.exponents.sum():.6g}; "
                 f"Kaplan-Yorke dimension {spectrum.kaplan_yorke_dimension:.4g}")
    return 0
