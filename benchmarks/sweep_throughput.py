"""Sweep throughput: DiffLab against the CPU's practical limit, plain diffrax and SciPy.

    .venv/bin/python benchmarks/sweep_throughput.py [--points 10000] [--repeats 7]
                                                    [--blocks 64,128,256,512,1024]
                                                    [--kernels xla] [--numba-only]

The problem (issue 3): Lorenz with RK4, ``--points`` values of rho in [0, 28], 1,000 steps
of dt = 1e-3, float64, keeping the final state. Printed: trajectory-steps per second of

* DiffLab ``dl.sweep`` (warm: compile time reported apart), final state, and a run
  keeping 100 saved points per trajectory;
* (a) a hand-written numba RK4 vectorised across trajectories: struct-of-arrays blocks of
  64, ``fastmath``, ``prange`` over blocks. The CPU's practical limit;
* (b) ``jax.jit(jax.vmap(diffrax.diffeqsolve))`` with an RK4 tableau and the same fixed
  step: what a JAX user writes today;
* (c) ``scipy.integrate.solve_ivp`` (RK45 held at the step dt) on 1% of the points,
  extrapolated;

and the ratios DiffLab / (a) and DiffLab / (b) (targets: >= 0.5 and >= 20), and the
process's peak memory. Everything runs in this one process, one CPU device per core, and
the timings are interleaved (each round times every contender once): the best and the
median of ``--repeats`` rounds are reported, so that load from other programs on the
machine hits all of them alike.

What XLA needs (measured on a 2-core Xeon Skylake-SP, AVX-512, JAX 0.10.2, shared with
other jobs; "ns" is CPU time per trajectory-step on one core, which other load disturbs
least; numba runs at about 2.8 ns):

1. **Batch-minor layout.** ``jax.vmap`` of the one-trajectory step puts the batch first:
   the state is ``(B, 3)`` and every ``x, y, z = y`` reads with a stride. Holding the
   state as ``(3, B)`` (``vmap`` over the *last* axis, ``in_axes=1, out_axes=1``) makes
   each component a contiguous vector: 1.6x faster over the whole batch.
2. **Cache-sized blocks, the time loop inside.** One loop over all 10,000 trajectories
   streams every RK stage through memory on each of the 1,000 steps. ``lax.map`` over
   blocks with the time loop *inside* each block keeps a block's state and stages in L1
   for all its steps: 2.8x (4.5x over the batch-first whole-batch loop). 256
   trajectories per block is best (6 KiB per component; 128: +30%, 512: +10%, 1,024
   leaves L1: +60%; below 64 the loop's own cost dominates).
   Blocks are whole multiples of the 8 lanes of a vector.
3. **A rolled loop; XLA's fusion is the limit.** XLA makes one loop fusion per RK stage
   (k1, k2, k3 written to memory, the update fused with k4): 4 small kernels per step,
   at ~0.2 us of loop overhead per step. Unrolling (``fori_loop(unroll=4)``) is 4-8x
   *slower*: XLA fuses consecutive steps into kernels that recompute shared stages.
   Carrying the state as a tuple of components instead of an array gives one fusion per
   component, each recomputing all stages: no faster. XLA computes every output element
   on its own (multi-output fusion is not enabled for CPU in this XLA), so the stages
   live in L1 rather than in registers as in numba: this, not layout or overhead, is the
   remaining ~1.9x per core (5.2 ns against 2.8 ns). ``xla_cpu_enable_fast_math`` (FMA
   contraction) changes nothing here.
4. **512-bit vectors.** LLVM targets 256-bit vectors by default, also on AVX-512 CPUs;
   ``--xla_cpu_prefer_vector_width=512`` makes the kernels 1.35x faster (7.0 -> 5.2 ns),
   results unchanged. ``import difflab`` sets it on such CPUs.
5. **One device per core, and ``shard_map``.** XLA:CPU runs one device's program on one
   thread, so a sweep needs one CPU device per core (``import difflab`` asks for them,
   or ``XLA_FLAGS=--xla_force_host_platform_device_count=N``).
   ``shard_map`` gives each device its own loop with no collectives; the devices' threads
   run in parallel (checked per thread in /proc: two equal busy threads).

6. **One kernel per loop.** XLA's CPU backend compiles a ``while`` loop into a single
   kernel only if its body touches under 1 kB of buffers; a block's time loop is bigger,
   so it ran as a loop of separately dispatched kernels. ``import difflab`` raises that
   limit (``difflab/_config.py``): 6.4 -> 4.0 ns per trajectory-step.

7. **Tried and left out.** A block's state as one ``(block,)`` vector per state, the
   one-point step run lane by lane, so that no stage stacks the states: written by hand
   for Lorenz it is 1.4x faster than a ``vmap`` over ``(3, B)`` (2.8 against 4.0 ns), but
   inside ``dl.sweep`` it gained only 3-5% over the stacked columns (within the noise),
   since XLA already fuses those into one kernel per stage. Unrolling the time loop
   (``unroll=2``: 0.8-1.2x, 4: 0.7-1.0x; the stacked columns 0.45x at 2);
   ``optimization_barrier`` between stages (no gain); block sizes from 32 to 2,560 (within
   the noise; 8 and 16 slower); XLA's ``xla_cpu_use_multi_output_fusion`` (1.15x for the
   lane program, none for the stacked columns, and it changes every program of the
   process); ``xla_cpu_use_fusion_emitters=true`` (no gain, slower compiles);
   ``--xla_cpu_enable_fast_math=true`` (no gain; its FMA contraction changes the last
   bits); the interpreted Pallas kernel (the same three fusions per step as the lanes, no
   faster per core). The rest of the gap to numba is that XLA recomputes, in each state's
   fusion, the stages that state needs (about 3x numba's arithmetic), and about 4 ms of
   host work per ``dl.sweep`` call (chunks, transfers).

DiffLab's column stepper (``difflab/solvers/_sweeps/kernel.py``) does all of this, with
the same arithmetic as ``simulate`` point for point (equal to 1e-13 here).

Measured (10,000 points, 9 rounds, two runs on the machine above, loaded by other jobs):
DiffLab 0.06-0.10 s best (1.0-1.6e8 trajectory-steps/s; compile 1.9-2.2 s, apart), numba
0.036-0.044 s, diffrax vmap 4.2-4.3 s, SciPy ~2,400 s extrapolated. DiffLab / numba
0.43-0.58 (best), 0.46-0.57 (median), 0.43-0.44 in CPU time (6.6 against 2.85 ns per
trajectory-step, of which the kernel 5.2 ns); DiffLab / diffrax 40-68x. Keeping 100 saved
points costs 2x the CPU time of the final state alone (13 ns per step: the 23 MiB of
trajectories are transposed, stacked and copied to the host). Peak RSS: 172 MiB with JAX
loaded, 274 MiB after the final-state sweep, 351 MiB after the one with 100 saved points.
Since point 6 (``--repeats 3``, the machine quieter): DiffLab 0.025 s best (4.0e8
trajectory-steps/s), numba 0.015 s; DiffLab / numba 0.59 best, 0.51 median, 0.65 in CPU
time (4.0 against 2.6 ns); DiffLab / diffrax 63x best, 54x median. With XLA's default
limit put back, in the same conditions: 0.40, 0.49 and 0.43.
"""

