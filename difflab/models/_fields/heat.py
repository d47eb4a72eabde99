"""Partial differential equations, discretised in space by the method of lines."""

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from .._base import Model, param
from .._registry import register


@register("heat1d")
class Heat1D(Model):
    """The heat equation ``u_t = D u_xx`` on ``[0, 1]`` with ``u = 0`` at both ends.

    Space is discretised by second-order central differences on ``n`` interior
    points ``x_i = (i + 1) dx`` with ``dx = 1 / (n + 1)``; time is left to the
    solver. The initial condition is ``sin(pi x)``. The fastest mode decays at
    about ``4 D / dx^2``, so the system is stiff: it is solved with ``"kvaerno5"``
    unless another solver is named.
    """

    D: float = param(0.1, bounds=(1e-4, 10.0), unit="m^2/s", doc="diffusivity")
    n: int = eqx.field(static=True, default=50)

    domain = "fields"
    default_solver = "kvaerno5"
    field_name = "u"  # the states u0..u{n-1} are one field over the positions of grid()
    time_unit, state_units = "s", "K"  # a temperature, over a rod of 1 m
    description = "1-D heat equation, method of lines, Dirichlet boundaries"

    @property
    def state_names(self):
        return tuple(f"u{i}" for i in range(self.n))

    @property
    def dx(self) -> float:
        """The grid spacing."""
        return 1.0 / (self.n + 1)

    def grid(self):
        """The positions of the interior grid points."""
        return self.dx * np.arange(1, self.n + 1)

    def vector_field(self, t, y):
        u = jnp.pad(y, 1)
        return self.D * (u[2:] - 2.0 * y + u[:-2]) / self.dx**2

    def initial_state(self):
        return jnp.asarray(np.sin(np.pi * self.grid()))
