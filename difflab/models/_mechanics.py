"""Mechanical systems: pendulums, oscillators, chains and gravitating bodies."""

import jax.numpy as jnp

from ._base import HamiltonianModel, Model, param
from ._registry import register


@register("pendulum")
class Pendulum(HamiltonianModel):
    """A frictionless simple pendulum; ``omega`` is the angular velocity."""

    g: float = param(9.81, bounds=(0.1, 30.0), unit="m/s^2", doc="gravitational acceleration")
    length: float = param(1.0, bounds=(0.05, 10.0), unit="m", doc="length of the rod")
    theta0: float = param(1.0, bounds=(-3.14, 3.14), unit="rad", doc="initial angle")

    state_names = ("theta", "omega")
    domain = "mechanics"
    description = "Simple pendulum, H = omega^2/2 + (g/L)(1 - cos theta)"

    def kinetic_energy(self, p):
        return 0.5 * jnp.sum(p**2)

    def potential_energy(self, q):
        return jnp.sum(self.g / self.length * (1.0 - jnp.cos(q)))

    def initial_state(self):
        return jnp.stack([self.theta0, jnp.zeros_like(self.theta0)])
