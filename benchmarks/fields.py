"""Field models against exponax and py-pde, in one process, at matched accuracy.

    .venv/bin/python benchmarks/fields.py [--gs-points 128] [--gs-t1 1000] [--repeats 3]
        [--pypde-points 256] [--pypde-t1 100] [--stencil-points 1024]
        [--sections exponax,pypde,bandwidth,weights]
    (``--sections ks``: Kuramoto-Sivashinsky alone)

Needs exponax and py-pde (``pip install difflab[bench]``). Both sides step in Fourier
space inside one jitted ``lax.scan`` (exponax through ``step_fourier``), float64, and
are timed warm (best of ``--repeats``, at least 50 for the millisecond runs of Kuramoto-
Sivashinsky; the runs of one line are timed in turn; the first call, compile included,
is printed apart), each with its stepper made beforehand. Printed per problem, method
and step: seconds, the error of the final fields against each side's own reference (its
ETDRK4 at a quarter of the finest step; how far the two references differ is printed
first), exponax's time over DiffLab's (above 1: DiffLab is faster), called as is and
inside the caller's ``jax.jit`` (as exponax's rollout is), and DiffLab's time when the
solver is given by name (the stepper's weights then computed in the run). The problems
are the same equations on the same grid, split alike:

* Gray-Scott 2-D on ``[0, 1]^2`` (Du = 2e-5, Dv = 1e-5, F = 0.04, k = 0.06) from a
  Gaussian spot to ``t = --gs-t1``; exponax is run without dealiasing, as DiffLab;
* Kuramoto-Sivashinsky 1-D on ``[0, 32 pi]``, 128 points, Kassam and Trefethen's initial
  field, to ``t = 50`` (exponax's conservative form, both dealiased by 2/3: DiffLab keeps
  the wavenumbers up to 42 of 64, exponax those up to 41).

py-pde (finite differences of order 2, numba, explicit steps) runs beside DiffLab on:

* Gray-Scott 2-D on ``--pypde-points`` squared points to ``t = --pypde-t1``, py-pde's
  Euler step at ``dt = 0.1`` (its stability limit is about 0.19 there), DiffLab's ETDRK4
  at ``dt = 1`` and ``0.5``; errors against DiffLab's ETDRK4 at ``dt = 0.25``, so py-pde's
  include its finite-difference error in space;
* 2-D diffusion of a Gaussian on the periodic unit square (``D = 1e-3`` to ``t = 1``)
  against its closed form (a sum of periodic images): the fastest run of each within
  :data:`DIFFUSION_TOL` of it, DiffLab's ETDRK4 (spectral, one step: exact in time for a
  linear problem) against py-pde's Euler step at ``dt = h^2 / (8 D)``, where the errors
  of time and space cancel to leading order (its most accurate step for the points).

py-pde's first call compiles with numba (printed apart); it is timed on a second call.
Last, the memory bandwidth an explicit stencil step reaches: a 2-D Laplacian of order 2
and an Euler update on ``--stencil-points`` squared float64 points (16 MiB read and
written a step at 1024) against a copy of 128 MiB or more in the same run (NumPy's on a
CPU, the device's on an accelerator; and NumPy's copy of one field, which caches may
hold: the stencil's own arrays may be served from cache too). And the time
to make an ETDRK4 stepper for Gray-Scott (its weights' contour integrals), DiffLab's
against exponax's.

On a shared machine timings vary by tens of percent from run to run.
"""

import argparse
import time
import warnings

import exponax as ex
import jax
import jax.numpy as jnp
import numpy as np
import pde

import difflab as dl
from difflab.models import (
    AbstractFieldModel,
    Grid,
    from_fourier,
    laplace,
    laplace_multiplier,
    to_fourier,
)

DIFFUSION_TOL = 5e-5  # the largest error (of a peak of 0.5) a diffusion run may have


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


def _difflab(model, t1, dt, order, prebuilt=True, jitted=False):
    """DiffLab's run to ``t1``: with the stepper made beforehand (as exponax's is), or by
    name, its weights then computed inside the run; ``jitted``: called inside the caller's
    ``jax.jit``, as exponax's rollout is (one dispatch; the host's checks of the frames
    for NaN then left out)."""
    name = f"etdrk{order}"
    made = {2: dl.solvers.ETDRK2, 4: dl.solvers.ETDRK4}[order](model.linear_part(), dt)
    solver = made if prebuilt else name
    start = model.initial_fields()

    def final(fields):
        return dl.solvers.simulate_fields(model, t1, dt=dt, frames=2, solver=solver,
                                          fields=fields).final

    compiled = jax.jit(final)
    return (lambda: compiled(start)) if jitted else (lambda: final(start))


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


