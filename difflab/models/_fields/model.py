"""The field model: named fields on a grid, split into a linear and a nonlinear part.

``du/dt = L u + N(t, u)`` per field, with ``L`` diagonal in Fourier space (a multiplier
in ``rfftn``'s layout, ``spectral.fourier_shape``) and ``N`` computed on the grid. The
split is what exponential integrators (``etdrk4``) need; ``vector_field`` adds the two
for every other method. A model whose linear part is not diagonal in Fourier space (waves
as a first-order system, walled grids) returns ``None`` from ``linear_part`` and writes
``vector_field`` itself; explicit and adaptive solvers advance it.
"""

import abc
import dataclasses
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp

from .._base import Model
from .grid import Grid
from .spectral import dealias_mask, from_fourier, to_fourier, transform_fields


class AbstractFieldModel(eqx.Module):
    """A model whose state is a dict of named fields, each an array of ``grid.shape``
    (``(ndim, *grid.shape)`` for a vector field).

    Concrete models set ``field_names``, a ``grid`` field, ``initial_fields`` and their
    right-hand side: ``linear_part`` and ``nonlinear_part`` (none: zero), or
    ``vector_field`` alone. Their float fields are parameters, as for every model.
    ``dealias``: the fraction of modes kept in the nonlinear part (``2/3`` for quadratic
    terms), ``None`` for all.
    """

    grid: eqx.AbstractVar[Grid]
    field_names: ClassVar[tuple[str, ...]]
    dealias: ClassVar[float | None] = None
    description: ClassVar[str] = ""
    domain: ClassVar[str] = "fields"
    registry_name: ClassVar[str | None] = None
    #: the numbers of axes the model's equations and initial fields are written for
    dimensions: ClassVar[tuple[int, ...]] = (1, 2, 3)

    parameter_specs = Model.__dict__["parameter_specs"]
    parameters = Model.parameters
    replace = Model.replace

    def linear_part(self) -> dict | None:
        """``{name: multiplier}``: ``L`` of each field as a Fourier multiplier; ``None``
        (the default) where it is not diagonal in Fourier space (then ``vector_field``
        is written instead)."""
        return None

    def nonlinear_part(self, t, fields: dict) -> dict:
        """``{name: N(t, u)}`` on the grid, for ``fields`` on the grid; zero by default
        (a linear equation)."""
        return {name: jnp.zeros_like(u) for name, u in fields.items()}

    @abc.abstractmethod
    def initial_fields(self) -> dict:
        """``{name: u(0)}``, each of the grid's shape."""

    def field_shapes(self) -> dict:
        """``{name: jax.ShapeDtypeStruct}`` of the initial fields (of
        :func:`initial_fields_of`, traced; only what needs no traced value is computed)."""
        return jax.eval_shape(lambda: initial_fields_of(self))

    def __check_init__(self):
        if not _right_hand_side_written(type(self)):
            raise TypeError(f"{type(self).__name__} defines no right-hand side: write "
                            f"vector_field(t, fields), or linear_part() (and "
                            f"nonlinear_part(t, fields) where it is not zero)")
        if not self.field_names or len(set(self.field_names)) != len(self.field_names):
            raise ValueError(f"{type(self).__name__}.field_names must name each field "
                             f"once, not {self.field_names!r}")
        if self.grid.ndim not in self.dimensions:
            raise ValueError(f"{type(self).__name__} is written for grids of "
                             f"{' or '.join(map(str, self.dimensions))} axes, not "
                             f"{self.grid.ndim}")

    @property
    def default_solver(self) -> str:
        """``"etdrk4"`` where the linear part is a Fourier multiplier, else ``"rk4"``."""
        return "rk4" if self.linear_part() is None else "etdrk4"

    def linear_eigenvalues(self) -> list | None:
        """The eigenvalues of the linear part, one array per field (``None``: not known);
        explicit solvers are held to the step they allow."""
        linear = self.linear_part()
        return None if linear is None else [jnp.asarray(m) for m in linear.values()]

    def with_points(self, points) -> "AbstractFieldModel":
        """The same model on a grid of ``points`` per axis: the extent and boundaries of
        each axis are kept (a grid with more axes repeats its first axis's)."""
        points = (points,) if isinstance(points, int) else tuple(points)
        old = self.grid
        extent = [old.extent[min(i, old.ndim - 1)] for i in range(len(points))]
        sides = [old.boundaries[min(i, old.ndim - 1)] for i in range(len(points))]
        return dataclasses.replace(self, grid=Grid(extent, points, sides))

    def nonlinear_fourier(self, t, fields_hat: dict) -> dict:
        """``N`` in Fourier space from fields in Fourier space, dealiased as ``dealias``
        says; a model may override it to skip transforms."""
        grid = self.grid
        if self.dealias is not None:
            mask = jnp.asarray(dealias_mask(grid, self.dealias))
            fields_hat = {name: mask * u for name, u in fields_hat.items()}
        fields = transform_fields(from_fourier, fields_hat, grid)
        nonlinear = self.nonlinear_part(t, fields)
        return transform_fields(to_fourier, {name: jnp.broadcast_to(n, fields[name].shape)
                                             for name, n in nonlinear.items()}, grid)

    def nonlinear_from_fourier(self, t, fields: dict) -> dict:
        """``N`` on the grid by way of the model's own :meth:`nonlinear_fourier`: the
        ``nonlinear_part`` of a model that computes ``N`` in Fourier space."""
        grid = self.grid
        hat = self.nonlinear_fourier(t, {name: to_fourier(u, grid) for name, u in fields.items()})
        return {name: from_fourier(n, grid) for name, n in hat.items()}

    def linear_operator(self, t, fields: dict) -> dict:
        """``L u`` on the grid: the stiff linear terms an IMEX solver (``imex2``) takes
        implicitly, the rest of ``vector_field`` explicitly. By default the multiplier of
        :meth:`linear_part` applied by FFT; a model whose linear part is not diagonal in
        Fourier space (walls) overrides it, boundaries honoured."""
        linear = self.linear_part()
        if linear is None:
            raise NotImplementedError(f"{type(self).__name__} defines no linear operator")
        return {name: from_fourier(linear[name] * to_fourier(u, self.grid), self.grid)
                for name, u in fields.items()}

    def linear_operator_is_multiplier(self) -> bool:
        """Whether :meth:`linear_operator` is the Fourier multiplier of :meth:`linear_part`
        (then an IMEX stage divides in Fourier space instead of running GMRES)."""
        default = type(self).linear_operator is AbstractFieldModel.linear_operator
        return default and self.linear_part() is not None

    def has_linear_operator(self) -> bool:
        """Whether :meth:`linear_operator` is defined (IMEX solvers need it)."""
        own = type(self).linear_operator is not AbstractFieldModel.linear_operator
        return own or self.linear_part() is not None

    def vector_field(self, t, fields: dict) -> dict:
        """``L u + N(t, u)`` on the grid (the linear part applied by FFT)."""
        grid, linear = self.grid, self.linear_part()
        if linear is None:
            raise NotImplementedError(f"{type(self).__name__} has no Fourier-diagonal "
                                      f"linear part: it must define vector_field itself")
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


def _right_hand_side_written(cls: type) -> bool:
    """Whether ``cls`` writes ``vector_field`` or ``linear_part`` (its own or a base's)."""
    base = AbstractFieldModel
    return cls.vector_field is not base.vector_field or cls.linear_part is not base.linear_part


def initial_fields_of(model: AbstractFieldModel) -> dict:
    """``model.initial_fields()``, made even inside a trace (a compiled run, a sweep's
    vmap) with what does not depend on a traced value computed: ``initial_fields`` may
    be written with NumPy on the grid's coordinates."""
    with jax.ensure_compile_time_eval():
        return model.initial_fields()
