"""Explicit Runge-Kutta steps on a field model's fields (a dict of arrays on the grid).

The same methods as ``fixed.py`` (``euler``, ``heun``, ``rk4``), written for pytrees so
that a field model's state keeps its names and shapes. Each knows how far its stability
region reaches along the negative real axis (decaying modes: diffusion) and along the
imaginary axis (oscillating modes: waves), so a run can refuse a step that would blow up.
"""

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np


def _add(u, terms):
    """``u + sum(w * k)`` over ``(w, k)`` pairs of a scalar and a pytree like ``u``."""
    terms = [(w, k) for w, k in terms if w is not None]
    if not terms:
        return u
    weights = [w for w, _ in terms]

    def leaf(x, *ks):
        return x + sum(w * k for w, k in zip(weights, ks, strict=True))

    return jax.tree.map(leaf, u, *[k for _, k in terms])


class AbstractFieldRK(eqx.Module):
    """An explicit Runge-Kutta method of step ``dt`` given by its Butcher tableau."""

    dt: jax.Array
    order: ClassVar[int]
    tableau: ClassVar[tuple]  # (a rows, b, c)
    real_reach: ClassVar[float]
    imaginary_reach: ClassVar[float]
    fourier: ClassVar[bool] = False  # fields advance on the grid, not in Fourier space

    def __init__(self, dt):
        self.dt = jnp.asarray(dt, dtype=float)

    def step(self, vector_field, t, u):
        """``u`` after one step from ``t``; ``vector_field(t, u)`` is ``du/dt``."""
        a, b, c = self.tableau
        h, slopes = self.dt, []
        for row, ci in zip(a, c, strict=True):
            stage = _add(u, [(h * w if w else None, k) for w, k in zip(row, slopes)])
            slopes.append(vector_field(t + ci * h, stage))
        return _add(u, [(h * w if w else None, k) for w, k in zip(b, slopes, strict=True)])


class FieldEuler(AbstractFieldRK):
    """Explicit Euler, order 1: unstable for any purely oscillating mode."""

    order = 1
    tableau = (((),), (1.0,), (0.0,))
    real_reach, imaginary_reach = 2.0, 0.0


class FieldHeun(AbstractFieldRK):
    """Heun's method, order 2: weakly unstable for purely oscillating modes."""

    order = 2
    tableau = (((), (1.0,)), (0.5, 0.5), (0.0, 1.0))
    real_reach, imaginary_reach = 2.0, 0.0


class FieldRK4(AbstractFieldRK):
    """The classical fourth-order Runge-Kutta method."""

    order = 4
    tableau = (((), (0.5,), (0.0, 0.5), (0.0, 0.0, 1.0)), (1 / 6, 1 / 3, 1 / 3, 1 / 6),
               (0.0, 0.5, 0.5, 1.0))
    real_reach, imaginary_reach = 2.785, 2.828


def stable_dt(method: type[AbstractFieldRK], multipliers) -> float:
    """The largest step ``method`` keeps stable for modes with these eigenvalues (an
    array, or a list of them): each mode is held to the reach along the axis it lies
    closest to. ``inf`` where no mode decays or oscillates; ``0`` where a purely
    oscillating mode meets a method that cannot keep one."""
    lam = np.concatenate([np.ravel(np.asarray(m)) for m in multipliers])
    size = np.abs(lam)
    moving = size > 0
    if not moving.any():
        return float("inf")
    lam, size = lam[moving], size[moving]
    oscillating = np.abs(lam.imag) > np.abs(lam.real)
    reach = np.where(oscillating, method.imaginary_reach, method.real_reach)
    limited = (lam.real <= 0) | oscillating  # a growing mode grows whatever the step
    if not limited.any():
        return float("inf")
    return float(np.min(reach[limited] / size[limited]))


#: the explicit field steppers by the name ``solver=`` takes
FIELD_EXPLICIT = {"euler": FieldEuler, "heun": FieldHeun, "rk4": FieldRK4}
