"""Continuation and Lyapunov speed (issue 16).

    .venv/bin/python benchmarks/continuation.py [--points 500] [--chain 100] [--repeats 3]

Printed:

* points per second of equilibrium continuation (warm: the first run, compile included,
  reported apart) on Lorenz in rho (3 states, ``--points`` points over [2, 30], the Hopf
  point located) and on a chain of ``--chain`` coupled bistable cells
  ``x_i' = p + x_i - x_i^3 + k (x_{i-1} - 2 x_i + x_{i+1})`` in p (with folds);
* seconds to the Lorenz spectrum (sigma=10, rho=28, beta=8/3) to two decimals: the
  averaging time doubles from 250 until the running estimate's spread over the last
  quarter is below 0.005 for every exponent, warm.

Targets on 2 CPU cores: 500 continuation points of a 3-state model in under 1 s warm;
the spectrum in under 5 s.
"""

import argparse
import time

import jax.numpy as jnp

import difflab as dl


class Chain(dl.Model):
    """``n`` diffusively coupled bistable cells driven by ``p``."""

    p: float = dl.param(-1.0, bounds=(-2.0, 2.0))
    k: float = 0.1
    n: int = 100

    @property
    def state_names(self):
        return tuple(f"x{i}" for i in range(self.n))

    def vector_field(self, t, y):
        padded = jnp.concatenate([y[:1], y, y[-1:]])
        return self.p + y - y**3 + self.k * (padded[:-2] - 2 * y + padded[2:])

    def initial_state(self):
        return -jnp.ones(self.n)


def _best(repeats, run):
    first = time.perf_counter()
    result = run()
    cold = time.perf_counter() - first
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
    return result, cold, min(times)


def continuation(points: int, chain: int, repeats: int) -> None:
    lorenz = dl.models.get("lorenz")()
    span = 28.0
    run = lambda: dl.continuation(lorenz, "rho", 2.0, 30.0,
                                  state={"x": 1.4, "y": 1.4, "z": 1.0}, ds=span / points,
                                  ds_max=span / points, max_points=10 * points)
    branch, cold, warm = _best(repeats, run)
    n = len(branch.values)
    print(f"lorenz (3 states): {n} points in {warm:.3f} s warm ({n / warm:,.0f} points/s; "
          f"first run {cold:.2f} s); special: "
          + ", ".join(f"{s.kind} at {s.value:.10g}" for s in branch.special))
    model = Chain(n=chain)
    run = lambda: dl.continuation(model, "p", -1.0, 1.0, ds=0.02,
                                  max_points=10 * points)
    branch, cold, warm = _best(max(1, repeats // 2), run)
    n = len(branch.values)
    print(f"chain ({chain} states): {n} points in {warm:.3f} s warm ({n / warm:,.0f} "
          f"points/s; first run {cold:.2f} s); special: "
          + ", ".join(f"{s.kind} at {s.value:.6g}" for s in branch.special))


def spectrum(repeats: int) -> None:
    lorenz = dl.models.get("lorenz")()
    dl.lyapunov(lorenz, 10.0, transient=10.0)  # compile

    def converge():
        t1 = 250.0
        while True:
            result = dl.lyapunov(lorenz, t1, transient=10.0)
            if (result.error < 0.005).all() or t1 > 1e5:
                return result
            t1 *= 2

    result, _, warm = _best(repeats, converge)
    values = ", ".join(f"{v:.4f}" for v in result.exponents)
    print(f"lorenz spectrum to two decimals: [{values}] (t1={result.t1:g}, spread "
          f"{result.error.max():.4f}) in {warm:.3f} s warm; reference 0.9056, 0, -14.5723")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=500)
    parser.add_argument("--chain", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    continuation(args.points, args.chain, args.repeats)
    spectrum(args.repeats)


if __name__ == "__main__":
    main()
