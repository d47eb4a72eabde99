"""Stochastic differential equations with diagonal noise."""

import jax.numpy as jnp

from ._base import SDEModel, param
from ._registry import register


@register("ornstein_uhlenbeck")
class OrnsteinUhlenbeck(SDEModel):
    """The Ornstein-Uhlenbeck process ``dx = theta (mu - x) dt + sigma dW``.

    The mean relaxes as ``mu + (x0 - mu) exp(-theta t)`` and the variance grows to
    ``sigma^2 / (2 theta)``: a noisy particle in a harmonic well.
    """

    theta: float = param(1.0, bounds=(0.01, 100.0), unit="1/s", doc="mean-reversion rate")
    mu: float = param(0.0, bounds=(-10.0, 10.0), unit="1", doc="long-term mean")
    sigma: float = param(0.5, bounds=(0.0, 10.0), doc="noise amplitude")
    x0: float = param(1.0, bounds=(-10.0, 10.0), unit="1", doc="initial value")

    state_names = ("x",)
    time_unit, state_units = "s", "1"
    domain = "stochastic"
    description = "Ornstein-Uhlenbeck mean-reverting process"

    def vector_field(self, t, y):
        return self.theta * (self.mu - y)

    def diffusion(self, t, y):
        return jnp.full_like(y, self.sigma)

    def initial_state(self):
        return jnp.atleast_1d(self.x0)
