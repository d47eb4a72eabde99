"""GPU sweep throughput: DiffLab's two kernels against a hand-written CUDA kernel.

    .venv/bin/python benchmarks/gpu_sweep.py            # on a GPU: the full sizes
    .venv/bin/python benchmarks/gpu_sweep.py --quick    # anywhere: small sizes, to check it

On a GPU machine install ``pip install -e ".[cuda,bench-gpu]"`` first (JAX's CUDA build
and ``numba-cuda``).

Fixed steps (issue 17): Lorenz RK4, each trajectory with its own rho in [0, 28] (sigma 10,
beta 8/3, y0 = (1, 1, 1)), ``--steps`` steps of dt = 1e-3, the final state kept, for
``--sizes`` trajectories (1e5, 1e6, 1e7), in float64 and float32. Printed: seconds and
trajectory-steps per second of

* ``difflab xla``: ``dl.sweep``, the column layout on every device (its kernel today);
* ``difflab pallas``: ``solve_block_pallas``, the per-trajectory Pallas kernel (Triton on
  a GPU; elsewhere Pallas' interpret mode, slow, so timed only at ``--pallas-cpu-size``);
* ``numba.cuda``: the reference, a hand-written CUDA kernel, one thread per trajectory
  with its state in registers (skipped, saying why, without numba-cuda or a CUDA GPU;
  with ``NUMBA_ENABLE_CUDASIM=1`` it is checked in numba's simulator instead, untimed);
* ``jax vmap(scan)``: ``jax.jit(jax.vmap(...))`` of a ``lax.scan`` of an RK4 step, what a
  JAX user writes first;

and each one's throughput over numba.cuda's. Each time is the best of ``--repeats`` warm
runs (compilation apart), final states copied to the host included; the largest
difference of each method's final states from ``difflab xla``'s is printed too.

Adaptive and stiff: ``dl.sweep`` of Lorenz with ``tsit5`` and of Van der Pol (mu in
[1, 100]) with ``kvaerno5``, on the default backend and on the CPU: points and steps
per second.
"""

import argparse
import math
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import numpy as np  # noqa: E402

try:  # the reference; a module global, which numba's CUDA simulator replaces in kernels
    from numba import cuda
except ImportError:
    cuda = None

H = 1e-3
QUICK = dict(sizes="2000,8000", steps=100, adaptive_points=32, repeats=2)
FULL = dict(sizes="1e5,1e6,1e7", steps=1000, adaptive_points=10_000, repeats=3)


def best_time(fn, repeats: int) -> tuple[float, np.ndarray]:
    """The best wall time of ``repeats`` runs of ``fn`` after a warm-up, and its output."""
    out = fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), np.asarray(out)


def lorenz_inputs(n: int, dtype):
    rho = np.linspace(0.0, 28.0, n).astype(dtype)
    return rho, np.ones((3, n), dtype)


def difflab_xla(rho, y0, steps):
    import difflab as dl

    model = dl.models.get("lorenz")()
    return lambda: dl.sweep(model, {"rho": rho}, steps * H, dt=H, solver="rk4").final


def difflab_pallas(rho, y0, steps):
    import jax

    import difflab as dl

    model = dl.models.get("lorenz")()
    fn = jax.jit(lambda y0, rho: dl.solvers.solve_block_pallas(
        model, "rk4", y0, {"rho": rho}, t0=0.0, h=H, n_steps=steps, n_intervals=1)[-1].T)
    y0, rho = jax.device_put(y0), jax.device_put(rho)
    return lambda: np.asarray(fn(y0, rho))


def vmap_scan(rho, y0, steps):
    import jax
    import jax.numpy as jnp

    def field(y, r):
        x, yy, z = y
        return jnp.stack([10.0 * (yy - x), x * (r - z) - yy, x * yy - 8.0 / 3.0 * z])

    def solve(r, y):
        def step(y, _):
            k1 = field(y, r)
            k2 = field(y + 0.5 * H * k1, r)
            k3 = field(y + 0.5 * H * k2, r)
            k4 = field(y + H * k3, r)
            return y + H / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4), None

        return jax.lax.scan(step, y, None, length=steps)[0]

    fn = jax.jit(jax.vmap(solve))
    rho, y0 = jax.device_put(rho), jax.device_put(y0.T)
    return lambda: np.asarray(fn(rho, y0))


