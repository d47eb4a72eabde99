"""Implicit and IMEX steppers for field models, matrix-free (``newton_krylov.py``).

Diagonally implicit Runge-Kutta pairs: stage ``i`` solves

    U_i = u + h sum_{j<i} (A_ij I_j + E_ij X_j) + h A_ii I(t_i, U_i)

with ``I`` the part taken implicitly and ``X`` the part taken explicitly. Fully implicit
steppers take the whole vector field implicitly (Newton-Krylov on each stage); IMEX ones
take the model's ``linear_operator`` (stiff linear terms on the grid, boundaries
honoured: walled diffusion, which is not diagonal in Fourier space) implicitly, in one
linear solve per stage, and the rest of the vector field explicitly. Where that operator
is the Fourier multiplier of ``linear_part`` (the default), the solve is a division in
Fourier space.

- ``implicit_euler`` / ``imex_euler``: order 1, L-stable.
- ``sdirk2`` / ``imex2``: order 2, L-stable, stiffly accurate; ``imex2`` is Ascher, Ruuth
  & Spiteri's (2,2,2) (Appl. Numer. Math. 25, 1997), ``sdirk2`` its implicit half.
"""

import math
from collections.abc import Callable
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp

from ...models import from_fourier, to_fourier
from .newton_krylov import NewtonKrylov
from .preconditioner import Preconditioner

_G = 1 - 1 / math.sqrt(2)
_D = 1 - 1 / (2 * _G)
#: (implicit A, explicit A, implicit b, explicit b, c), the first stage explicit
EULER = (((0, 0), (0, 1)), ((0, 0), (1, 0)), (0, 1), (1, 0), (0, 1))
ARS222 = (((0, 0, 0), (0, _G, 0), (0, 1 - _G, _G)), ((0, 0, 0), (_G, 0, 0), (_D, 1 - _D, 0)),
          (0, 1 - _G, _G), (_D, 1 - _D, 0), (0, _G, 1))


def _sum(u, h, terms):
    """``u + h sum(w * k)`` over ``(w, k)`` pairs, but those with ``w = 0`` or no ``k`` (no
    explicit part)."""
    for w, k in terms:
        if w and k is not None:
            u = jax.tree.map(lambda a, b, w=w: a + h * w * b, u, k)
    return u


def _used(a, b, j: int) -> bool:
    """Whether stage ``j``'s slope enters a later stage or the step."""
    return bool(b[j]) or any(row[j] for row in a[j + 1:])


class AbstractFieldDIRK(eqx.Module):
    """A stepper of step ``dt``: ``step(vector_field, t, u)`` as the explicit ones."""

    dt: jax.Array
    linear: Callable | None  # the model's linear_operator (IMEX), or None (fully implicit)
    multipliers: dict | None  # IMEX with the default operator: its Fourier multipliers
    grid: object
    newton: NewtonKrylov
    preconditioner: Preconditioner | None  # of the linear solves, where GMRES makes them
    order: ClassVar[int]
    tableau: ClassVar[tuple]
    split: ClassVar[bool]
    fourier: ClassVar[bool] = False  # fields advance on the grid

    def __init__(self, model, dt, newton: NewtonKrylov | None = None):
        self.dt = jnp.asarray(dt, dtype=float)
        self.linear = model.linear_operator if self.split else None
        fourier = self.split and model.linear_operator_is_multiplier()
        self.multipliers = model.linear_part() if fourier else None
        self.grid = model.grid
        self.newton = NewtonKrylov() if newton is None else newton
        fitted = self.multipliers is None and model.has_linear_operator()
        self.preconditioner = Preconditioner.fit(
            model.linear_operator, model.grid, jax.eval_shape(model.initial_fields)) \
            if fitted else None

    def _parts(self, vector_field):
        """``(implicit part, explicit part or None)``."""
        if not self.split:
            return vector_field, None
        linear = self.linear
        return linear, lambda t, u: jax.tree.map(jnp.subtract, vector_field(t, u), linear(t, u))

    def step(self, vector_field, t, u):
        """``u`` after one step from ``t``; ``vector_field(t, u)`` is ``du/dt``."""
        a_i, a_e, b_i, b_e, c = self.tableau
        implicit, explicit = self._parts(vector_field)
        h, slopes_i, slopes_e = self.dt, [], []
        for i, ci in enumerate(c):
            partial = _sum(_sum(u, h, zip(a_i[i][:i], slopes_i)), h, zip(a_e[i][:i], slopes_e))
            g, ti = a_i[i][i], t + ci * h
            stage = partial if not g else self._solve(implicit, ti, h * g, partial)
            slopes_i.append(self._slope(implicit, ti, stage, partial, h, g, _used(a_i, b_i, i)))
            used_e = explicit is not None and _used(a_e, b_e, i)
            slopes_e.append(explicit(ti, stage) if used_e else None)
        return _sum(_sum(u, h, zip(b_i, slopes_i)), h, zip(b_e, slopes_e))

    def _solve(self, implicit, t, c, rhs):
        """``U`` with ``U - c implicit(t, U) = rhs``."""
        if self.multipliers is None:
            precondition = None if self.preconditioner is None else \
                self.preconditioner.for_stage(c)
            return self.newton.stage(implicit, t, c, rhs, affine=self.split,
                                     precondition=precondition)
        grid = self.grid
        return {name: from_fourier(to_fourier(r, grid) / (1 - c * self.multipliers[name]),
                                   grid) for name, r in rhs.items()}

    @staticmethod
    def _slope(implicit, t, stage, partial, h, g, used: bool):
        """The implicit slope at a stage: from the stage equation where it was solved
        (``(U - partial) / (h a_ii)``, consistent with the solve), else evaluated."""
        if not used:
            return None
        if g:
            return jax.tree.map(lambda s, p: (s - p) / (h * g), stage, partial)
        return implicit(t, stage)


class ImplicitEuler(AbstractFieldDIRK):
    """Implicit Euler on the whole vector field, order 1 (Newton-Krylov per step)."""

    order, tableau, split = 1, EULER, False


class SDIRK2(AbstractFieldDIRK):
    """The L-stable two-stage SDIRK of order 2 (``gamma = 1 - 1/sqrt(2)``), implicit on
    the whole vector field."""

    order, tableau, split = 2, ARS222, False


class IMEXEuler(AbstractFieldDIRK):
    """Implicit Euler on the linear operator, explicit Euler on the rest: order 1."""

    order, tableau, split = 1, EULER, True


class IMEX2(AbstractFieldDIRK):
    """Ascher-Ruuth-Spiteri (2,2,2): the linear operator by ``sdirk2``, the rest by an
    explicit method sharing its stages: order 2."""

    order, tableau, split = 2, ARS222, True


#: the implicit field steppers by the name ``solver=`` takes; made as ``cls(model, dt)``
FIELD_IMPLICIT = {"implicit_euler": ImplicitEuler, "sdirk2": SDIRK2,
                  "imex_euler": IMEXEuler, "imex2": IMEX2}
IMEX_SOLVERS = ("imex_euler", "imex2")
