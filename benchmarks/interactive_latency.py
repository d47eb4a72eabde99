"""How quickly DiffLab answers: the pendulum with 10,000 RK4 steps.

Prints
- cold: a fresh process importing difflab, compiling and returning the first result
  (the persistent compilation cache is off, so this is a true first launch);
- warm: the median time of a re-solve after a parameter change, next to the same RK4
  written by hand as one ``jax.jit``-ed ``lax.scan`` (the floor JAX allows).

Targets: cold under 3 s, warm under 5 ms.

    python benchmarks/interactive_latency.py
"""

import os
import statistics
import subprocess
import sys
import time

COLD = """
import time
start = time.perf_counter()
import difflab as dl
import numpy as np
traj = dl.simulate(dl.models.get("pendulum")(), 10.0, dt=1e-3, solver="rk4")
np.asarray(traj.ys)
print(time.perf_counter() - start)
"""


def cold_start(repeats: int = 3) -> float:
    env = dict(os.environ, DIFFLAB_NO_COMPILATION_CACHE="1")
    times = [
        float(subprocess.run([sys.executable, "-c", COLD], env=env, check=True,
                             capture_output=True, text=True).stdout)
        for _ in range(repeats)
    ]
    return min(times)


def _median_ms(solve, values) -> float:
    times = []
    for value in values:
        start = time.perf_counter()
        solve(value)
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def warm_resolve(repeats: int = 200) -> tuple[float, float]:
    import jax
    import jax.numpy as jnp
    import numpy as np

    import difflab as dl

    model = dl.models.get("pendulum")()

    def difflab_solve(g):
        np.asarray(dl.simulate(model.replace(g=g), 10.0, dt=1e-3, solver="rk4").ys)

    @jax.jit
    def scan_rk4(g):
        def f(y):
            return jnp.stack([y[1], -g * jnp.sin(y[0])])

        def step(y, _):
            k1 = f(y)
            k2 = f(y + 5e-4 * k1)
            k3 = f(y + 5e-4 * k2)
            k4 = f(y + 1e-3 * k3)
            y = y + 1e-3 / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            return y, y

        return jax.lax.scan(step, jnp.array([1.0, 0.0]), length=10_000)[1][::10]

    def reference_solve(g):
        np.asarray(scan_rk4(jnp.asarray(g)))

    values = 9.0 + np.random.default_rng(0).random(repeats)
    difflab_solve(9.81), reference_solve(9.81)  # compile both
    return _median_ms(difflab_solve, values), _median_ms(reference_solve, values)


def main() -> None:
    cold = cold_start()
    warm, reference = warm_resolve()
    print("pendulum, 10,000 RK4 steps, float64")
    print(f"cold start (import + compile + run): {cold:.2f} s   (target < 3 s)")
    print(f"warm re-solve, DiffLab:              {warm:.2f} ms  (target < 5 ms)")
    print(f"warm re-solve, hand-written scan:    {reference:.2f} ms")
    print(f"ratio DiffLab / hand-written:        {warm / reference:.2f}x")


if __name__ == "__main__":
    main()
