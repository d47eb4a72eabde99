"""The heat equation on a rod with both ends held at zero: a stiff field model on walls."""

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from .._base import param
from .._registry import register
from .boundaries import Dirichlet
from .grid import Grid
from .model import AbstractFieldModel
from .operators import laplace


def _rod(points: int = 50) -> Grid:
    return Grid(((0.0, 1.0),), (points,), Dirichlet(0.0))


@register("heat1d")
class Heat1D(AbstractFieldModel):
    """The heat equation ``u_t = D u_xx`` on ``[0, 1]`` with ``u = 0`` at both ends.

    ``u_xx`` is the second-order finite difference of ``operators.laplace`` on the grid's
    cell centres (50 by default), the walls met by ghost points. The initial field
    ``sin(pi x)`` decays as ``exp(-D pi^2 t)``; on the grid at the discrete rate
    ``4 D / h^2 sin^2(pi h / 2)`` (``h`` the spacing) to within ``1e-7`` relative at 50
    points: :meth:`exact` gives it. The fastest mode decays at about ``4 D / h^2``, so
    the model is stiff: unless another solver is named it is solved with ``imex2``, which
    takes the whole right-hand side (its ``linear_operator``) implicitly, in one
    matrix-free linear solve (GMRES) per stage.
    """

    D: float = param(0.1, bounds=(1e-4, 10.0), unit="m^2/s", doc="diffusivity")
    grid: Grid = eqx.field(default_factory=_rod)

    field_names = ("u",)
    time_unit, state_units = "s", "K"  # a temperature, over a rod of 1 m
    description = "1-D heat equation, Dirichlet walls, implicit (imex2)"
    dimensions = (1,)
    default_solver = "imex2"  # implicit, matrix-free: walls have no Fourier-diagonal part

    def linear_part(self):
        return None  # walls: not diagonal in Fourier space

    def linear_operator(self, t, fields):
        return {"u": self.D * laplace(fields["u"], self.grid, t=t)}

    def vector_field(self, t, fields):
        return self.linear_operator(t, fields)

    def nonlinear_part(self, t, fields):
        return {"u": jnp.zeros_like(fields["u"])}

    def initial_fields(self):
        (x,) = self.grid.coordinates
        return {"u": jnp.sin(np.pi * x)}

    def decay_rate(self):
        """``4 D / h^2 sin^2(pi h / 2)``: the grid's rate for the mode ``sin(pi x)``."""
        (h,) = self.grid.spacing
        return 4 * self.D / h**2 * np.sin(np.pi * h / 2) ** 2

    def exact(self, t) -> dict:
        """``sin(pi x)`` decayed at :meth:`decay_rate` to time ``t`` (a number or an array
        of times, leading)."""
        t = jnp.asarray(t, dtype=float)
        return {"u": jnp.exp(-self.decay_rate() * t)[..., None] * self.initial_fields()["u"]}
