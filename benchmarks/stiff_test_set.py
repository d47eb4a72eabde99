"""Stiff problems of the Test Set for IVP Solvers: DiffLab's stiff solvers against SciPy's.

HIRES, OREGO, ROBER and VDPOL as the Test Set for IVP Solvers (Mazzia & Magherini,
Bari) defines them, each solved from its initial state to its end time by DiffLab's
implicit solvers (``kvaerno3``, ``kvaerno4``, ``kvaerno5``) and by SciPy's ``Radau``
(Hairer's RADAU5) and ``LSODA``, all with the same ``rtol`` and ``atol``. For each it
prints

- ``scd``: the correct significant digits at the end time, ``-log10`` of the largest
  relative error against the Test Set's published reference state (the Test Set's own
  measure; ROBER's second component, about 8e-14, counts only where it is resolved);
- ``steps``: the steps taken (DiffLab: accepted + rejected = all; SciPy: accepted);
- ``time``: seconds of a run, compile time apart (DiffLab's first call compiles);
- ``steps/Radau``: how many more steps than Radau.

    python benchmarks/stiff_test_set.py            # rtol 1e-6 (about a minute on 2 cores)
    python benchmarks/stiff_test_set.py --quick    # HIRES and VDPOL only, rtol 1e-4
    python benchmarks/stiff_test_set.py --rtol 1e-8 --solvers kvaerno5
    python benchmarks/stiff_test_set.py --tight    # rtol 1e-8, 1e-9, 1e-10 (a few minutes)

``atol`` is ``1e-4 * rtol`` per state but ROBER's second state, whose scale is 1e-14 and
whose ``atol`` is ``1e-10 * rtol`` (a per-state ``atol``, as DiffLab and SciPy accept).
"""

import argparse
import time

import numpy as np

# -- the problems: vector fields, initial states, end times, reference end states ---------


def hires(t, y, xp):
    f7 = 280.0 * y[5] * y[7] - 1.81 * y[6]
    return xp.stack([
        -1.71 * y[0] + 0.43 * y[1] + 8.32 * y[2] + 0.0007,
        1.71 * y[0] - 8.75 * y[1],
        -10.03 * y[2] + 0.43 * y[3] + 0.035 * y[4],
        8.32 * y[1] + 1.71 * y[2] - 1.12 * y[3],
        -1.745 * y[4] + 0.43 * (y[5] + y[6]),
        -280.0 * y[5] * y[7] + 0.69 * y[3] + 1.71 * y[4] - 0.43 * y[5] + 0.69 * y[6],
        f7,
        -f7,
    ])


def orego(t, y, xp):
    return xp.stack([
        77.27 * (y[1] + y[0] * (1.0 - 8.375e-6 * y[0] - y[1])),
        (y[2] - (1.0 + y[0]) * y[1]) / 77.27,
        0.161 * (y[0] - y[2]),
    ])


def rober(t, y, xp):
    return xp.stack([
        -0.04 * y[0] + 1e4 * y[1] * y[2],
        0.04 * y[0] - 1e4 * y[1] * y[2] - 3e7 * y[1] ** 2,
        3e7 * y[1] ** 2,
    ])


def vdpol(t, y, xp):
    return xp.stack([y[1], ((1.0 - y[0] ** 2) * y[1] - y[0]) / 1e-6])


#: name: (vector field, y0, t_end, reference state at t_end, atol scale per state)
PROBLEMS = {
    "HIRES": (hires, [1.0, 0, 0, 0, 0, 0, 0, 0.0057], 321.8122,
              [0.7371312573325668e-3, 0.1442485726316185e-3, 0.5888729740967575e-4,
               0.1175651343283149e-2, 0.2386356198831331e-2, 0.6238968252742796e-2,
               0.2849998395185769e-2, 0.2850001604814231e-2], None),
    "OREGO": (orego, [1.0, 2.0, 3.0], 360.0,
              [0.1000814870318523e1, 0.1228178521549917e4, 0.1320554942846706e3], None),
    "ROBER": (rober, [1.0, 0.0, 0.0], 1e11,
              [0.2083340149701255e-7, 0.8333360770334713e-13, 0.9999999791665050],
              [1.0, 1e-6, 1.0]),
    "VDPOL": (vdpol, [2.0, 0.0], 2.0, [0.1706167732170483e1, -0.8928097010247975e0], None),
}
DIFFLAB = ("kvaerno3", "kvaerno4", "kvaerno5")
SCIPY = ("Radau", "LSODA")


