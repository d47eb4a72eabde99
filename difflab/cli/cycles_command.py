"""``difflab cycles``: the periodic orbits born at the first Hopf point of a branch,
stored in ``--out`` as the other analysis commands store theirs."""

import json

import numpy as np
from rich.table import Table

import difflab as dl

from .analysis_command import _analysed, _computed, _fmt_complex, _fmt_state
from .commands import _build_model, _err, _out
from .errors import UsageError
from .sizes import check_cycle_steps


def _check(args) -> None:
    for name, value, least in (("--segments", args.segments, 1), ("--steps", args.steps, 1),
                               ("--max-points", args.max_points, 2)):
        if value < least:
            raise UsageError(f"{name} must be at least {least}, got {value}")
    if args.steps < args.segments:
        raise UsageError(f"--steps ({args.steps}) must be at least --segments "
                         f"({args.segments})")


def cycles(args) -> int:
    """``difflab cycles MODEL --param P --from A --to B``."""
    model = _build_model(args)
    _check(args)
    check_cycle_steps(model, args.steps, args.segments)  # before any work
    orbits = _computed(args, _orbits_from_hopf, args, model)
    if args.json:
        print(json.dumps(orbits.to_dict()))
        return 0
    _print(args.param, orbits.hopf, orbits)
    _err().print(f"{len(orbits.values)} orbits; {orbits.status}")
    return 0


def _orbits_from_hopf(args, model):
    """The periodic orbits born at the first Hopf point of the equilibrium branch."""
    branch = _analysed(dl.continuation, model, args.param, args.start, args.stop,
                       state=dict(args.state) or None)
    hopf = next((s for s in branch.special if s.kind == "hopf"), None)
    if hopf is None:
        raise UsageError(f"no Hopf point on the equilibrium branch from {args.param}="
                         f"{args.start:g} to {args.stop:g}")
    lo, hi = sorted((args.start, args.stop))
    return _analysed(dl.periodic_orbits, model, args.param, hopf, lo, hi,
                     segments=args.segments, steps=args.steps, max_points=args.max_points)


def _print(param, hopf, orbits) -> None:
    out = _out()
    note = "" if hopf.lyapunov_coefficient is None else \
        f" ({hopf.criticality}, l1={hopf.lyapunov_coefficient:.4g})"
    out.print(f"Hopf point at {param}={hopf.value:.10g}: "
              f"{_fmt_state(orbits.state_names, hopf.state)}{note}")
    for a, b, kinds, t0, t1 in _stretches(orbits):
        out.print(f"{param} from {a} to {b}: {' / '.join(dict.fromkeys(kinds))}, "
                  f"period {t0:.6g} to {t1:.6g}")
    if not orbits.special:
        out.print("no special points")
        return
    table = Table(title="special points", title_justify="left")
    for column in ("type", param, "period", "multipliers"):
        table.add_column(column)
    for s in orbits.special:
        shown = s.multipliers[np.argsort(np.abs(np.abs(s.multipliers) - 1.0))][:2]
        table.add_row(s.kind, f"{s.value:.10g}", f"{s.period:.6g}",
                      ", ".join(map(_fmt_complex, shown)))
    out.print(table)


def _stretches(orbits) -> list:
    """``[from, to, kinds, first period, last period]`` of each run of orbits of one
    stability; runs that do not move the parameter in six digits (a canard) are one."""
    kinds = np.where(np.isnan(orbits.multipliers[:, 0]), "stability unknown",
                     np.where(orbits.stable, "stable", "unstable"))
    values, periods = orbits.values, orbits.periods
    values = np.where(np.abs(values) < 1e-12 * np.max(np.abs(values)), 0.0, values)
    changes = [0] + [i for i in range(1, len(kinds)) if kinds[i] != kinds[i - 1]]
    rows = []
    for i, j in zip(changes, [*changes[1:], len(kinds)]):
        a, b = f"{values[i]:.6g}", f"{values[j - 1]:.6g}"
        if rows and a == b == rows[-1][0] == rows[-1][1]:
            rows[-1][2].append(kinds[i])
            rows[-1][4] = periods[j - 1]
        else:
            rows.append([a, b, [kinds[i]], periods[i], periods[j - 1]])
    return rows
