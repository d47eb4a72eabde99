"""Stiff fields between walls: DiffLab's ``imex2`` against the same steps solved by SciPy's
sparse LU, in one process.

    .venv/bin/python benchmarks/walled_implicit.py [--points 256] [--steps 20] [--dt 0.5]
        [--repeats 3]

The problem: ``u_t = D laplace(u) - k u`` on the unit square, Neumann walls across x and
``u = 0`` on the walls across y, ``D = 1e-2``, ``k = 0.1``, from a rough start (unit
Gaussian noise): at 256x256 and ``dt = 0.5`` the stages' ``c D |laplace|`` reach about
1e3. Typed, the whole right-hand side is the model's linear operator, so an ``imex2``
step is the implicit half of Ascher, Ruuth and Spiteri's (2,2,2):
``U1 = (I - g h L)^-1 u`` and ``u' = (I - g h L)^-1 (u + (1 - g) h L U1)``.

DiffLab solves each stage by GMRES, preconditioned by transforms (its linear operator
fitted as second differences and inverted by cosine and sine transforms). The reference
forms ``L`` as a sparse matrix, the Kronecker sum of the walled 1-D second differences
read column by column from DiffLab's own ``laplace`` (checked against the model's
operator on a random field, printed), factors ``I - g h L`` once with SuperLU and takes
the same steps by triangular solves. Printed: each side's seconds warm (best of
``--repeats``; the factorization apart), the largest difference of their final fields,
and SciPy's time over DiffLab's (above 1: DiffLab is faster). On a shared machine
timings vary by tens of percent from run to run.
"""

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import splu

import difflab as dl
from difflab.models import Grid, laplace

D, K = 1e-2, 0.1
G = 1 - 1 / np.sqrt(2)


def _model(points: int):
    return dl.models.from_equations(f"""
    name: Plate
    params: D = {D}, k = {K}
    grid: x = neumann(0, 1, {points}), y = dirichlet(0, 1, {points}, 0)
    init: u = 0*x
    du/dt = D*laplace(u) - k*u
    """)()


def _second_difference(grid_1d: Grid) -> sp.csr_matrix:
    n = grid_1d.points[0]
    dense = jax.jacfwd(lambda u: laplace(u, grid_1d))(jnp.zeros(n))
    return sp.csr_matrix(np.asarray(dense))


def _operator(model) -> sp.csc_matrix:
    """``L`` as a sparse matrix over the flattened field (x the slow axis)."""
    (ex, ey), (nx, ny) = model.grid.extent, model.grid.points
    lx = _second_difference(Grid((ex,), (nx,), model.grid.boundaries[0]))
    ly = _second_difference(Grid((ey,), (ny,), model.grid.boundaries[1]))
    eye_x, eye_y = sp.identity(nx, format="csr"), sp.identity(ny, format="csr")
    return (D * (sp.kron(lx, eye_y) + sp.kron(eye_x, ly)) - K * sp.identity(nx * ny)).tocsc()


def _scipy_run(lu, matrix, u, steps: int, h: float):
    for _ in range(steps):
        u1 = lu.solve(u)
        u = lu.solve(u + (1 - G) * h * (matrix @ u1))
    return u


def _best(repeats: int, run):
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        result = jax.block_until_ready(run())
        best = min(best, time.perf_counter() - start)
    return result, best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=256)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--dt", type=float, default=0.5)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    model, n, h = _model(args.points), args.points, args.dt
    start = np.random.default_rng(0).standard_normal((n, n))
    matrix = _operator(model)
    probe = np.random.default_rng(1).standard_normal((n, n))
    mismatch = np.max(np.abs(matrix @ probe.ravel()
                             - np.asarray(model.linear_operator(0.0, {"u": probe})["u"]).ravel()))
    print(f"JAX {jax.__version__} on {jax.devices()[0].platform}; {n}x{n} points, "
          f"{args.steps} steps of {h:g}; sparse L against the model's operator: "
          f"{mismatch:.1e}")

    def ours():
        return dl.simulate(model, args.steps * h, y0={"u": jnp.asarray(start)},
                           solver="imex2", dt=h, n_save=2)["u"][-1]

    first = time.perf_counter()
    jax.block_until_ready(ours())
    first = time.perf_counter() - first
    final, seconds = _best(args.repeats, ours)
    factored = time.perf_counter()
    lu = splu((sp.identity(n * n, format="csc") - G * h * matrix).tocsc())
    factored = time.perf_counter() - factored
    reference, theirs = _best(args.repeats, lambda: _scipy_run(lu, matrix, start.ravel(),
                                                               args.steps, h))
    difference = np.max(np.abs(np.asarray(final).ravel() - reference))
    print(f"difflab imex2 {seconds:8.3f} s  (first call {first:.2f} s)")
    print(f"scipy splu    {theirs:8.3f} s  (factorization {factored:.3f} s apart)")
    print(f"largest difference {difference:.1e} (of {np.max(np.abs(reference)):.2e}); "
          f"scipy / difflab {theirs / seconds:.2f}, with its factorization "
          f"{(theirs + factored) / seconds:.2f}")


if __name__ == "__main__":
    main()
