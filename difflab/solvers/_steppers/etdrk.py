"""Exponential time differencing Runge-Kutta steppers (Cox & Matthews 2002).

For ``du/dt = L u + N(t, u)`` with ``L`` diagonal (a Fourier multiplier), the linear part
is taken exactly by ``exp(h L)`` and the nonlinear part by Runge-Kutta stages weighted
with the phi functions ``phi_k(z)``. These lose every digit to cancellation near
``z = 0``, so they are evaluated as Kassam & Trefethen (2005) do: as the mean of their
values on a circle around each ``z`` (Cauchy's integral by the trapezoidal rule), where
the direct formula is accurate. The weights depend only on ``L`` and the step, so a
stepper computes them once, when it is made, and every step reuses them.

States are pytrees (a field model's dict of fields in Fourier space); ``L`` has the
same structure.
"""

import abc
import math
from typing import Any, ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp


def phi_direct(k: int, z):
    """``phi_k(z)`` by its recurrence ``phi_0 = e^z``, ``phi_{j+1} = (phi_j - 1/j!) / z``:
    exact in exact arithmetic, inaccurate for small ``|z|``."""
    value = jnp.exp(z)
    for j in range(k):
        value = (value - 1.0 / math.factorial(j)) / z
    return value


def phi_functions(z, orders=(1, 2, 3), points: int = 32, radius: float = 1.0):
    """``[phi_k(z) for k in orders]``, each the mean of ``phi_direct`` over ``points``
    points on a circle of ``radius`` around ``z``; real where ``z`` is real. Order 0 is
    ``e^z`` itself.

    For a real ``z`` and an even number of points they come in conjugate pairs, so the
    upper half of the circle suffices (the real part of its mean), as Kassam & Trefethen
    take it. The exponential at ``z + w`` is ``e^z e^w``, the same ``e^w`` for every
    ``z``, and every order comes from it by the recurrence: a complex exponential per
    point of the circle, not per point, order and ``z``."""
    z = jnp.asarray(z)
    real = not jnp.iscomplexobj(z)
    count = points // 2 if real and points % 2 == 0 else points
    around = radius * jnp.exp(2j * jnp.pi * (jnp.arange(count) + 0.5) / points)
    inverse = 1 / (z[..., None] + around)
    exp_z = jnp.exp(z)
    value = exp_z[..., None] * jnp.exp(around)
    phis = [exp_z]
    for j in range(max(orders)):
        value = (value - 1.0 / math.factorial(j)) * inverse
        mean = jnp.mean(value, axis=-1)
        phis.append(mean.real if real else mean)
    return [phis[k] for k in orders]


def _weights(linear, dt, orders, scale: float = 1.0):
    """Per leaf of ``linear``: ``[exp(scale dt L), phi_k(scale dt L) for k in orders]``."""
    def one(multiplier):
        return phi_functions(scale * dt * jnp.asarray(multiplier), (0, *orders))

    return jax.tree.map(one, linear)


def _combine(*terms):
    """``sum(weight * state)`` over ``(weight_tree, state_tree)`` pairs, leaf by leaf."""
    def add(*leaves):
        pairs = zip(leaves[0::2], leaves[1::2], strict=True)
        return sum(w * u for w, u in pairs)

    flat = [tree for pair in terms for tree in pair]
    return jax.tree.map(add, *flat)


def _unzip(weights, count: int):
    """A tree of ``count``-lists as ``count`` trees."""
    is_list = lambda x: isinstance(x, list)  # noqa: E731
    return [jax.tree.map(lambda w, i=i: w[i], weights, is_leaf=is_list) for i in range(count)]


class AbstractETDRK(eqx.Module):
    """An ETD Runge-Kutta stepper for a fixed ``L`` and step ``dt``, weights made once."""

    dt: eqx.AbstractVar[jax.Array]
    order: ClassVar[int]
    fourier: ClassVar[bool] = True  # fields advance in Fourier space

    @abc.abstractmethod
    def step(self, nonlinear, t, u):
        """``u`` after one step from ``t``; ``nonlinear(t, u)`` is ``N`` (same pytree)."""


class ETDRK2(AbstractETDRK):
    """Cox & Matthews' second-order ETD2RK: ``a = e^{hL} u + h phi_1 N(u)``, then
    ``u' = a + h phi_2 (N(a) - N(u))``."""

    dt: jax.Array
    exp: Any
    phi1: Any
    phi2: Any
    order = 2

    def __init__(self, linear, dt):
        self.dt = dt = jnp.asarray(dt, dtype=float)
        self.exp, phi1, phi2 = _unzip(_weights(linear, dt, (1, 2)), 3)
        self.phi1 = jax.tree.map(lambda p: dt * p, phi1)
        self.phi2 = jax.tree.map(lambda p: dt * p, phi2)

    def step(self, nonlinear, t, u):
        n_u = nonlinear(t, u)
        a = _combine((self.exp, u), (self.phi1, n_u))
        n_a = nonlinear(t + self.dt, a)
        return jax.tree.map(lambda a, p, na, nu: a + p * (na - nu), a, self.phi2, n_a, n_u)


class ETDRK4(AbstractETDRK):
    """Cox & Matthews' fourth-order ETDRK4, in Kassam & Trefethen's form: weights
    ``e^{hL/2}``, ``e^{hL}``, ``Q = h/2 phi_1(hL/2)`` and ``f1 = h(phi_1 - 3 phi_2 +
    4 phi_3)``, ``f2 = 2h(phi_2 - 2 phi_3)`` (the weight of ``N(a) + N(b)``),
    ``f3 = h(4 phi_3 - phi_2)``."""

    dt: jax.Array
    exp: Any
    exp_half: Any
    q: Any
    f1: Any
    f2: Any
    f3: Any
    order = 4

    def __init__(self, linear, dt):
        self.dt = dt = jnp.asarray(dt, dtype=float)
        self.exp_half, half_phi1 = _unzip(_weights(linear, dt, (1,), scale=0.5), 2)
        self.exp, p1, p2, p3 = _unzip(_weights(linear, dt, (1, 2, 3)), 4)
        leaf = jax.tree.map
        self.q = leaf(lambda p: 0.5 * dt * p, half_phi1)
        self.f1 = leaf(lambda a, b, c: dt * (a - 3 * b + 4 * c), p1, p2, p3)
        self.f2 = leaf(lambda b, c: 2 * dt * (b - 2 * c), p2, p3)
        self.f3 = leaf(lambda b, c: dt * (4 * c - b), p2, p3)

    def step(self, nonlinear, t, u):
        half = t + 0.5 * self.dt
        n_u = nonlinear(t, u)
        a = _combine((self.exp_half, u), (self.q, n_u))
        n_a = nonlinear(half, a)
        b = _combine((self.exp_half, u), (self.q, n_a))
        n_b = nonlinear(half, b)
        twice_nb = jax.tree.map(lambda x, y: 2 * x - y, n_b, n_u)
        c = _combine((self.exp_half, a), (self.q, twice_nb))
        n_c = nonlinear(t + self.dt, c)
        n_ab = jax.tree.map(jnp.add, n_a, n_b)
        return _combine((self.exp, u), (self.f1, n_u), (self.f2, n_ab), (self.f3, n_c))


#: the exponential steppers by the name ``solver=`` takes
ETD_SOLVERS = {"etdrk2": ETDRK2, "etdrk4": ETDRK4}