def _in_turn(repeats, *runs):
    """``(result, first call s, best s)`` of each run, the repeats taken in turn (one of
    each, then again), so that a noisy spell of the machine falls on all of them."""
    firsts = [_best(1, run) for run in runs]
    best = [b for _, _, b in firsts]
    for _ in range(repeats):
        for i, run in enumerate(runs):
            start = time.perf_counter()
            jax.block_until_ready(run())
            best[i] = min(best[i], time.perf_counter() - start)
    return [(result, cold, b) for (result, cold, _), b in zip(firsts, best, strict=True)]


def _compare(title, model, t1, dts, make_exponax, repeats):
    """Each side's error against its own reference (its ETDRK4 at a quarter of the finest
    step): the two discretizations differ slightly (dealiasing, rounding), and in a
    chaotic problem that difference grows to more than the finer steps' errors."""
    print(f"\n{title}")
    fine = dts[-1] / 4
    reference = _difflab(model, t1, fine, 4)()
    reference_x = _exponax(make_exponax(fine, 4), model, round(t1 / fine))()
    print(f"the two references differ by {_error(reference, reference_x):.1e}")
    print(f"{'method':8} {'dt':>6} {'difflab s':>9} {'in jit s':>8} {'error':>8} "
          f"{'exponax s':>9} {'error':>8} {'ratio':>5} {'in jit':>6} {'by name s':>9}"
          f"   first calls: difflab, exponax")
    for order in (2, 4):
        for dt in dts:
            theirs = _exponax(make_exponax(dt, order), model, round(t1 / dt))
            (ours, cold, warm), (_, _, jitted), (_, _, by_name), (theirs, cold_x, warm_x) = \
                _in_turn(repeats, _difflab(model, t1, dt, order),
                         _difflab(model, t1, dt, order, jitted=True),
                         _difflab(model, t1, dt, order, prebuilt=False), theirs)
            print(f"etdrk{order}   {dt:6.3g} {warm:9.4f} {jitted:8.4f} "
                  f"{_error(ours, reference):8.1e} {warm_x:9.4f} "
                  f"{_error(theirs, reference_x):8.1e} {warm_x / warm:5.2f} "
                  f"{warm_x / jitted:6.2f} {by_name:9.4f}   {cold:.2f} s, {cold_x:.2f} s")


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


def _pypde_grid(points):
    """py-pde's periodic unit square, shifted half a cell so its cell centres are DiffLab's
    points ``i h``."""
    h = 1.0 / points
    return pde.CartesianGrid([[-h / 2, 1.0 - h / 2]] * 2, points, periodic=True)


