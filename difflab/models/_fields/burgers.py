"""Viscous Burgers' equation on a periodic line, with its Cole-Hopf closed form."""

import math

import equinox as eqx
import jax.numpy as jnp

from .._base import param
from .._registry import register
from .grid import Grid
from .model import AbstractFieldModel
from .spectral import (
    axis_wavenumbers,
    burgers_term,
)


def _circle(points: int = 128) -> Grid:
    return Grid(((0.0, 2 * math.pi),), (points,))


@register("burgers")
class Burgers(AbstractFieldModel):
    """Viscous Burgers' equation on a periodic line::

        du/dt = nu u_xx - u u_x

    with ``L = -nu k^2`` and ``N = -(u^2)_x / 2`` dealiased by the 2/3 rule. By the
    Cole-Hopf transform ``u = -2 nu phi_x / phi`` with ``phi = 1 + a e^{-nu t} cos(x)``
    solving the heat equation, the initial field ``2 nu a sin(x) / (1 + a cos(x))`` stays
    the closed form :meth:`exact` (on a line of length ``2 pi``), a front steepening as
    ``a`` nears 1.
    """

    nu: float = param(0.1, bounds=(1e-3, 1.0), unit="m^2/s", doc="viscosity")
    a: float = param(0.9, bounds=(0.0, 0.99), doc="amplitude of the Cole-Hopf mode")
    grid: Grid = eqx.field(default_factory=_circle)

    field_names = ("u",)
    dealias = 2 / 3
    description = "viscous Burgers, 1-D periodic, ETDRK4"
    dimensions = (1,)

    def linear_part(self):
        k = axis_wavenumbers(self.grid, 0, real=True)
        return {"u": -self.nu * jnp.asarray(k**2)}

    def nonlinear_part(self, t, fields):
        return self.nonlinear_from_fourier(t, fields)

    def nonlinear_fourier(self, t, fields_hat):
        return {"u": burgers_term(fields_hat["u"], self.grid, self.dealias)}

    def initial_fields(self):
        return self.exact(0.0)

    def exact(self, t) -> dict:
        """The Cole-Hopf solution at time ``t`` (a number or an array of times, leading)."""
        t = jnp.asarray(t, dtype=float)
        (x,) = self.grid.coordinates
        amplitude = (self.a * jnp.exp(-self.nu * t))[..., None]
        return {"u": 2 * self.nu * amplitude * jnp.sin(x) / (1 + amplitude * jnp.cos(x))}
