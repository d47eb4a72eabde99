"""Excitable media: waves that leave the medium refractory behind them, and spirals."""

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from .._base import param
from .._registry import register
from .grid import Grid
from .model import AbstractFieldModel
from .spectral import laplace_multiplier


def _square(points: int = 128) -> Grid:
    return Grid(((0.0, 60.0), (0.0, 60.0)), (points, points))


@register("barkley")
class Barkley(AbstractFieldModel):
    """Barkley's model of an excitable medium (Physica D 49, 61, 1991) on a periodic grid
    (2-D by default)::

        du/dt = Du laplace(u) + u (1 - u) (u - (v + b) / a) / eps
        dv/dt = u - v

    ``u`` is the fast excitation, ``v`` the slow recovery. A front of ``u`` into the
    rested medium (``v = 0``) travels at Nagumo's speed ``sqrt(Du / (2 eps)) (1 - 2 b / a)``
    as ``eps -> 0`` (:meth:`front_speed`). The initial fields are a wave segment (``u = 1``)
    with refractory medium behind it (``v = 1``), across half of the first axis at its
    middle: its two free ends curl up into a pair of counter-rotating spirals. The linear
    part is ``Du laplace`` for ``u`` and ``-1`` for ``v``.
    """

    a: float = param(0.75, bounds=(0.1, 1.5), doc="scale of the excitation threshold")
    b: float = param(0.06, bounds=(0.0, 0.5), doc="excitation threshold offset")
    eps: float = param(0.02, bounds=(1e-3, 0.2), doc="time scale of the fast variable u")
    Du: float = param(1.0, bounds=(0.0, 10.0), doc="diffusivity of u")
    grid: Grid = eqx.field(default_factory=_square)

    field_names = ("u", "v")
    description = "Barkley excitable medium: spiral waves, periodic, ETDRK4"

    def linear_part(self):
        laplacian = jnp.asarray(laplace_multiplier(self.grid))
        return {"u": self.Du * laplacian, "v": -jnp.ones_like(laplacian)}

    def nonlinear_part(self, t, fields):
        u, v = fields["u"], fields["v"]
        threshold = (v + self.b) / self.a
        return {"u": u * (1.0 - u) * (u - threshold) / self.eps, "v": u}

    def initial_fields(self):
        x = self.grid.coordinates
        (a0, a1) = self.grid.extent[0]
        s = (x[0] - a0) / (a1 - a0)  # 0 to 1 along the first axis
        half = True
        if self.grid.ndim > 1:
            (b0, b1) = self.grid.extent[1]
            half = (x[1] - b0) / (b1 - b0) >= 0.5
        u = jnp.where((s >= 0.45) & (s < 0.5) & half, 1.0, 0.0)
        v = jnp.where((s >= 0.3) & (s < 0.45) & half, 1.0, 0.0)
        return {"u": u, "v": v}

    def front_speed(self) -> float:
        """Nagumo's front speed ``sqrt(Du / (2 eps)) (1 - 2 b / a)``: the limit of the
        speed of a front into the rested medium as ``eps -> 0``."""
        return float(np.sqrt(self.Du / (2 * self.eps)) * (1 - 2 * self.b / self.a))
