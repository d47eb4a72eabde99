"""``difflab equilibria``, ``difflab continue`` and ``difflab lyapunov``; storing an
analysis in ``--out`` (also for ``difflab cycles``)."""

import json
import re
from pathlib import Path

from rich.markup import escape
from rich.table import Table

import difflab as dl

from .commands import _build_model, _err, _out, _writing
from .errors import UsageError, printable
from .sizes import check_starts

CURVE = "curve"  # --param2's curves are stored as <name>_curve0, <name>_curve1, ...


def _analysed(function, *args, **kwargs):
    try:
        return function(*args, **kwargs)
    except (ValueError, KeyError) as error:
        message = error.args[0] if isinstance(error, KeyError) and error.args else error
        raise UsageError(str(message).splitlines()[0]) from None


def _session_file(args) -> Path | None:
    """``--out``: a session file (``.h5``/``.hdf5``), or ``None`` when not given."""
    if args.out is None:
        return None
    out = Path(args.out)
    if not args.out.strip() or out.suffix not in (".h5", ".hdf5"):
        raise UsageError(f"--out must be a session file ending in .h5 or .hdf5, not {args.out!r}")
    return out


def _computed(args, function, *a, **kw):
    """``function(*a, **kw)``, stored in ``--out`` (see :func:`_computed_with`)."""
    return _computed_with(args, lambda: (_analysed(function, *a, **kw), ()))[0]


def _computed_with(args, compute):
    """``compute()``, a result and its parts ``((suffix, part), ...)``, stored in ``--out``
    as ``difflab run --out`` stores a run: the file's lock is held and an existing file
    checked before computing; the result is ``--name`` (or its default), each part
    ``<name>_<suffix>``."""
    out = _session_file(args)
    with _writing(out, args.name, args.overwrite, kind="analyses"):
        result, parts = compute()
        if out is not None:
            _store(out, result, parts, args)
    return result, parts


def _store(out: Path, result, parts, args) -> None:
    try:
        with dl.io.write_session(out, overwrite=args.overwrite,
                                 compress=args.compress) as writer:
            name = dl.io.add(writer, result, name=args.name)
            names = [name, *(dl.io.add(writer, part, name=f"{name}_{suffix}")
                             for suffix, part in parts)]
            if args.overwrite:
                _remove_stale_parts(writer, name, names)
    except ValueError as error:  # a --name the file cannot hold; nothing was written
        raise UsageError(f"--name: {error}") from None
    except (TypeError, dl.io.SessionFileError) as error:  # a class no file stores yet
        raise UsageError(str(error)) from None
    where = ", ".join(f"/analyses/{n}" for n in names)
    _err().print(escape(printable(f"saved {out} ({where})")), soft_wrap=True)


def _remove_stale_parts(writer, name: str, kept: list) -> None:
    """Remove the curves ``<name>_curve<i>`` an overwritten result had and this one lacks
    (and those an older file named ``<name>.curve<i>``)."""
    group = writer.file.get("analyses")
    stale = re.compile(re.escape(name) + "[_.]" + CURVE + r"\d+")
    for member in [] if group is None else list(group):
        if stale.fullmatch(member) and member not in kept:
            writer.remove("analyses", member)


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
    check_starts(model, args.starts)  # before any work: the memory it would need
    box = dict(args.box) or None
    result = _computed(args, dl.equilibria, model, box=box, n_starts=args.starts)
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
    if len({args.param2 is None, args.start2 is None, args.stop2 is None}) > 1:
        raise UsageError("--param2, --from2 and --to2 go together")
    branch, parts = _computed_with(args, lambda: _branch_and_curves(args, model))
    curves = None if args.param2 is None else [curve for _, curve in parts]
    if args.json:
        data = branch.to_dict()
        if curves is not None:
            data["curves"] = [curve.to_dict() for curve in curves]
        print(json.dumps(data))
        return 0
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
    if curves is not None:
        _print_curves(args, curves)
    return 0


def _branch_and_curves(args, model) -> tuple:
    """The branch and, with ``--param2``, the curve through each of its fold and Hopf
    points as parts ``("curve0", curve), ...``."""
    branch = _analysed(dl.continuation, model, args.param, args.start, args.stop,
                       state=dict(args.state) or None, ds=args.ds, max_points=args.max_points)
    if args.param2 is None:
        return branch, ()
    points = [s for s in branch.special if s.kind in ("fold", "hopf")]
    return branch, tuple(
        (f"{CURVE}{i}", _analysed(dl.continuation, model, (args.param, args.param2),
                                  args.start2, args.stop2, from_point=s,
                                  max_points=args.max_points))
        for i, s in enumerate(points))


def _print_curves(args, curves) -> None:
    out, names = _out(), (args.param, args.param2)
    for curve in curves:
        ranges = ", ".join(f"{n} {lo:.6g} to {hi:.6g}" for n, lo, hi in
                           zip(names, curve.values.min(axis=0), curve.values.max(axis=0)))
        out.print(f"{curve.kind} curve: {len(curve.values)} points, {ranges}; {curve.status}")
    if not any(curve.special for curve in curves):
        return
    table = Table(title="codimension-two points", title_justify="left")
    for column in ("type", *names, "state"):
        table.add_column(column)
    for curve in curves:
        for s in curve.special:
            table.add_row(s.kind, *(f"{v:.10g}" for v in s.values),
                          _fmt_state(curve.state_names, s.state))
    out.print(table)


def lyapunov(args) -> int:
    """``difflab lyapunov MODEL --t1 T``."""
    model = _build_model(args)
    spectrum = _computed(args, dl.lyapunov, model, args.t1, transient=args.transient,
                         dt=args.dt)
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
