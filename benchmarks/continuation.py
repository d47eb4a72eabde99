"""Continuation, periodic orbits and Lyapunov speed.

    .venv/bin/python benchmarks/continuation.py [--points 500] [--chain 100] [--repeats 3]
        [--only continuation|spectrum|cycles|locate]

Printed:

* points per second of equilibrium continuation (warm: the first run, compile included,
  reported apart) on Lorenz in rho (3 states, ``--points`` points over [2, 30], the Hopf
  point located) and on a chain of ``--chain`` coupled bistable cells
  ``x_i' = p + x_i - x_i^3 + k (x_{i-1} - 2 x_i + x_{i+1})`` in p (with folds);
* seconds to the Lorenz spectrum (sigma=10, rho=28, beta=8/3) to two decimals: the
  averaging time doubles from 250 until the running estimate's spread over the last
  quarter is below 0.005 for every exponent, warm;
* periodic orbits per second (warm; first run apart) of van der Pol's branch over
  mu in [1, 10] with default settings (rtol 1e-6 on the period), and a table of the
  period at the orbits nearest mu = 1, 2, .., 10 against a reference computed in the same
  run by scipy: shooting on ``(x0, T)`` from the section ``v = 0`` with DOP853 at
  rtol = atol = 1e-12, solved by ``scipy.optimize.fsolve``;
* ``dl.locate`` on a fold of cycles of the Bautin normal form
  ``r' = r (b1 + b2 r^2 - r^4)`` (16 segments, 400 RK4 steps): the point and its
  derivative in ``b2`` per second (compiled once, warm; compile apart), against the
  closed forms ``b1 = -b2^2 / 4`` and ``db1/db2 = -b2 / 2``.

Targets on 2 CPU cores: 500 continuation points of a 3-state model in under 1 s warm;
the spectrum in under 5 s.
"""

import argparse
import time

import jax.numpy as jnp
import numpy as np

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


def _scipy_period(mu: float, x0: float, period: float) -> float:
    """Van der Pol's period at ``mu`` by shooting from ``(x0, 0)`` with scipy."""
    from scipy.integrate import solve_ivp
    from scipy.optimize import fsolve

    def rhs(t, y):
        return [y[1], mu * (1 - y[0] ** 2) * y[1] - y[0]]

    def miss(unknowns):
        x, T = unknowns
        end = solve_ivp(rhs, (0.0, T), [x, 0.0], method="DOP853", rtol=1e-12,
                        atol=1e-12).y[:, -1]
        return [end[0] - x, end[1]]

    return float(fsolve(miss, [x0, period], xtol=1e-13)[1])


def cycles(repeats: int) -> None:
    vdp = dl.models.get("van_der_pol")
    start = ({"x": 2.0, "v": 0.0}, 6.66)
    run = lambda: dl.periodic_orbits(vdp(mu=1.0), "mu", start, 1.0, 10.0)
    orbits, cold, warm = _best(repeats, run)
    n = len(orbits.values)
    print(f"van der Pol cycles, mu in [1, 10], defaults: {n} orbits in {warm:.3f} s warm "
          f"({n / warm:,.0f} orbits/s; first run {cold:.2f} s); {orbits.steps} RK4 steps "
          f"per period at the end; status: {orbits.status}")
    print(f"{'mu':>8} {'period':>14} {'scipy period':>14} {'rel. error':>10} "
          f"{'estimate':>10}")
    for target in range(1, 11):
        i = int(np.argmin(np.abs(orbits.values - target)))
        mu, period = float(orbits.values[i]), float(orbits.periods[i])
        _, ys = orbits.orbit(i)  # the section v = 0 at the orbit's largest x
        x0 = float(ys[np.argmax(ys[:, 0]), 0])
        reference = _scipy_period(mu, x0, period)
        print(f"{mu:8.4f} {period:14.9f} {reference:14.9f} "
              f"{abs(period / reference - 1):10.1e} {orbits.errors[i]:10.1e}")


class Bautin(dl.Model):
    """``r' = r (b1 + b2 r^2 - r^4)``, ``theta' = 1``: folds of cycles on
    ``b1 = -b2^2 / 4``."""

    b1: float = dl.param(-0.2, bounds=(-5.0, 5.0))
    b2: float = dl.param(1.0, bounds=(-5.0, 5.0))
    state_names = ("x", "y")

    def vector_field(self, t, y):
        r2 = y[0] ** 2 + y[1] ** 2
        g = self.b1 + self.b2 * r2 - r2**2
        return jnp.stack([g * y[0] - y[1], y[0] + g * y[1]])

    def initial_state(self):
        return jnp.array([0.0, 0.0])


def locate(repeats: int) -> None:
    import jax

    cycles = dl.periodic_orbits(Bautin(), "b1", ([0.0, 0.5**0.5], 2 * np.pi), -0.5, 0.5,
                                max_points=12, direction=-1)
    fold = [s for s in cycles.special if s.kind == "fold-of-cycles"][0]
    both = jax.jit(jax.jacfwd(lambda b2: (dl.locate(Bautin(b2=b2), fold, "b1").value,) * 2,
                              has_aux=True))
    b2 = iter(np.linspace(1.01, 1.1, repeats + 1))
    (slope, value), cold, warm = _best(repeats, lambda: jax.block_until_ready(both(next(b2))))
    at = float(np.linspace(1.01, 1.1, repeats + 1)[-1])
    print(f"locate a fold of cycles with its derivative: {1 / warm:,.1f} per second warm "
          f"(compile {cold:.2f} s); b1 off the closed form by "
          f"{abs(float(value) + at**2 / 4):.1e}, db1/db2 by {abs(float(slope) + at / 2):.1e}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=500)
    parser.add_argument("--chain", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", choices=("continuation", "spectrum", "cycles", "locate"))
    args = parser.parse_args()
    if args.only in (None, "continuation"):
        continuation(args.points, args.chain, args.repeats)
    if args.only in (None, "spectrum"):
        spectrum(args.repeats)
    if args.only in (None, "cycles"):
        cycles(args.repeats)
    if args.only in (None, "locate"):
        locate(args.repeats)


if __name__ == "__main__":
    main()