def _pypde_run(equation, state, t1, dt):
    """py-pde's Euler steps to ``t1``: ``(final state, first call s, warm call s)``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        stepper = pde.solvers.EulerSolver(equation, backend="numba").make_stepper(state, dt)
        stepper(state.copy(), 0.0, dt)  # numba compiles here
        cold = time.perf_counter() - start
    final = state.copy()
    start = time.perf_counter()
    stepper(final, 0.0, t1)
    return final, cold, time.perf_counter() - start


def pypde_gray_scott(points, t1, repeats):
    model = dl.models.GrayScott(grid=Grid(((0.0, 1.0), (0.0, 1.0)), (points, points)))
    print(f"\nGray-Scott 2-D against py-pde, {points}x{points}, t = {t1:g}")
    reference = _difflab(model, t1, 0.25, 4)()
    start = {n: np.asarray(u) for n, u in model.initial_fields().items()}
    grid = _pypde_grid(points)
    equation = pde.PDE({
        "u": f"{model.Du} * laplace(u) - u * v**2 + {model.F} * (1 - u)",
        "v": f"{model.Dv} * laplace(v) + u * v**2 - {model.F + model.k} * v"}, bc="periodic")
    state = pde.FieldCollection([pde.ScalarField(grid, start[n], label=n) for n in "uv"])
    final, cold, theirs = _pypde_run(equation, state, t1, 0.1)
    error = _error({"u": final[0].data, "v": final[1].data}, reference)
    print(f"py-pde   euler   dt 0.1   {theirs:8.2f} s  error {error:.1e}   first call {cold:.1f} s")
    for dt in (5.0, 1.0, 0.5):  # 5: still far more accurate than py-pde's run
        ours, first, warm = _best(repeats, _difflab(model, t1, dt, 4))
        print(f"difflab  etdrk4  dt {dt:<4g}  {warm:8.2f} s  error {_error(ours, reference):.1e}"
              f"   first call {first:.1f} s   py-pde / difflab {theirs / warm:.3g}")


class Diffusion(AbstractFieldModel):
    """``du/dt = D laplace(u)`` from a Gaussian of variance ``S0`` at the centre."""

    grid: Grid
    D: float = 1e-3
    field_names = ("u",)
    S0 = 0.002

    def linear_part(self):
        return {"u": self.D * jnp.asarray(laplace_multiplier(self.grid))}

    def nonlinear_part(self, t, fields):
        return {"u": jnp.zeros_like(fields["u"])}

    def initial_fields(self):  # traced where a run asks for the fields' shapes
        return {"u": jnp.asarray(self.exact(*self.grid.coordinates, 0.0))}

    def exact(self, x, y, t):
        """The closed form: the Gaussian spread to variance ``S0 + 2 D t``, with the
        periodic images of the nearest cells (NumPy's for NumPy coordinates)."""
        s = self.S0 + 2 * self.D * t
        xp = np if isinstance(x, np.ndarray) else jnp
        return self.S0 / s * sum(xp.exp(-((x - 0.5 - i) ** 2 + (y - 0.5 - j) ** 2) / (2 * s))
                                 for i in (-1, 0, 1) for j in (-1, 0, 1))


def _within(rows):
    """The fastest of ``(label, seconds, error)`` rows within :data:`DIFFUSION_TOL`."""
    good = [r for r in rows if r[2] <= DIFFUSION_TOL]
    return min(good, key=lambda r: r[1]) if good else None


def diffusion(repeats, t1=1.0):
    print(f"\n2-D diffusion of a Gaussian to t = {t1:g} against its closed form; "
          f"tolerance {DIFFUSION_TOL:g}")
    ours = []
    for points in (32, 64):
        model = Diffusion(Grid(((0.0, 1.0), (0.0, 1.0)), (points, points)))
        final, first, warm = _best(max(repeats, 20), _difflab(model, t1, t1, 4))  # ms each
        x, y = (np.asarray(c) for c in model.grid.coordinates)
        error = float(np.max(np.abs(np.asarray(final["u"]) - model.exact(x, y, t1))))
        ours.append((f"difflab etdrk4 {points}^2, 1 step", warm, error))
        print(f"{ours[-1][0]:34} {warm:8.4f} s  error {error:.1e}   first call {first:.1f} s")
    theirs = []
    for points in (192,):  # 128^2 misses the tolerance (9e-5); finer grids only cost more
        h, model = 1.0 / points, Diffusion(Grid(((0.0, 1.0), (0.0, 1.0)), (points, points)))
        steps = int(np.ceil(t1 / (h * h / (8 * model.D))))
        grid = _pypde_grid(points)
        x, y = grid.cell_coords[..., 0] + 0.0, grid.cell_coords[..., 1] + 0.0
        state = pde.ScalarField(grid, model.exact(x, y, 0.0))
        final, cold, warm = _pypde_run(pde.DiffusionPDE(model.D, bc="periodic"), state, t1,
                                       t1 / steps)
        error = float(np.max(np.abs(final.data - model.exact(x, y, t1))))
        theirs.append((f"py-pde euler {points}^2, {steps} steps", warm, error))
        print(f"{theirs[-1][0]:34} {warm:8.4f} s  error {error:.1e}   first call {cold:.1f} s")
    best_ours, best_theirs = _within(ours), _within(theirs)
    if best_ours and best_theirs:
        print(f"time to {DIFFUSION_TOL:g}: py-pde / difflab = {best_theirs[1] / best_ours[1]:.3g}"
              f" ({best_theirs[0]} against {best_ours[0]})")


def _seconds(repeats, run):
    """The best of ``repeats`` calls of ``run``."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def _copy_bound(repeats, nbytes):
    """Bytes a second that a copy of ``nbytes`` (read and written) moves: NumPy's on a
    CPU, a jitted ``x + 1`` in the device's memory on an accelerator."""
    if jax.devices()[0].platform == "cpu":
        big = np.random.default_rng(1).random(nbytes // 8)
        copy = np.empty_like(big)
        return 2 * big.nbytes / _seconds(repeats * 3, lambda: np.copyto(copy, big))
    big = jnp.asarray(np.random.default_rng(1).random(nbytes // 8))
    add = jax.jit(lambda x: x + 1.0)
    jax.block_until_ready(add(big))
    return 2 * big.nbytes / _seconds(repeats * 3, lambda: jax.block_until_ready(add(big)))


def bandwidth(repeats, points=1024):
    """Bytes an explicit stencil step moves (the field read, the new one written) per
    second, against a copy of a large array (:func:`_copy_bound`)."""
    print(f"\nExplicit stencil step, {points}x{points} float64: laplace (order 2) and Euler")
    on_cpu = jax.devices()[0].platform == "cpu"
    grid = Grid(((0.0, 1.0), (0.0, 1.0)), (points, points))
    dt = 0.2 / points**2
    u = jnp.asarray(np.random.default_rng(0).random((points, points)))
    moved = 2 * u.nbytes
    big = max(128 << 20, 8 * u.nbytes)  # past the caches
    bound = _copy_bound(repeats, big)
    field, out = np.asarray(u), np.empty(u.shape)
    cached = moved / _seconds(repeats * 10, lambda: np.copyto(out, field))
    print(f"{'numpy' if on_cpu else 'device'} copy of {big >> 20} MiB: {bound / 1e9:6.2f} "
          f"GB/s (the bound); numpy copy of one field ({u.nbytes / 2**20:g} MiB, in cache where "
          f"it fits): {cached / 1e9:.2f} GB/s")

    def interior(u):  # no wrap-around: what XLA reaches on slices alone
        inner = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * u[1:-1, 1:-1]
        return u[1:-1, 1:-1] + dt * points**2 * inner

    def periodic(u):
        return u + dt * laplace(u, grid, order=2)

    def rolled(u):  # the same sum from whole shifted copies of u: one fused pass
        return u + dt * points**2 * sum(jnp.roll(u, shift, axis) for axis in (0, 1)
                                        for shift in (1, -1)) - 4 * dt * points**2 * u

    for label, step in (("difflab laplace, periodic", periodic),
                        ("jax slices, interior only", interior),
                        ("jnp.roll, periodic", rolled)):
        step = jax.jit(step)
        jax.block_until_ready(step(u))
        per = _seconds(repeats * 10, lambda step=step: jax.block_until_ready(step(u)))
        print(f"{label:30} {per * 1e3:6.2f} ms a step, {moved / per / 1e9:6.2f} GB/s, "
              f"{moved / per / bound:.2f} of the bound")
    if not on_cpu:
        return  # py-pde steps on the CPU: its bound is not the device's
    operator = _pypde_grid(points).make_operator("laplace", bc="periodic")

    def pypde_step():
        operator(field, out=out)
        out[...] = field + dt * out

    pypde_step()
    per = _seconds(repeats * 10, pypde_step)
    print(f"{'py-pde laplace (numba), Euler':30} {per * 1e3:6.2f} ms a step, "
          f"{moved / per / 1e9:6.2f} GB/s, {moved / per / bound:.2f} of the bound")


def weights(repeats, sizes=(128, 256)):
    """Seconds to make the ETDRK4 stepper of Gray-Scott's linear part (its contour
    integrals): DiffLab's called as is and inside ``jax.jit`` (as a run with the solver
    given by name computes them), against exponax's stepper made for the same grid."""
    print("\nETDRK4 weights of Gray-Scott's linear part, dt = 1")
    make = jax.jit(dl.solvers.ETDRK4)
    for points in sizes:
        linear = dl.models.GrayScott(
            grid=Grid(((0.0, 1.0), (0.0, 1.0)), (points, points))).linear_part()
        eager = _best(repeats, lambda linear=linear: dl.solvers.ETDRK4(linear, 1.0))[2]
        jitted = _best(repeats, lambda linear=linear: make(linear, 1.0))[2]
        theirs = _best(repeats, lambda points=points: ex.stepper.reaction.GrayScott(
            2, 1.0, points, 1.0, order=4, dealiasing_fraction=1.0))[2]
        print(f"{points}x{points}: difflab {eager * 1e3:7.1f} ms, in jit {jitted * 1e3:6.1f} ms;"
              f" exponax {theirs * 1e3:7.1f} ms; exponax / difflab {theirs / eager:.2f}, "
              f"in jit {theirs / jitted:.2f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gs-points", type=int, default=128)
    parser.add_argument("--gs-t1", type=float, default=1000.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--pypde-points", type=int, default=256)
    parser.add_argument("--pypde-t1", type=float, default=100.0)
    parser.add_argument("--stencil-points", type=int, default=1024)
    parser.add_argument("--sections", default="exponax,pypde,bandwidth,weights")
    args = parser.parse_args()
    sections = args.sections.split(",")
    print(f"JAX {jax.__version__} on {jax.devices()[0].platform}, exponax {ex.__version__}, "
          f"py-pde {pde.__version__}")
    if "exponax" in sections:
        gray_scott(args.gs_points, args.gs_t1, args.repeats)
    if "exponax" in sections or "ks" in sections:
        kuramoto_sivashinsky(max(args.repeats, 50))  # milliseconds each: more repeats
    if "pypde" in sections:
        pypde_gray_scott(args.pypde_points, args.pypde_t1, args.repeats)
        diffusion(args.repeats)
    if "bandwidth" in sections:
        bandwidth(args.repeats, args.stencil_points)
    if "weights" in sections:
        weights(max(args.repeats, 10))


if __name__ == "__main__":
    main()
