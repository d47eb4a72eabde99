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
import numpy as np

from ...models import from_fourier, to_fourier
from .newton_krylov import NewtonKrylov
from .preconditioner import Preconditioner

_G = 1 - 1 / math.sqrt(2)
_D = 1 - 1 / (2 * _G)
#: (implicit A, explicit A, implicit b, explicit b, c), the first stage explicit and the
#: others implicit
EULER = (((0, 0), (0, 1)), ((0, 0), (1, 0)), (0, 1), (1, 0), (0, 1))
ARS222 = (((0, 0, 0), (0, _G, 0), (0, 1 - _G, _G)), ((0, 0, 0), (_G, 0, 0), (_D, 1 - _D, 0)),
          (0, 1 - _G, _G), (_D, 1 - _D, 0), (0, _G, 1))


def _combined(u, h, weights, slopes):
    """``u + h sum_j weights[j] slopes[j]``, ``slopes`` stacked along their first axis
    (``weights`` a table's row, or its row picked by a traced stage index)."""
    return jax.tree.map(lambda a, k: a + h * jnp.tensordot(jnp.asarray(weights), k, axes=1),
                        u, slopes)


def _put(stacked, i, slope):
    return jax.tree.map(lambda k, s: k.at[i].set(s), stacked, slope)


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
            model.linear_operator, model.grid, model.field_shapes()) \
            if fitted else None

    def _parts(self, vector_field):
        """``(implicit part, explicit part or None)``."""
        if not self.split:
            return vector_field, None
        linear = self.linear
        return linear, lambda t, u: jax.tree.map(jnp.subtract, vector_field(t, u), linear(t, u))

    def step(self, vector_field, t, u):
        """``u`` after one step from ``t``; ``vector_field(t, u)`` is ``du/dt``. The first
        stage is ``u`` itself; the implicit stages are one loop, so that their solver is
        compiled once, not once per stage."""
        a_i, a_e, b_i, b_e, c = (np.asarray(x, dtype=float) for x in self.tableau)
        rows_i, rows_e, times = jnp.asarray(a_i), jnp.asarray(a_e), jnp.asarray(c)
        used_e = jnp.asarray([_used(a_e, b_e, i) for i in range(len(c))])
        implicit, explicit = self._parts(vector_field)
        h, zero = self.dt, jax.tree.map(jnp.zeros_like, u)
        first_i = implicit(t, u) if _used(a_i, b_i, 0) else zero
        first_e = explicit(t, u) if explicit is not None and _used(a_e, b_e, 0) else zero
        slopes = tuple(jax.tree.map(lambda k: jnp.zeros((len(c), *k.shape), k.dtype).at[0].set(k),
                                    first) for first in (first_i, first_e))

        def stage(slopes, i):
            slopes_i, slopes_e = slopes
            partial = _combined(_combined(u, h, rows_i[i], slopes_i), h, rows_e[i], slopes_e)
            g, ti = rows_i[i, i], t + times[i] * h
            solved = self._solve(implicit, ti, h * g, partial)
            # the implicit slope from the stage equation, consistent with the solve
            k_i = jax.tree.map(lambda s, p: (s - p) / (h * g), solved, partial)
            k_e = zero if explicit is None else jax.lax.cond(
                used_e[i], lambda: explicit(ti, solved), lambda: zero)
            return (_put(slopes_i, i, k_i), _put(slopes_e, i, k_e)), None

        (slopes_i, slopes_e), _ = jax.lax.scan(stage, slopes, jnp.arange(1, len(c)))
        return _combined(_combined(u, h, b_i, slopes_i), h, b_e, slopes_e)

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
