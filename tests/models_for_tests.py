"""Toy models shared by the test files: ``from tests.models_for_tests import Decay``.

Each has a closed-form solution or a known property the tests check against. A model that
is special to one test (a user model written to a file, a plugin, a model with a network)
stays in that test.
"""

import equinox as eqx
import jax.numpy as jnp
import numpy as np

import difflab as dl


class Decay(dl.Model):
    """Exponential decay ``u' = -rate u`` from ``u(0) = 1``: ``u(t) = exp(-rate t)``."""

    rate: float = 1.0
    state_names = ("u",)

    def vector_field(self, t, y):
        return -self.rate * y

    def initial_state(self):
        return jnp.array([1.0])


class Spring(dl.Model):
    """A damped spring ``x'' = -k x - c x'`` from ``x = 1, v = 0`` (``c=0.0``: undamped)."""

    k: float = dl.param(1.0, bounds=(0.0, 10.0))
    c: float = 0.1
    state_names = ("x", "v")

    def vector_field(self, t, y):
        x, v = y
        return jnp.stack([v, -self.k * x - self.c * v])

    def initial_state(self):
        return jnp.array([1.0, 0.0])


class Noisy(dl.SDEModel):
    """``dy = -y dt + sigma dW`` from zero, one state per name in ``state_names``."""

    sigma: float = 0.5
    state_names = ("x",)

    def vector_field(self, t, y):
        return -y

    def diffusion(self, t, y):
        return self.sigma * jnp.ones_like(y)

    def initial_state(self):
        return jnp.zeros(len(self.state_names))


class NoisyPair(Noisy):
    """``Noisy`` with two independent states."""

    state_names = ("x", "y")


class VanDerPol(dl.Model):
    """Van der Pol in Lienard form as the Test Set for IVP Solvers states it (VDPOL):
    ``y1' = y2``, ``y2' = ((1 - y1^2) y2 - y1) / eps`` from ``(2, 0)``; stiff for small
    ``eps`` (the Test Set's 1e-6). Its reference state at ``t = 2`` is ``VDPOL_T2``."""

    eps: float = 1e-6
    state_names = ("y1", "y2")

    def vector_field(self, t, y):
        y1, y2 = y
        return jnp.stack([y2, ((1.0 - y1**2) * y2 - y1) / self.eps])

    def initial_state(self):
        return jnp.array([2.0, 0.0])


VDPOL_T2 = (1.706167732170483, -0.8928097010247975)  # the Test Set's reference (RADAU)


class Rod(dl.Model):
    """The heat equation ``u_t = D u_xx`` on ``[0, 1]``, ``u = 0`` at both ends, by the
    method of lines: ``n`` named states ``u0..u{n-1}`` at ``x_i = (i + 1) dx``,
    ``dx = 1 / (n + 1)``, from ``sin(pi x)``. A stiff ODE with a dense Jacobian (its
    fastest mode decays at about ``4 D / dx^2``): solved with ``kvaerno5``. ``sin(pi x)``
    is the grid's slowest eigenvector: it decays as ``exp(-rate t)`` exactly, ``rate``
    being :meth:`rate`."""

    D: float = dl.param(0.1, bounds=(1e-4, 10.0), unit="m^2/s", doc="diffusivity")
    n: int = eqx.field(static=True, default=50)

    default_solver = "kvaerno5"
    field_name = "u"  # the states are one field over the positions of grid()
    time_unit, state_units = "s", "K"

    @property
    def state_names(self):
        return tuple(f"u{i}" for i in range(self.n))

    @property
    def dx(self) -> float:
        return 1.0 / (self.n + 1)

    def grid(self):
        """The positions of the interior points."""
        return self.dx * np.arange(1, self.n + 1)

    def rate(self):
        """``4 D / dx^2 sin^2(pi dx / 2)``: the decay rate of ``sin(pi x)`` on the grid."""
        return 4 * self.D / self.dx**2 * np.sin(np.pi * self.dx / 2) ** 2

    def vector_field(self, t, y):
        u = jnp.pad(y, 1)
        return self.D * (u[2:] - 2.0 * y + u[:-2]) / self.dx**2

    def initial_state(self):
        return jnp.asarray(np.sin(np.pi * self.grid()))


class BautinCycles(dl.Model):
    """``r' = r (b1 + b2 r^2 - r^4)``, ``theta' = 1`` (Kuznetsov's normal form with
    ``s = -1``): cycles at ``b1 + b2 R - R^2 = 0`` (``R = r^2``) fold where
    ``R = b2 / 2``, on the curve ``b1 = -b2^2 / 4`` (``b2 > 0``), with period ``2 pi``
    and a double multiplier 1."""

    b1: float = dl.param(-0.2, bounds=(-5.0, 5.0))
    b2: float = dl.param(1.0, bounds=(-5.0, 5.0))
    state_names = ("x", "y")

    def vector_field(self, t, y):
        x, v = y
        r2 = x**2 + v**2
        g = self.b1 + self.b2 * r2 - r2**2
        return jnp.stack([g * x - v, x + g * v])

    def initial_state(self):
        return jnp.array([0.0, 0.0])


class MobiusDoubling(dl.Model):
    """The unit circle turned at rate ``w = 1 + k^2`` carries a plane ``zeta`` whose
    component along ``e^{i theta / 2}`` grows at ``s - k^2`` and whose component across
    it decays at 1 (as in ``tests/solvers/test_periodic_doubling.py``): the cycle
    ``zeta = 0`` of period ``2 pi / w`` has the multiplier ``-exp(2 pi (s - k^2) / w)``,
    which is -1 on the curve ``s = k^2``."""

    s: float = dl.param(-0.5, bounds=(-5.0, 5.0))
    k: float = dl.param(0.0, bounds=(-5.0, 5.0))
    state_names = ("x", "y", "u", "v")

    def vector_field(self, t, y):
        x, w, u, v = y
        r2, q2 = x**2 + w**2, u**2 + v**2
        rate, grow = 1 + self.k**2, self.s - self.k**2
        pu, pv = (u + x * u + w * v) / 2, (v + w * u - x * v) / 2
        return jnp.stack([x * (1 - r2) - rate * w, w * (1 - r2) + rate * x,
                          -rate * v / 2 + grow * pu - (u - pu) - q2 * u,
                          rate * u / 2 + grow * pv - (v - pv) - q2 * v])

    def initial_state(self):
        return jnp.array([1.0, 0.0, 0.0, 0.0])
