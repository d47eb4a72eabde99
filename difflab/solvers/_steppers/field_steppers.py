"""Explicit Runge-Kutta steps on a field model's fields (a dict of arrays on the grid).

The same methods as ``fixed.py`` (``euler``, ``heun``, ``rk4``), written for pytrees so
that a field model's state keeps its names and shapes. Each knows its stability region
from its tableau: how far it reaches in every direction of the left half-plane (decaying
modes: diffusion; oscillating ones: waves; damped oscillations: advection with
diffusion), so a run can refuse a step that would blow up.
"""

import functools
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

    @classmethod
    def amplification(cls, z):
        """``R(z)``: what one step multiplies a mode ``exp(lambda t)`` by, ``z = dt
        lambda`` (an array): its stages on ``u' = lambda u`` from ``u = 1``."""
        a, b, _ = cls.tableau
        stages = []
        for row in a:
            stages.append(1 + z * sum((w * y for w, y in zip(row, stages)), 0.0))
        return 1 + z * sum(w * y for w, y in zip(b, stages, strict=True))

    @classmethod
    def reach(cls, angle):
        """How far the stability region ``|R(z)| <= 1`` reaches from 0 along ``z = r
        exp(i angle)``, for ``angle`` from pi/2 (the imaginary axis) to pi (the negative
        real axis); 0 where it holds no stretch of that ray."""
        angles, reaches = _reaches(cls)
        return np.interp(angle, angles, reaches)


class FieldEuler(AbstractFieldRK):
    """Explicit Euler, order 1: unstable for any purely oscillating mode."""

    order = 1
    tableau = (((),), (1.0,), (0.0,))


class FieldHeun(AbstractFieldRK):
    """Heun's method, order 2: weakly unstable for purely oscillating modes."""

    order = 2
    tableau = (((), (1.0,)), (0.5, 0.5), (0.0, 1.0))


class FieldRK4(AbstractFieldRK):
    """The classical fourth-order Runge-Kutta method."""

    order = 4
    tableau = (((), (0.5,), (0.0, 0.5), (0.0, 0.0, 1.0)), (1 / 6, 1 / 3, 1 / 3, 1 / 6),
               (0.0, 0.5, 0.5, 1.0))


#: the rays of the left half-plane on which each method's stability region is measured
RAYS = 1001
#: a reach below this is none (a step of a six-thousandth of the mode's period or less):
#: the method amplifies such modes at any step, as euler and heun do a wave's
NO_REACH = 1e-3


@functools.cache
def _reaches(method: type[AbstractFieldRK]) -> tuple[np.ndarray, np.ndarray]:
    """``(angles, reaches)`` of the stability region along ``RAYS`` rays from pi/2 to pi:
    the first radius where ``|R| > 1`` found on a scan out to 5, then bisected."""
    angles = np.linspace(np.pi / 2, np.pi, RAYS)
    ray = np.exp(1j * angles)[:, None]
    radii = np.linspace(0.0, 5.0, 251)[1:]
    outside = np.abs(method.amplification(radii * ray)) > 1 + 1e-14
    first = np.where(outside.any(axis=1), np.argmax(outside, axis=1), radii.size - 1)
    low, high = np.where(first > 0, radii[first - 1], 0.0), radii[first]
    for _ in range(50):
        mid = 0.5 * (low + high)
        out = np.abs(method.amplification(mid * ray[:, 0])) > 1 + 1e-14
        low, high = np.where(out, low, mid), np.where(out, mid, high)
    return angles, np.where(low < NO_REACH, 0.0, low)


def stable_dt(method: type[AbstractFieldRK], multipliers) -> float:
    """The largest step ``method`` keeps stable for modes with these eigenvalues (an
    array, or a list of them): each mode ``lambda`` needs ``dt |lambda|`` within the
    region's reach along its direction. ``inf`` where no mode decays or oscillates; ``0``
    where a mode meets a method that amplifies it at any step (a purely oscillating mode
    and ``euler``). A growing oscillation is held to the reach along the imaginary axis."""
    lam = np.concatenate([np.ravel(np.asarray(m)) for m in multipliers])
    size = np.abs(lam)
    moving = size > 0
    if not moving.any():
        return float("inf")
    lam, size = lam[moving], size[moving]
    oscillating = np.abs(lam.imag) > np.abs(lam.real)
    limited = (lam.real <= 0) | oscillating  # a growing mode grows whatever the step
    if not limited.any():
        return float("inf")
    angle = np.maximum(np.arctan2(np.abs(lam.imag), lam.real), np.pi / 2)
    return float(np.min(method.reach(angle[limited]) / size[limited]))


#: the explicit field steppers by the name ``solver=`` takes
FIELD_EXPLICIT = {"euler": FieldEuler, "heun": FieldHeun, "rk4": FieldRK4}
