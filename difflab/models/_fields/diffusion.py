"""Diffusion on a periodic grid of 1 to 3 axes: the field model with a closed form."""

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from .._base import param
from .._registry import register
from .grid import Grid
from .model import AbstractFieldModel
from .spectral import laplace_multiplier


def _unit_square(points: int = 64) -> Grid:
    return Grid(((0.0, 1.0), (0.0, 1.0)), (points, points))


@register("diffusion")
class Diffusion(AbstractFieldModel):
    """Diffusion ``du/dt = D laplace(u)`` on a periodic grid of 1, 2 or 3 axes.

    The initial field is one Fourier mode, ``prod_i sin(2 pi x_i / L_i)``, which decays
    as ``exp(-D |k|^2 t)`` with ``|k|^2 = sum_i (2 pi / L_i)^2``: :meth:`exact` gives it.
    """

    D: float = param(0.01, bounds=(0.0, 1.0), unit="m^2/s", doc="diffusivity")
    grid: Grid = eqx.field(default_factory=_unit_square)

    field_names = ("u",)
    description = "diffusion on a periodic grid (1-3 axes), ETDRK4"

    def linear_part(self):
        return {"u": self.D * jnp.asarray(laplace_multiplier(self.grid))}

    def nonlinear_part(self, t, fields):
        return {"u": jnp.zeros_like(fields["u"])}

    def nonlinear_fourier(self, t, fields_hat):
        return {"u": jnp.zeros_like(fields_hat["u"])}

    def initial_fields(self):
        mode = 1.0
        for i, x in enumerate(self.grid.coordinates):
            mode = mode * jnp.sin(2 * np.pi * (x - self.grid.extent[i][0])
                                  / self.grid.length(i))
        return {"u": mode}

    def decay_rate(self):
        """``D |k|^2`` of the initial mode."""
        k2 = sum((2 * np.pi / self.grid.length(i)) ** 2 for i in range(self.grid.ndim))
        return self.D * k2

    def exact(self, t) -> dict:
        """The fields at time ``t`` (a number or an array of times, leading)."""
        t = jnp.asarray(t, dtype=float)
        decay = jnp.exp(-self.decay_rate() * t).reshape(t.shape + (1,) * self.grid.ndim)
        return {"u": decay * self.initial_fields()["u"]}
