"""Toy models shared by the test files: ``from tests.models_for_tests import Decay``.

Each has a closed-form solution or a known property the tests check against. A model that
is special to one test (a user model written to a file, a plugin, a model with a network)
stays in that test.
"""

import jax.numpy as jnp

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
