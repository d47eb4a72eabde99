"""Low-dimensional nonlinear and chaotic systems."""

import jax.numpy as jnp

from ._base import Model, param
from ._registry import register


@register("lorenz")
class Lorenz(Model):
    """The Lorenz system of atmospheric convection, chaotic at the classic parameters."""

    sigma: float = param(10.0, bounds=(0.1, 50.0), doc="Prandtl number")
    rho: float = param(28.0, bounds=(0.0, 100.0), doc="Rayleigh number")
    beta: float = param(8.0 / 3.0, bounds=(0.1, 10.0), doc="geometric factor")

    state_names = ("x", "y", "z")
    domain = "chaos"
    description = "Lorenz (1963) convection model"

    def vector_field(self, t, y):
        x, yy, z = y
        return jnp.stack(
            [self.sigma * (yy - x), x * (self.rho - z) - yy, x * yy - self.beta * z]
        )

    def initial_state(self):
        return jnp.array([1.0, 1.0, 1.0])
