"""Branch switching at a period-doubling point: the first orbit of the doubled branch.

At a period doubling a Floquet multiplier is -1: the orbit has a variation ``v(t)`` with
``v(t + T) = -v(t)``. Counted as an orbit of period ``2 T`` (the orbit traversed twice),
the shooting system has then a two-dimensional kernel: the twice-traversed branch's own
tangent and ``psi = (v, -v)`` (the doubled branch's tangent: the doubled orbits are
``x(t) + s v(t) + O(s^2)`` at ``p = p_PD + O(s^2)``). ``psi`` is found on the orbit's own
mesh as the null vector of the *anti-cyclic* system ``A_i v_i = v_{i+1}``, ``v_m = -v_0``
(the segments' Jacobians ``A_i``), shifted along the flow to meet the phase condition.
The doubled branch then starts with a pseudo-arclength step along ``psi``: the
hyperplane normal to it, a step away, cuts the doubled branch and not the first one.

The doubled orbit's mesh is the first orbit's twice over (twice the segments, each of
the same RK4 steps), so the orbit traversed twice solves the discretised doubled system
exactly too.
"""

import jax.numpy as jnp
import numpy as np

from .cycle_steps import _Orbit
from .shooting import speeds

SWITCHABLE = ("period-doubling", "branch-point-of-cycles")
TORUS = ("an invariant torus is born here, not a branch of periodic orbits; tori are out of "
         "reach of periodic_orbits (follow them with dl.poincare or dl.lyapunov)")


def check_switchable(point) -> None:
    """A one-line ``ValueError`` unless cycles can be switched at ``point``."""
    kind = point.kind
    if kind == "neimark-sacker":
        raise ValueError(f"at the Neimark-Sacker point ({point.value:g}) {TORUS}")
    if kind not in SWITCHABLE:
        raise ValueError(f"periodic orbits switch branches at a period-doubling point or a "
                         f"branch point of cycles, not at a {kind} point (a fold of cycles "
                         f"is on the branch itself)")


def antiperiodic(blocks) -> np.ndarray:
    """The variation ``v_0 .. v_{m-1}`` (m, n) with ``A_i v_i = v_{i+1}`` and
    ``v_m = -v_0``: the null vector of the anti-cyclic block matrix (unit length)."""
    m, n = blocks.shape[:2]
    system = np.zeros((m * n, m * n))
    for i in range(m):
        j = (i + 1) % m
        system[i * n:(i + 1) * n, i * n:(i + 1) * n] = blocks[i]
        system[i * n:(i + 1) * n, j * n:(j + 1) * n] -= np.eye(n) if j else -np.eye(n)
    return np.linalg.svd(system)[2][-1].reshape(m, n)


def halved_mesh(segments: int, steps: int) -> tuple[int, int]:
    """Segments and RK4 steps per period for the orbit at the doubling point, so that
    the doubled orbits get ``segments`` segments of the same ``steps / segments`` steps
    (the mesh a branch with these settings has: compiled once for both)."""
    m = segments // 2 if segments % 2 == 0 else segments
    return m, m * max(1, round(steps / segments))


def doubled_seed(shooter, orbit: _Orbit, m: int) -> _Orbit:
    """``orbit`` (on ``m`` segments) traversed twice, on ``shooter``'s mesh of ``2 m``
    segments, with the doubled branch's tangent ``psi``."""
    n = shooter.n
    xs = np.asarray(orbit.u[:m * n]).reshape(m, n)
    period, value = orbit.u[-2], orbit.u[-1]
    blocks = np.asarray(orbit.blocks)
    v = antiperiodic(blocks)
    points, psi = np.concatenate([xs, xs]), np.concatenate([v, -v])
    u = np.concatenate([points.ravel(), [2 * period, value]])
    flows = np.asarray(speeds(shooter.model, shooter.param, shooter.t, jnp.asarray(u),
                              shooter.m))
    d = orbit.flow  # the phase condition's normal at x_0
    psi = psi - (d @ psi[0]) / (d @ flows[0]) * flows  # slid along the flow onto it
    tangent = np.concatenate([psi.ravel(), [0.0, 0.0]])
    tangent /= np.sqrt(tangent @ (shooter.weights * tangent))
    return _Orbit(u, tangent, True, 0, np.concatenate([blocks, blocks]), d, orbit.error)
