"""Field models against exponax, in one process, at matched accuracy (issue 29).

    .venv/bin/python benchmarks/fields.py [--gs-points 128] [--gs-t1 1000] [--repeats 3]

Needs exponax (``pip install difflab[bench]``). Both sides step in Fourier space inside
one jitted ``lax.scan`` (exponax through ``step_fourier``), float64, and are timed warm
(best of ``--repeats``; the first call, compile included, is printed apart), each with
its stepper made beforehand. Printed per problem, method and step: seconds, the error of
the final fields against a common reference (DiffLab's ETDRK4 at a quarter of the finest
step), exponax's time over DiffLab's (above 1: DiffLab is faster), and DiffLab's time
when the solver is given by name (the stepper's weights then computed in the run). The
problems are the same equations on the same grid, split alike:

* Gray-Scott 2-D on ``[0, 1]^2`` (Du = 2e-5, Dv = 1e-5, F = 0.04, k = 0.06) from a
  Gaussian spot to ``t = --gs-t1``; exponax is run without dealiasing, as DiffLab;
* Kuramoto-Sivashinsky 1-D on ``[0, 32 pi]``, 128 points, Kassam and Trefethen's initial
  field, to ``t = 50`` (exponax's conservative form, both dealiased by 2/3).

On a shared machine timings vary by tens of percent from run to run.
"""

import argparse
import time

import exponax as ex
import jax
import jax.numpy as jnp
import numpy as np

import difflab as dl
from difflab.models import Grid, from_fourier, to_fourier


def _best(repeats, run):
    start = time.perf_counter()
    result = jax.block_until_ready(run())
    cold = time.perf_counter() - start
    warm = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(run())
        warm.append(time.perf_counter() - start)
    return result, cold, min(warm)


def _difflab(model, t1, dt, order, prebuilt=True):
    """DiffLab's run to ``t1``: with the stepper made beforehand (as exponax's is), or by
    name, its weights then computed inside the run."""
    name = f"etdrk{order}"
    made = {2: dl.solvers.ETDRK2, 4: dl.solvers.ETDRK4}[order](model.linear_part(), dt)
    solver = made if prebuilt else name
    start = model.initial_fields()

    def run():
        run = dl.solvers.simulate_fields(model, t1, dt=dt, frames=2, solver=solver,
                                         fields=start)
        return run.final

    return run


def _exponax(stepper, model, steps):
    """exponax's stepper advanced ``steps`` times in Fourier space from the model's start."""
    names = model.field_names
    u0 = jnp.stack([model.initial_fields()[n] for n in names])
    grid = model.grid

    @jax.jit
    def rollout(u_hat):
        return jax.lax.scan(lambda u, _: (stepper.step_fourier(u), None), u_hat, None,
                            length=steps)[0]

    def run():
        final = from_fourier(rollout(to_fourier(u0, grid)), grid)
        return {n: final[i] for i, n in enumerate(names)}

    return run


def _error(a, b):
    return max(float(jnp.max(jnp.abs(a[n] - b[n]))) for n in a)


def _compare(title, model, t1, dts, make_exponax, repeats):
    print(f"\n{title}")
    reference = _difflab(model, t1, dts[-1] / 4, 4)()
    print(f"{'method':8} {'dt':>6} {'difflab s':>9} {'error':>8} {'exponax s':>9} "
          f"{'error':>8} {'ratio':>5} {'by name s':>9}   first calls: difflab, exponax")
    for order in (2, 4):
        for dt in dts:
            ours, cold, warm = _best(repeats, _difflab(model, t1, dt, order))
            by_name = _best(repeats, _difflab(model, t1, dt, order, prebuilt=False))[2]
            stepper = make_exponax(dt, order)
            theirs, cold_x, warm_x = _best(repeats, _exponax(stepper, model, round(t1 / dt)))
            print(f"etdrk{order}   {dt:6.3g} {warm:9.3f} {_error(ours, reference):8.1e} "
                  f"{warm_x:9.3f} {_error(theirs, reference):8.1e} {warm_x / warm:5.2f} "
                  f"{by_name:9.3f}   {cold:.2f} s, {cold_x:.2f} s")


def gray_scott(points, t1, repeats):
    model = dl.models.GrayScott(grid=Grid(((0.0, 1.0), (0.0, 1.0)), (points, points)))

    def make(dt, order):
        return ex.stepper.reaction.GrayScott(2, 1.0, points, dt, order=order,
                                             dealiasing_fraction=1.0)

    _compare(f"Gray-Scott 2-D, {points}x{points}, t = {t1:g}", model, t1, (2.0, 1.0, 0.5),
             make, repeats)


def kuramoto_sivashinsky(repeats):
    model = dl.models.KuramotoSivashinsky()

    def make(dt, order):
        return ex.stepper.KuramotoSivashinskyConservative(1, 32 * np.pi, 128, dt,
                                                          order=order)

    _compare("Kuramoto-Sivashinsky 1-D, 128 points, t = 50", model, 50.0,
             (0.5, 0.25, 0.125), make, repeats)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gs-points", type=int, default=128)
    parser.add_argument("--gs-t1", type=float, default=1000.0)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"JAX {jax.__version__} on {jax.devices()[0].platform}, exponax {ex.__version__}")
    gray_scott(args.gs_points, args.gs_t1, args.repeats)
    kuramoto_sivashinsky(max(args.repeats, 20))  # milliseconds each: more repeats


if __name__ == "__main__":
    main()
