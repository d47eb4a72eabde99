"""Hybrid models: physics plus a neural-network correction, trained with the rest."""

import equinox as eqx
import jax
import jax.numpy as jnp

from ._base import Model, param
from ._registry import register


def _zero_last_layer(mlp: eqx.nn.MLP) -> eqx.nn.MLP:
    last = mlp.layers[-1]
    return eqx.tree_at(
        lambda m: (m.layers[-1].weight, m.layers[-1].bias),
        mlp,
        (jnp.zeros_like(last.weight), jnp.zeros_like(last.bias)),
    )


@register("hybrid_oscillator")
class HybridOscillator(Model):
    """A damped harmonic oscillator plus a learnable force from a small MLP.

    ``x' = v``, ``v' = -omega^2 x - 2 zeta omega v + f(x, v)`` where ``f`` is an
    ``eqx.nn.MLP``. Its last layer starts at zero, so the untrained model is exactly
    the damped oscillator; fit the MLP (with the physical parameters) to data to
    learn the missing physics.

    Parameters
    ----------
    omega, zeta, x0, v0
        The physical parameters, as declared below.
    width, depth
        The width and number of hidden layers of the MLP.
    key
        The ``jax.random`` key that initialises the MLP (default ``jax.random.key(0)``).
    """

    omega: float = param(1.0, bounds=(0.01, 100.0), unit="rad/s", doc="natural frequency")
    zeta: float = param(0.1, bounds=(0.0, 2.0), unit="1", doc="damping ratio")
    x0: float = param(1.0, bounds=(-10.0, 10.0), unit="m", doc="initial displacement")
    v0: float = param(0.0, bounds=(-10.0, 10.0), unit="m/s", doc="initial velocity")
    correction: eqx.nn.MLP

    state_names = ("x", "v")
    time_unit, state_units = "s", ("m", "m/s")
    domain = "neural"
    description = "Damped oscillator with a neural-network force correction"

    def __init__(self, omega=1.0, zeta=0.1, x0=1.0, v0=0.0, *, width=16, depth=1, key=None):
        self.omega, self.zeta, self.x0, self.v0 = omega, zeta, x0, v0
        key = jax.random.key(0) if key is None else key
        mlp = eqx.nn.MLP(2, "scalar", width, depth, activation=jnp.tanh, key=key)
        self.correction = _zero_last_layer(mlp)

    def vector_field(self, t, y):
        x, v = y
        force = -self.omega**2 * x - 2.0 * self.zeta * self.omega * v
        return jnp.stack([v, force + self.correction(y)])

    def initial_state(self):
        return jnp.stack([self.x0, self.v0])
