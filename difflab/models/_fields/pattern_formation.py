"""Pattern-forming and chaotic field models."""

import math

import equinox as eqx
import jax.numpy as jnp

from .grid import Grid
from .model import AbstractFieldModel
from .spectral import (
    axis_wavenumbers,
    dealias_mask,
    derivative_multiplier,
    from_fourier,
    to_fourier,
)


def _ks_line(points: int = 128) -> Grid:
    return Grid(((0.0, 32 * math.pi),), (points,))


class KuramotoSivashinsky(AbstractFieldModel):
    """The Kuramoto-Sivashinsky equation on a periodic line::

        du/dt = -u_xx - u_xxxx - u u_x

    with ``L = k^2 - k^4`` and ``N = -(u^2)_x / 2`` dealiased by the 2/3 rule. The
    initial field is Kassam & Trefethen's ``cos(x/16) (1 + sin(x/16))`` on ``[0, 32 pi]``.
    """

    grid: Grid = eqx.field(default_factory=_ks_line)

    field_names = ("u",)
    dealias = 2 / 3
    description = "Kuramoto-Sivashinsky, 1-D periodic, ETDRK4"

    def linear_part(self):
        k = axis_wavenumbers(self.grid, 0, real=True)
        return {"u": jnp.asarray(k**2 - k**4)}

    def nonlinear_part(self, t, fields):
        u_hat = to_fourier(fields["u"], self.grid)
        return {"u": from_fourier(self.nonlinear_fourier(t, {"u": u_hat})["u"], self.grid)}

    def nonlinear_fourier(self, t, fields_hat):
        mask = jnp.asarray(dealias_mask(self.grid, self.dealias))
        u = from_fourier(mask * fields_hat["u"], self.grid)
        ik = jnp.asarray(derivative_multiplier(self.grid, 0, 1))
        return {"u": -0.5 * ik * to_fourier(u * u, self.grid)}

    def initial_fields(self):
        (x,) = self.grid.coordinates
        return {"u": jnp.cos(x / 16) * (1 + jnp.sin(x / 16))}
