"""Pattern-forming and chaotic field models."""

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
    from_fourier,
    laplace_multiplier,
    spectral_laplace,
    to_fourier,
    wavenumbers,
)


def _ks_line(points: int = 128) -> Grid:
    return Grid(((0.0, 32 * math.pi),), (points,))


@register("kuramoto_sivashinsky")
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
    dimensions = (1,)

    def linear_part(self):
        k = axis_wavenumbers(self.grid, 0, real=True)
        return {"u": jnp.asarray(k**2 - k**4)}

    def nonlinear_part(self, t, fields):
        return self.nonlinear_from_fourier(t, fields)

    def nonlinear_fourier(self, t, fields_hat):
        return {"u": burgers_term(fields_hat["u"], self.grid, self.dealias)}

    def initial_fields(self):
        (x,) = self.grid.coordinates
        return {"u": jnp.cos(x / 16) * (1 + jnp.sin(x / 16))}


def _line(points: int = 128) -> Grid:
    return Grid(((0.0, 2 * math.pi),), (points,))


@register("allen_cahn")
class AllenCahn(AbstractFieldModel):
    """The Allen-Cahn equation on a periodic grid (1-D by default)::

        du/dt = eps^2 laplace(u) + u - u^3

    with ``L = 1 - eps^2 |k|^2`` and ``N = -u^3``. Phases ``u = +-1`` separate, their
    fronts of width ``~ sqrt(2) eps`` moving by curvature; the free energy
    ``int eps^2 |grad u|^2 / 2 + (u^2 - 1)^2 / 4`` never grows. A uniform field follows
    ``u' = u - u^3`` exactly. The initial field is ``0.1 cos(x) + 0.05 sin(3 x)``.
    """

    eps: float = param(0.1, bounds=(1e-3, 1.0), doc="interface width")
    grid: Grid = eqx.field(default_factory=_line)

    field_names = ("u",)
    description = "Allen-Cahn phase separation, periodic, ETDRK4"

    def linear_part(self):
        k2 = sum(k**2 for k in wavenumbers(self.grid))
        return {"u": jnp.asarray(1.0 - self.eps**2 * k2)}

    def nonlinear_part(self, t, fields):
        return {"u": -fields["u"] ** 3}

    def initial_fields(self):
        x = self.grid.coordinates[0]
        return {"u": 0.1 * jnp.cos(x) + 0.05 * jnp.sin(3 * x)}

    def free_energy(self, u):
        """``int eps^2 |grad u|^2 / 2 + (u^2 - 1)^2 / 4``, ``|grad u|^2`` integrated by
        parts as ``-u laplace(u)`` (spectral)."""
        slopes = -u * spectral_laplace(u, self.grid)
        return self.grid.integrate(0.5 * self.eps**2 * slopes + 0.25 * (u**2 - 1) ** 2)


def _wide_square(points: int = 64) -> Grid:
    return Grid(((0.0, 16 * math.pi), (0.0, 16 * math.pi)), (points, points))


@register("swift_hohenberg")
class SwiftHohenberg(AbstractFieldModel):
    """The Swift-Hohenberg equation on a periodic grid (2-D by default)::

        du/dt = r u - (1 + laplace)^2 u - u^3

    with ``L = r - (1 - |k|^2)^2`` and ``N = -u^3``. A small Fourier mode of wavenumber
    ``k`` grows at the rate ``r - (1 - k^2)^2``; for ``r > 0`` stripes of wavelength near
    ``2 pi`` form. The initial field is a small sum of oblique modes.
    """

    r: float = param(0.2, bounds=(-1.0, 1.0), doc="distance from onset")
    grid: Grid = eqx.field(default_factory=_wide_square)

    field_names = ("u",)
    description = "Swift-Hohenberg stripes, periodic, ETDRK4"

    def linear_part(self):
        k2 = sum(k**2 for k in wavenumbers(self.grid))
        return {"u": jnp.asarray(self.r - (1.0 - k2) ** 2)}

    def nonlinear_part(self, t, fields):
        return {"u": -fields["u"] ** 3}

    def initial_fields(self):
        phase = sum((0.5 + 0.3 * i) * x for i, x in enumerate(self.grid.coordinates))
        return {"u": 0.1 * jnp.cos(phase) + 0.05 * jnp.sin(0.7 * phase)}

    def growth_rate(self, k):
        """The linear growth rate ``r - (1 - k^2)^2`` of a mode of wavenumber ``k``."""
        return self.r - (1.0 - k**2) ** 2


def _square(points: int = 64) -> Grid:
    return Grid(((0.0, 2 * math.pi), (0.0, 2 * math.pi)), (points, points))


@register("cahn_hilliard")
class CahnHilliard(AbstractFieldModel):
    """The Cahn-Hilliard equation on a periodic grid (2-D by default)::

        dc/dt = laplace(c^3 - c - gamma laplace(c))

    with ``L = |k|^2 - gamma |k|^4`` and ``N = laplace(c^3)``. The mean of ``c`` (the
    mass) is kept exactly, and the free energy
    ``int (c^2 - 1)^2 / 4 + gamma |grad c|^2 / 2`` never grows as the phases ``c = +-1``
    separate and coarsen. The initial field is a small sum of modes about ``c = 0.1``.
    """

    gamma: float = param(0.01, bounds=(1e-4, 1.0), doc="squared interface width")
    grid: Grid = eqx.field(default_factory=_square)

    field_names = ("c",)
    description = "Cahn-Hilliard phase separation, periodic, ETDRK4"

    def linear_part(self):
        k2 = -jnp.asarray(laplace_multiplier(self.grid))
        return {"c": k2 - self.gamma * k2**2}

    def nonlinear_part(self, t, fields):
        return {"c": spectral_laplace(fields["c"] ** 3, self.grid)}

    def nonlinear_fourier(self, t, fields_hat):
        c = from_fourier(fields_hat["c"], self.grid)
        minus_k2 = jnp.asarray(laplace_multiplier(self.grid))
        return {"c": minus_k2 * to_fourier(c**3, self.grid)}

    def initial_fields(self):
        mode = 0.1
        for i, x in enumerate(self.grid.coordinates):
            mode = mode + 0.2 * jnp.cos((i + 1) * x + 0.3) * jnp.sin((2 - i) * x + i)
        return {"c": mode}

    def free_energy(self, c):
        """``int (c^2 - 1)^2 / 4 + gamma |grad c|^2 / 2``, ``|grad c|^2`` integrated by
        parts as ``-c laplace(c)`` (spectral)."""
        slopes = -c * spectral_laplace(c, self.grid)
        return self.grid.integrate(0.25 * (c**2 - 1) ** 2 + 0.5 * self.gamma * slopes)
