"""Flows on periodic grids: 2-D incompressible Navier-Stokes and advection-diffusion."""

import math

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from .._base import param
from .._registry import register
from .grid import Grid
from .model import AbstractFieldModel
from .spectral import (
    dealias_mask,
    from_fourier,
    laplace_multiplier,
    to_fourier,
    wavenumbers,
)


def _square(points: int = 64) -> Grid:
    return Grid(((0.0, 2 * math.pi), (0.0, 2 * math.pi)), (points, points))


def _odd_wavenumbers(grid) -> tuple[np.ndarray, ...]:
    """``wavenumbers(grid)`` with each even axis's Nyquist mode zeroed: first derivatives
    of a real field have no real Nyquist component."""
    ks = []
    for axis, k in enumerate(wavenumbers(grid)):
        nyquist = grid.points[axis] % 2 == 0 and np.isclose(np.abs(k), np.pi
                                                           / grid.spacing[axis])
        ks.append(np.where(nyquist, 0.0, k))
    return tuple(ks)


def _phases(grid) -> tuple:
    """``2 pi (x_i - low_i) / L_i`` per axis: coordinates scaled to one period."""
    return tuple(2 * np.pi * (x - grid.extent[i][0]) / grid.length(i)
                 for i, x in enumerate(grid.coordinates))


@register("navier_stokes")
class NavierStokes(AbstractFieldModel):
    """2-D incompressible Navier-Stokes in vorticity form on a periodic rectangle::

        dw/dt = nu laplace(w) - (u w_x + v w_y) - F n cos(n y)

    the velocity ``(u, v) = (psi_y, -psi_x)`` from the stream function
    ``laplace(psi) = -w``, all spectrally, the advection dealiased by the 2/3 rule;
    ``L = -nu |k|^2``. The last term is Kolmogorov's body force ``(F sin(n y), 0)``
    (off by default; ``n`` a whole number of periods over the height). The Taylor-Green
    vortex ``w = A sin(k x) sin(k y)`` advects nothing and decays as
    ``exp(-2 nu k^2 t)``; unforced, the kinetic energy never grows. The initial field is
    a few vortices.
    """

    nu: float = param(0.01, bounds=(1e-5, 1.0), unit="m^2/s", doc="kinematic viscosity")
    forcing: float = param(0.0, bounds=(0.0, 10.0), doc="Kolmogorov forcing amplitude F")
    forcing_wavenumber: float = param(4.0, bounds=(1.0, 16.0),
                                      doc="Kolmogorov forcing wavenumber n (along y)")
    grid: Grid = eqx.field(default_factory=_square)

    field_names = ("w",)
    dealias = 2 / 3
    description = "2-D incompressible Navier-Stokes (vorticity), periodic, ETDRK4"
    dimensions = (2,)

    def linear_part(self):
        return {"w": self.nu * jnp.asarray(laplace_multiplier(self.grid))}

    def nonlinear_part(self, t, fields):
        return self.nonlinear_from_fourier(t, fields)

    def nonlinear_fourier(self, t, fields_hat):
        grid = self.grid
        w_hat = jnp.asarray(dealias_mask(grid, self.dealias)) * fields_hat["w"]
        kx, ky = (jnp.asarray(k) for k in _odd_wavenumbers(grid))
        u, v = self._velocity_from_fourier(w_hat)
        w_x, w_y = from_fourier(1j * kx * w_hat, grid), from_fourier(1j * ky * w_hat, grid)
        return {"w": to_fourier(self.body_force() - u * w_x - v * w_y, grid)}

    def _velocity_from_fourier(self, w_hat):
        grid = self.grid
        k2 = -laplace_multiplier(grid)
        inverse_k2 = jnp.asarray(np.where(k2 > 0, 1.0 / np.where(k2 > 0, k2, 1.0), 0.0))
        psi_hat = inverse_k2 * w_hat
        kx, ky = (jnp.asarray(k) for k in _odd_wavenumbers(grid))
        return from_fourier(1j * ky * psi_hat, grid), from_fourier(-1j * kx * psi_hat, grid)

    def body_force(self):
        """The curl of Kolmogorov's force ``(F sin(n y), 0)``: ``-F n cos(n y)``."""
        _, y = self.grid.coordinates
        n = self.forcing_wavenumber
        return -self.forcing * n * jnp.cos(n * (y - self.grid.extent[1][0]))

    def velocity(self, w):
        """The velocity ``(u, v)`` of the vorticity ``w``, stacked: ``(2, *grid.shape)``."""
        return jnp.stack(self._velocity_from_fourier(to_fourier(w, self.grid)))

    def kinetic_energy(self, w):
        """``int (u^2 + v^2) / 2`` over the domain."""
        return self.grid.integrate(0.5 * jnp.sum(self.velocity(w) ** 2, axis=0))

    def initial_fields(self):
        x, y = _phases(self.grid)
        return {"w": jnp.sin(x) * jnp.sin(y) + 0.5 * jnp.cos(2 * x + 0.3) * jnp.cos(3 * y)
                + 0.25 * jnp.sin(3 * x - y + 1.0)}


@register("advection_diffusion")
class AdvectionDiffusion(AbstractFieldModel):
    """Advection-diffusion on a periodic grid of 1 or 2 axes::

        du/dt = D laplace(u) - c . grad(u),   c = (cx, cy)

    linear, so ``L = -i c . k - D |k|^2`` is all of it and ETDRK4 is exact. The initial
    field ``sin(p) + 0.5 cos(2 p)``, ``p`` the sum of the coordinates each scaled to one
    period, translates with ``c`` and each mode decays as ``exp(-D |k|^2 t)``:
    :meth:`exact` gives it. ``cy`` is unused on a line.
    """

    D: float = param(0.01, bounds=(0.0, 1.0), unit="m^2/s", doc="diffusivity")
    cx: float = param(1.0, bounds=(-10.0, 10.0), unit="m/s", doc="velocity along x")
    cy: float = param(0.5, bounds=(-10.0, 10.0), unit="m/s", doc="velocity along y (2-D)")
    grid: Grid = eqx.field(default_factory=_square)

    field_names = ("u",)
    description = "advection-diffusion on a periodic grid (1-2 axes), ETDRK4"
    dimensions = (1, 2)

    def _velocity(self):
        return (self.cx, self.cy)[: self.grid.ndim]

    def linear_part(self):
        advection = sum(c * jnp.asarray(k) for c, k in
                        zip(self._velocity(), _odd_wavenumbers(self.grid), strict=True))
        return {"u": self.D * jnp.asarray(laplace_multiplier(self.grid)) - 1j * advection}

    def nonlinear_part(self, t, fields):
        return {"u": jnp.zeros_like(fields["u"])}

    def nonlinear_fourier(self, t, fields_hat):
        return {"u": jnp.zeros_like(fields_hat["u"])}

    def initial_fields(self):
        return self.exact(0.0)

    def exact(self, t) -> dict:
        """The fields at time ``t`` (a number or an array of times, leading)."""
        grid = self.grid
        t = jnp.asarray(t, dtype=float)[(...,) + (None,) * grid.ndim]
        scales = [2 * np.pi / grid.length(i) for i in range(grid.ndim)]
        k2 = sum(s**2 for s in scales)
        phase = sum(_phases(grid)) - t * sum(s * c for s, c in
                                             zip(scales, self._velocity(), strict=True))
        return {"u": jnp.exp(-self.D * k2 * t) * jnp.sin(phase)
                + 0.5 * jnp.exp(-4 * self.D * k2 * t) * jnp.cos(2 * phase)}
