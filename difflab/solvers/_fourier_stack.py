"""What an exponential stepper carries: every field's Fourier transform stacked on one
leading axis (a vector field's components each a row), and its weights stacked alike.

A step's weighted sums are then one loop over all fields, and where a model's transforms
are batched over its fields (on an accelerator, where each FFT is a launch of its own:
``spectral.transform_fields``) they take the stack as it is.
"""

import equinox as eqx
import jax
import jax.numpy as jnp

from ..models import (
    Grid,
    fourier_shape,
    from_fourier,
    stack_fields,
    to_fourier,
    unstack_fields,
)


class FourierStack(eqx.Module):
    """The layout of a model's fields in the stack: their names, in order, each with its
    leading shape (``()`` for a scalar field, ``(ndim,)`` for a vector field)."""

    grid: Grid
    leading: tuple[tuple[str, tuple[int, ...]], ...] = eqx.field(static=True)

    @classmethod
    def of(cls, model) -> "FourierStack":
        shapes = model.field_shapes()
        ndim = model.grid.ndim
        return cls(model.grid, tuple((name, s.shape[:len(s.shape) - ndim])
                                     for name, s in shapes.items()))

    def stack(self, fields: dict, trailing: tuple[int, ...]):
        """The fields (each broadcast to its leading shape then ``trailing``) stacked."""
        return stack_fields({name: jnp.broadcast_to(fields[name], (*lead, *trailing))
                             for name, lead in self.leading}, len(trailing))

    def unstack(self, u) -> dict:
        return unstack_fields(u, dict(self.leading))

    def to_fourier(self, fields: dict):
        return to_fourier(self.stack(fields, self.grid.points), self.grid)

    def from_fourier(self, u_hat) -> dict:
        return self.unstack(from_fourier(u_hat, self.grid))

    def weights(self, stepper):
        """``stepper`` with each of its per-field weights (a dict) stacked."""
        shape = fourier_shape(self.grid)
        return jax.tree.map(lambda w: self.stack(w, shape) if isinstance(w, dict) else w,
                            stepper, is_leaf=lambda w: isinstance(w, dict))

    def nonlinear(self, model):
        """The model's ``nonlinear_fourier`` on the stack."""
        shape = fourier_shape(self.grid)
        return lambda t, u_hat: self.stack(model.nonlinear_fourier(t, self.unstack(u_hat)),
                                           shape)