import argparse
import os
import resource
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import numpy as np  # noqa: E402

CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def _numba_rk4():
    from numba import njit, prange

    block = 64

    @njit(fastmath=True, parallel=True, cache=True)
    def rk4(rho, sigma, beta, y0, h, n_steps, out):
        n = rho.shape[0]
        for b in prange((n + block - 1) // block):
            lo = b * block
            m = min(block, n - lo)
            x, y, z = np.empty(block), np.empty(block), np.empty(block)
            r, s, be = np.empty(block), np.empty(block), np.empty(block)
            for i in range(block):
                j = lo + min(i, m - 1)
                x[i], y[i], z[i] = y0[0], y0[1], y0[2]
                r[i], s[i], be[i] = rho[j], sigma[j], beta[j]
            for _ in range(n_steps):
                for i in range(block):
                    x0, y1, z0 = x[i], y[i], z[i]
                    k1x, k1y, k1z = s[i] * (y1 - x0), x0 * (r[i] - z0) - y1, x0 * y1 - be[i] * z0
                    ax, ay, az = x0 + 0.5 * h * k1x, y1 + 0.5 * h * k1y, z0 + 0.5 * h * k1z
                    k2x, k2y, k2z = s[i] * (ay - ax), ax * (r[i] - az) - ay, ax * ay - be[i] * az
                    ax, ay, az = x0 + 0.5 * h * k2x, y1 + 0.5 * h * k2y, z0 + 0.5 * h * k2z
                    k3x, k3y, k3z = s[i] * (ay - ax), ax * (r[i] - az) - ay, ax * ay - be[i] * az
                    ax, ay, az = x0 + h * k3x, y1 + h * k3y, z0 + h * k3z
                    k4x, k4y, k4z = s[i] * (ay - ax), ax * (r[i] - az) - ay, ax * ay - be[i] * az
                    x[i] = x0 + h / 6.0 * (k1x + 2.0 * k2x + 2.0 * k3x + k4x)
                    y[i] = y1 + h / 6.0 * (k1y + 2.0 * k2y + 2.0 * k3y + k4y)
                    z[i] = z0 + h / 6.0 * (k1z + 2.0 * k2z + 2.0 * k3z + k4z)
            for i in range(m):
                out[lo + i, 0], out[lo + i, 1], out[lo + i, 2] = x[i], y[i], z[i]

    return rk4


def numba_contender(rho, h, n_steps):
    rk4 = _numba_rk4()
    sigma, beta = np.full_like(rho, 10.0), np.full_like(rho, 8.0 / 3.0)
    out = np.empty((len(rho), 3))
    y0 = np.ones(3)

    def run():
        rk4(rho, sigma, beta, y0, h, n_steps, out)
        return out

    return run


def diffrax_contender(rho, h, n_steps):
    import diffrax
    import jax
    import jax.numpy as jnp

    class RK4(diffrax.AbstractERK):
        tableau = diffrax.ButcherTableau(
            c=np.array([0.5, 0.5, 1.0]), b_sol=np.array([1 / 6, 1 / 3, 1 / 3, 1 / 6]),
            b_error=np.zeros(4),
            a_lower=(np.array([0.5]), np.array([0.0, 0.5]), np.array([0.0, 0.0, 1.0])))
        interpolation_cls = diffrax.ThirdOrderHermitePolynomialInterpolation.from_k

        def order(self, terms):
            return 4

    def field(t, y, r):
        return jnp.stack([10.0 * (y[1] - y[0]), y[0] * (r - y[2]) - y[1],
                          y[0] * y[1] - 8.0 / 3.0 * y[2]])

    def solve(r):
        sol = diffrax.diffeqsolve(diffrax.ODETerm(field), RK4(), 0.0, n_steps * h, h,
                                  jnp.ones(3), args=r, saveat=diffrax.SaveAt(t1=True),
                                  stepsize_controller=diffrax.ConstantStepSize(),
                                  max_steps=n_steps + 1)
        return sol.ys[-1]

    fn = jax.jit(jax.vmap(solve))
    x = jnp.asarray(rho)
    return lambda: jax.block_until_ready(fn(x))


def scipy_contender(rho, h, n_steps):
    from scipy.integrate import solve_ivp

    def run():
        out = []
        for r in rho:
            f = lambda t, y: [10.0 * (y[1] - y[0]), y[0] * (r - y[2]) - y[1],
                              y[0] * y[1] - 8.0 / 3.0 * y[2]]
            sol = solve_ivp(f, (0.0, n_steps * h), [1.0, 1.0, 1.0], method="RK45",
                            first_step=h, max_step=h, rtol=1e3, atol=1e3)
            out.append(sol.y[:, -1])
        return np.array(out)

    return run


def difflab_contender(rho, h, n_steps, **options):
    import difflab as dl

    model = dl.models.get("lorenz")()
    space = {"rho": rho}
    last = {}

    def run():
        last["res"] = dl.sweep(model, space, n_steps * h, dt=h, solver="rk4", **options)
        return last["res"].final

    run.last = last
    return run


def _time(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _cpu_time(fn) -> tuple[float, float]:
    """Wall and CPU seconds (all threads) of ``fn()``."""
    before, start = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    fn()
    wall, after = time.perf_counter() - start, resource.getrusage(resource.RUSAGE_SELF)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(contenders: dict, repeats: int) -> dict:
    """Warm every contender, then time them in interleaved rounds.

    Returns name -> (best wall, median wall, best CPU seconds summed over threads).
    """
    for fn in contenders.values():
        fn()
    times = {name: [] for name in contenders}
    for _ in range(repeats):
        for name, fn in contenders.items():
            time.sleep(0.05)  # numba's threads spin a while after a run, slowing the next
            times[name].append(_cpu_time(fn))
    return {name: (min(w for w, _ in t), statistics.median(w for w, _ in t),
                   min(c for _, c in t)) for name, t in times.items()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--points", type=int, default=10_000)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--blocks", default="", help="also time these DiffLab block sizes")
    parser.add_argument("--kernels", default="", help="also time these kernels (xla, pallas)")
    parser.add_argument("--numba-only", action="store_true",
                        help="compare with numba alone (no diffrax, SciPy, n_save=100)")
    args = parser.parse_args(argv)

    from difflab.solvers._sharding import use_all_cpu_cores

    use_all_cpu_cores()
    import jax

    h, n, steps = 1e-3, args.points, args.steps
    rho = np.linspace(0.0, 28.0, n)
    print(f"Lorenz RK4, {n} trajectories x {steps} steps, float64; {jax.device_count()} CPU "
          f"devices on {CORES} cores; best / median of {args.repeats} interleaved rounds")

    peaks = {"start": _peak_mib()}
    contenders = {"difflab": difflab_contender(rho, h, steps)}
    contenders["difflab"]()  # the first call compiles; its stats time the compilation
    compile_stats = contenders["difflab"].last["res"].stats
    peaks["difflab"] = _peak_mib()
    if not args.numba_only:
        contenders["difflab n_save=100"] = difflab_contender(rho, h, steps, n_save=100)
        contenders["difflab n_save=100"]()
        peaks["difflab n_save=100"] = _peak_mib()
    for b in filter(None, args.blocks.split(",")):
        contenders[f"difflab block={b}"] = difflab_contender(rho, h, steps, block_size=int(b))
    for k in filter(None, args.kernels.split(",")):
        contenders[f"difflab kernel={k}"] = difflab_contender(rho, h, steps, kernel=k)
    contenders["(a) numba"] = numba_contender(rho, h, steps)
    if not args.numba_only:
        contenders["(b) diffrax vmap"] = diffrax_contender(rho, h, steps)
    results = measure(contenders, args.repeats)
    _report(results, compile_stats, peaks, rho, h, steps, contenders)
    return 0


def _report(results, compile_stats, peaks, rho, h, steps, contenders) -> None:
    n, work = len(rho), len(rho) * steps
    ref, check = contenders["difflab"](), contenders["(a) numba"]()
    print(f"max |difflab - numba| on the final states: {np.max(np.abs(ref - check)):.2e}")
    print(f"difflab: compile {compile_stats['compile_time']:.2f} s apart from the runs; "
          f"{compile_stats['chunks']} chunks of {compile_stats['chunk_size']} points\n")
    print(f"{'':24s}{'best s':>8s}{'median s':>10s}{'traj-steps/s':>14s}{'ns CPU/step':>13s}"
          f"{'difflab x':>11s}")
    best, mid = results["difflab"][0], results["difflab"][1]
    for name, (low, median, cpu) in results.items():
        print(f"{name:24s}{low:8.4f}{median:10.4f}{work / low:14.3g}{cpu / work * 1e9:13.2f}"
              f"{low / best:11.3g}")
    numba = results["(a) numba"]
    print(f"\nDiffLab / (a) numba: {numba[0] / best:.2f} best, {numba[1] / mid:.2f} median, "
          f"{numba[2] / results['difflab'][2]:.2f} in CPU time (target >= 0.5)")
    if "(b) diffrax vmap" not in results:
        return
    subset = rho[::100]
    scipy_time = min(_time(scipy_contender(subset, h, steps)) for _ in range(2)) * n / len(subset)
    print(f"(c) scipy, 1% extrapolated: {scipy_time:.1f} s, {work / scipy_time:.3g} "
          f"trajectory-steps/s; DiffLab {scipy_time / best:.3g}x")
    plain = results["(b) diffrax vmap"]
    print(f"DiffLab / (b) diffrax vmap: {plain[0] / best:.1f} best, {plain[1] / mid:.1f} median "
          f"(target >= 20)")
    print(f"peak memory (process RSS): {peaks['start']:.0f} MiB with JAX loaded, "
          f"{peaks['difflab']:.0f} MiB after the final-state sweep, "
          f"{peaks['difflab n_save=100']:.0f} MiB after the n_save=100 one "
          f"(its results: {n * 100 * 3 * 8 / 2**20:.1f} MiB); {_peak_mib():.0f} MiB at the end")


if __name__ == "__main__":
    sys.exit(main())