def tolerances(name, rtol):
    """``(rtol, atol)``: ``atol`` one per state, ``1e-4 * rtol`` times the state's scale."""
    _, y0, _, _, scale = PROBLEMS[name]
    scale = np.ones(len(y0)) if scale is None else np.asarray(scale)
    return rtol, 1e-4 * rtol * scale


def scd(y, reference) -> float:
    """Correct significant digits: ``-log10`` of the largest relative error."""
    y, ref = np.asarray(y, dtype=float), np.asarray(reference)
    if not np.all(np.isfinite(y)):
        return float("nan")
    return float(-np.log10(np.max(np.abs(y - ref) / np.abs(ref))))


# -- the runs ---------------------------------------------------------------------------


def run_difflab(name, solver, rtol):
    import jax.numpy as jnp

    import difflab as dl

    fn, y0, t1, _, _ = PROBLEMS[name]

    class Problem(dl.Model):
        state_names = tuple(f"y{i + 1}" for i in range(len(y0)))

        def vector_field(self, t, y):
            return fn(t, y, jnp)

        def initial_state(self):
            return jnp.asarray(y0, dtype=float)

    rtol, atol = tolerances(name, rtol)
    kwargs = dict(solver=solver, n_save=2, rtol=rtol, atol=atol, max_steps=200_000,
                  throw=False)
    start = time.perf_counter()
    dl.simulate(Problem(), t1, **kwargs)  # compiles
    compile_s = time.perf_counter() - start
    start = time.perf_counter()
    traj = dl.simulate(Problem(), t1, **kwargs)
    elapsed = time.perf_counter() - start
    return dict(y=np.asarray(traj.final), steps=int(traj.steps), ok=traj.ok,
                accepted=int(traj.accepted_steps), time=elapsed, compile=compile_s - elapsed,
                note="" if traj.ok else traj.message)


def run_scipy(name, method, rtol):
    from scipy.integrate import solve_ivp

    fn, y0, t1, _, _ = PROBLEMS[name]
    rtol, atol = tolerances(name, rtol)
    start = time.perf_counter()
    sol = solve_ivp(lambda t, y: fn(t, y, np), (0.0, t1), np.asarray(y0, dtype=float),
                    method=method, rtol=rtol, atol=atol)
    elapsed = time.perf_counter() - start
    steps = len(sol.t) - 1
    return dict(y=sol.y[:, -1], steps=steps, accepted=steps, ok=sol.success, time=elapsed,
                compile=0.0, note="" if sol.success else sol.message)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="HIRES and VDPOL only, rtol 1e-4 (for a check in seconds)")
    parser.add_argument("--tight", action="store_true",
                        help="rtol 1e-8, 1e-9 and 1e-10, kvaerno5 beside SciPy's solvers")
    parser.add_argument("--rtol", type=float, nargs="+", default=None,
                        help="one or more; default 1e-6 (quick: 1e-4)")
    parser.add_argument("--problems", nargs="+", default=None, choices=list(PROBLEMS))
    parser.add_argument("--solvers", nargs="+", default=None, choices=[*DIFFLAB, *SCIPY])
    args = parser.parse_args(argv)
    rtols = args.rtol or ([1e-8, 1e-9, 1e-10] if args.tight else [1e-4 if args.quick else 1e-6])
    problems = args.problems or (["HIRES", "VDPOL"] if args.quick else list(PROBLEMS))
    solvers = args.solvers or (["kvaerno5", *SCIPY] if args.tight else [*DIFFLAB, *SCIPY])
    for rtol in rtols:
        table(problems, solvers, rtol)


def table(problems, solvers, rtol) -> None:
    """Print one table: every problem by every solver at ``rtol``."""
    print(f"\nrtol = {rtol:g}, atol = {1e-4 * rtol:g} per state (ROBER's y2: {1e-10 * rtol:g})")
    header = (f"{'problem':8} {'solver':9} {'scd':>5} {'steps':>8} {'accepted':>8} "
              f"{'steps/Radau':>11} {'time s':>8} {'compile s':>9}")
    print(header)
    print("-" * len(header))
    for name in problems:
        rows = {s: (run_scipy if s in SCIPY else run_difflab)(name, s, rtol) for s in solvers}
        radau = rows.get("Radau", {}).get("steps")
        for solver, r in rows.items():
            ratio = f"{r['steps'] / radau:.1f}x" if radau else "-"
            print(f"{name:8} {solver:9} {scd(r['y'], PROBLEMS[name][3]):5.1f} {r['steps']:8d} "
                  f"{r['accepted']:8d} {ratio:>11} {r['time']:8.3f} {r['compile']:9.2f}"
                  + ("" if r["ok"] else f"  FAILED: {r['note'][:60]}"))


if __name__ == "__main__":
    main()