def _numba_kernel():
    @cuda.jit
    def lorenz_rk4(rho, sigma, beta, h, half, sixth, two, n_steps, n_intervals, y0, out):
        i = cuda.grid(1)
        if i >= rho.shape[0]:
            return
        r, x, y, z = rho[i], y0[0, i], y0[1, i], y0[2, i]
        out[0, 0, i], out[0, 1, i], out[0, 2, i] = x, y, z
        for j in range(n_intervals):
            for _ in range((j * n_steps) // n_intervals, ((j + 1) * n_steps) // n_intervals):
                k1x, k1y, k1z = sigma * (y - x), x * (r - z) - y, x * y - beta * z
                ax, ay, az = x + half * k1x, y + half * k1y, z + half * k1z
                k2x, k2y, k2z = sigma * (ay - ax), ax * (r - az) - ay, ax * ay - beta * az
                ax, ay, az = x + half * k2x, y + half * k2y, z + half * k2z
                k3x, k3y, k3z = sigma * (ay - ax), ax * (r - az) - ay, ax * ay - beta * az
                ax, ay, az = x + h * k3x, y + h * k3y, z + h * k3z
                k4x, k4y, k4z = sigma * (ay - ax), ax * (r - az) - ay, ax * ay - beta * az
                x = x + sixth * (k1x + two * k2x + two * k3x + k4x)
                y = y + sixth * (k1y + two * k2y + two * k3y + k4y)
                z = z + sixth * (k1z + two * k2z + two * k3z + k4z)
            out[j + 1, 0, i], out[j + 1, 1, i], out[j + 1, 2, i] = x, y, z

    return lorenz_rk4


def numba_cuda(rho, y0, steps, threads: int = 128):
    """The reference kernel, launched one thread per trajectory; final states on the host."""
    kernel = _numba_kernel()
    f = rho.dtype.type
    scalars = (f(10.0), f(8.0 / 3.0), f(H), f(0.5 * H), f(H / 6.0), f(2.0))
    d_rho, d_y0 = cuda.to_device(rho), cuda.to_device(y0)
    out = cuda.device_array((2, 3, len(rho)), rho.dtype)
    blocks = math.ceil(len(rho) / threads)

    def run():
        kernel[blocks, threads](d_rho, *scalars, steps, 1, d_y0, out)
        cuda.synchronize()
        return out[1].copy_to_host().T

    return run


def numba_cuda_status() -> str | None:
    """Why the numba.cuda reference cannot be timed here (``None``: it can)."""
    if cuda is None:
        return "numba-cuda is not installed (pip install -e '.[bench-gpu]')"
    from numba import config

    if config.ENABLE_CUDASIM:
        return "numba runs its CUDA simulator (NUMBA_ENABLE_CUDASIM=1): checked, not timed"
    if not cuda.is_available():
        return "no CUDA GPU or driver is visible to numba"
    return None


def _device_name() -> str:
    import jax

    d = jax.devices()[0]
    return f"{d.device_kind} ({d.platform})"


def fixed_step_rows(args, dtype: str) -> list[dict]:
    import jax

    import difflab as dl

    dl.set_precision(dtype)
    rows, reason = [], numba_cuda_status()
    for n in [int(float(s)) for s in args.sizes.split(",")]:
        rho, y0 = lorenz_inputs(n, dtype)
        methods = {"difflab xla": difflab_xla, "jax vmap(scan)": vmap_scan}
        if jax.default_backend() == "gpu" or n <= args.pallas_cpu_size:
            methods["difflab pallas"] = difflab_pallas
        if reason is None:
            methods["numba.cuda"] = numba_cuda
        done = {name: best_time(make(rho, y0, args.steps), args.repeats)
                for name, make in methods.items()}
        reference = done["difflab xla"][1]
        for name, (seconds, final) in done.items():
            device = "numba: " + _numba_device() if name == "numba.cuda" else _device_name()
            rows.append(dict(method=name, dtype=dtype, n=n, steps=args.steps, seconds=seconds,
                             device=device, diff=float(np.max(np.abs(final - reference)))))
    return rows


def _numba_device() -> str:
    name = cuda.get_current_device().name
    return name.decode() if isinstance(name, bytes) else str(name)


def check_numba_in_simulator(dtype: str = "float64") -> float:
    """The reference kernel's largest difference from ``difflab xla`` in the simulator."""
    rho, y0 = lorenz_inputs(64, dtype)
    import difflab as dl

    dl.set_precision(dtype)
    return float(np.max(np.abs(numba_cuda(rho, y0, 20, threads=32)()
                               - difflab_xla(rho, y0, 20)())))


def print_fixed(rows: list[dict]) -> None:
    numba = {(r["dtype"], r["n"]): r["seconds"] for r in rows if r["method"] == "numba.cuda"}
    print(f"{'method':16s}{'dtype':>9s}{'trajectories':>14s}{'steps':>7s}{'seconds':>10s}"
          f"{'traj-steps/s':>14s}{'/ numba.cuda':>14s}{'max diff':>10s}  device")
    for r in rows:
        rate = r["n"] * r["steps"] / r["seconds"]
        ref = numba.get((r["dtype"], r["n"]))
        ratio = f"{ref / r['seconds']:.2f}" if ref else "-"
        print(f"{r['method']:16s}{r['dtype']:>9s}{r['n']:>14,d}{r['steps']:>7d}"
              f"{r['seconds']:>10.4f}{rate:>14.3g}{ratio:>14s}{r['diff']:>10.1e}  {r['device']}")


def adaptive_rows(args) -> list[dict]:
    import jax

    import difflab as dl

    dl.set_precision("float64")
    n = args.adaptive_points
    t1 = 1.0 if args.quick else 10.0
    cases = [("tsit5", dl.models.get("lorenz")(), {"rho": np.linspace(0.0, 28.0, n)}),
             ("kvaerno5", dl.models.get("van_der_pol")(), {"mu": np.geomspace(1.0, 100.0, n)})]
    platforms = ["cpu"] if jax.default_backend() == "cpu" else [jax.default_backend(), "cpu"]
    rows = []
    for solver, model, space in cases:
        for platform in platforms:
            devices = jax.devices(platform)
            row = dict(solver=solver, model=type(model).__name__, n=n, t1=t1,
                       platform=f"{platform} x{len(devices)}", device=devices[0].device_kind)
            try:
                row.update(_time_sweep(model, space, t1, solver, devices, args.repeats))
            except Exception as error:  # a failing case is reported, the others still run
                row["error"] = f"{type(error).__name__}: {error}".splitlines()[0]
            rows.append(row)
    return rows


def _time_sweep(model, space, t1, solver, devices, repeats) -> dict:
    import difflab as dl

    run = lambda: dl.sweep(model, space, t1, solver=solver, devices=devices)  # noqa: E731
    seconds, _ = best_time(lambda: run().final, repeats)
    return dict(seconds=seconds, steps=int(np.sum(run().steps)))


def print_adaptive(rows: list[dict]) -> None:
    print(f"{'solver':10s}{'model':>12s}{'points':>8s}{'t1':>6s}{'devices':>10s}{'seconds':>10s}"
          f"{'points/s':>11s}{'steps/s':>11s}  device")
    for r in rows:
        head = f"{r['solver']:10s}{r['model']:>12s}{r['n']:>8d}{r['t1']:>6g}{r['platform']:>10s}"
        if "error" in r:
            print(f"{head}  failed: {r['error']}")
            continue
        print(f"{head}{r['seconds']:>10.3f}{r['n'] / r['seconds']:>11.3g}"
              f"{r['steps'] / r['seconds']:>11.3g}  {r['device']}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, to check it runs")
    parser.add_argument("--sizes", help="trajectories, comma-separated (default 1e5,1e6,1e7)")
    parser.add_argument("--steps", type=int)
    parser.add_argument("--dtypes", default="float64,float32")
    parser.add_argument("--repeats", type=int)
    parser.add_argument("--adaptive-points", type=int)
    parser.add_argument("--pallas-cpu-size", type=int, default=2000,
                        help="off a GPU, time the Pallas kernel (interpret mode) up to this size")
    args = parser.parse_args(argv)
    for key, value in (QUICK if args.quick else FULL).items():
        if getattr(args, key) is None:
            setattr(args, key, value)

    import jax

    import difflab as dl

    print(f"DiffLab {dl.__version__}, JAX {jax.__version__}: {jax.device_count()} x "
          f"{_device_name()}")
    reason = numba_cuda_status()
    if reason is not None:
        print(f"numba.cuda reference skipped: {reason}")
    if reason is not None and "simulator" in reason:
        print(f"numba.cuda kernel in the simulator: max |difference| from difflab xla "
              f"{check_numba_in_simulator():.1e} (64 trajectories x 20 steps)")
    if jax.default_backend() != "gpu":
        print(f"no GPU: the Pallas kernel runs in interpret mode, timed only up to "
              f"{args.pallas_cpu_size} trajectories")
    print(f"\nLorenz RK4, dt = {H}, final state kept; best of {args.repeats} warm runs")
    rows = [r for dtype in args.dtypes.split(",") for r in fixed_step_rows(args, dtype)]
    print_fixed(rows)
    print("\nadaptive and stiff sweeps, GPU against the CPU (rtol 1e-6, atol 1e-9)")
    print_adaptive(adaptive_rows(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
