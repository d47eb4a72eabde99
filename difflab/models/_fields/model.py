"""The field model: named fields on a grid, split into a linear and a nonlinear part.

``du/dt = L u + N(t, u)`` per field, with ``L`` diagonal in Fourier space (a multiplier
in ``rfftn``'s layout, ``spectral.fourier_shape``) and ``N`` computed on the grid. The
split is what exponential integrators (``etdrk4``) need; ``vector_field`` adds the two
for every other method.
"""

import abc
from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp

from .grid import Grid
from .spectral import dealias_mask, from_fourier, to_fourier


class AbstractFieldModel(eqx.Module):
    """A model whose state is a dict of named fields, each an array of ``grid.shape``
    (``(ndim, *grid.shape)`` for a vector field).

    Concrete models set ``field_names``, a ``grid`` field and the three methods below;
    their float fields are parameters, as for every model. ``dealias``: the fraction of
    modes kept in the nonlinear part (``2/3`` for quadratic terms), ``None`` for all.
    """

    grid: eqx.AbstractVar[Grid]
    field_names: ClassVar[tuple[str, ...]]
    dealias: ClassVar[float | None] = None
    description: ClassVar[str] = ""

    @abc.abstractmethod
    def linear_part(self) -> dict:
        """``{name: multiplier}``: ``L`` of each field as a Fourier multiplier."""

    @abc.abstractmethod
    def nonlinear_part(self, t, fields: dict) -> dict:
        """``{name: N(t, u)}`` on the grid, for ``fields`` on the grid."""

    @abc.abstractmethod
    def initial_fields(self) -> dict:
        """``{name: u(0)}``, each of the grid's shape."""

    def __check_init__(self):
        if not self.field_names or len(set(self.field_names)) != len(self.field_names):
            raise ValueError(f"{type(self).__name__}.field_names must name each field "
                             f"once, not {self.field_names!r}")

    def nonlinear_fourier(self, t, fields_hat: dict) -> dict:
        """``N`` in Fourier space from fields in Fourier space, dealiased as ``dealias``
        says; a model may override it to skip transforms."""
        grid = self.grid
        if self.dealias is not None:
            mask = jnp.asarray(dealias_mask(grid, self.dealias))
            fields_hat = {name: mask * u for name, u in fields_hat.items()}
        fields = {name: from_fourier(u, grid) for name, u in fields_hat.items()}
        return {name: to_fourier(n, grid) for name, n in self.nonlinear_part(t, fields).items()}

    def vector_field(self, t, fields: dict) -> dict:
        """``L u + N(t, u)`` on the grid (the linear part applied by FFT)."""
        grid, linear = self.grid, self.linear_part()
        nonlinear = self.nonlinear_part(t, fields)
        return {name: from_fourier(linear[name] * to_fourier(u, grid), grid)
                + nonlinear[name] for name, u in fields.items()}

    def check_fields(self, fields: dict) -> None:
        """Raise ``ValueError`` unless ``fields`` holds every field, each of the grid's
        shape, or ``(ndim, *grid.shape)`` for a vector field."""
        if set(fields) != set(self.field_names):
            raise ValueError(f"{type(self).__name__} has the fields "
                             f"{', '.join(self.field_names)}, not {', '.join(fields)}")
        shapes = (self.grid.shape, (self.grid.ndim, *self.grid.shape))
        for name, u in fields.items():
            if jnp.shape(u) not in shapes:
                raise ValueError(f"field {name!r} has shape {jnp.shape(u)}; on this grid a "
                                 f"field has shape {shapes[0]} (a vector field {shapes[1]})")
