"""Wave equations on periodic grids."""

import equinox as eqx
import jax.numpy as jnp

from .._base import param
from .._registry import register
from .grid import Grid
from .model import AbstractFieldModel
from .spectral import spectral_laplace, wavenumbers


def _unit_square(points: int = 64) -> Grid:
    return Grid(((0.0, 1.0), (0.0, 1.0)), (points, points))


@register("wave")
class Wave(AbstractFieldModel):
    """The wave equation ``u_tt = c^2 laplace(u)`` on a periodic grid (2-D by default),
    as the first-order system ``u_t = v``, ``v_t = c^2 laplace(u)`` (spectral Laplacian).

    Its linear part couples the two fields, so it is not diagonal in Fourier space: it
    is advanced by ``rk4`` (or an adaptive solver), whose step is held to the fastest
    mode's ``c |k|``. The energy ``int (v^2 + c^2 |grad u|^2) / 2`` is conserved. The
    initial ``u`` is a Gaussian bump of width 0.05 at the centre, at rest.
    """

    c: float = param(1.0, bounds=(0.0, 10.0), unit="m/s", doc="wave speed")
    grid: Grid = eqx.field(default_factory=_unit_square)

    field_names = ("u", "v")
    description = "wave equation, periodic, energy conserving, RK4"

    def linear_part(self):
        return None

    def nonlinear_part(self, t, fields):
        return self.vector_field(t, fields)

    def vector_field(self, t, fields):
        return {"u": fields["v"], "v": self.c**2 * spectral_laplace(fields["u"], self.grid)}

    def linear_eigenvalues(self):
        """``+- i c |k|`` per mode."""
        speed = jnp.sqrt(sum(k**2 for k in wavenumbers(self.grid)))
        return [1j * self.c * speed]

    def initial_fields(self):
        r2 = sum((x - 0.5 * (a + b)) ** 2
                 for x, (a, b) in zip(self.grid.coordinates, self.grid.extent, strict=True))
        bump = jnp.exp(-r2 / 0.05**2)
        return {"u": bump, "v": jnp.zeros_like(bump)}

    def energy(self, fields) -> jnp.ndarray:
        """``int (v^2 + c^2 |grad u|^2) / 2`` over the grid, ``|grad u|^2`` integrated by
        parts as ``-u laplace(u)`` (the Laplacian the equation uses)."""
        u, v = fields["u"], fields["v"]
        slopes = -u * spectral_laplace(u, self.grid)
        return self.grid.integrate(0.5 * (v**2 + self.c**2 * slopes))
