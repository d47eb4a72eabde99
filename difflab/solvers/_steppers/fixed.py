"""Fixed-step steppers, advanced by ``lax`` loops: one step of size ``h`` from ``(t, y)``."""

import abc
from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp

from ...models import HamiltonianModel, Model, SDEModel


class AbstractStepper(eqx.Module):
    """One fixed step; ``dw`` is the Brownian increment for SDE steppers, else ``None``.

    ``stability_radius``: how far the method's stability region reaches (along the
    negative real axis; the imaginary one for leapfrog), in units of ``dt`` times the
    Jacobian's spectral radius; a run with a larger step fails as unstable. ``None``:
    not checked.
    """

    order: ClassVar[int]
    stability_radius: ClassVar[float | None] = None
    stochastic: ClassVar[bool] = False
    adaptive: ClassVar[bool] = False

    @abc.abstractmethod
    def step(self, model: Model, t, y, h, dw):
        """The state after one step of size ``h``."""

    def check(self, model_type: type[Model]) -> None:
        """Raise ``ValueError`` if this stepper cannot advance models of ``model_type``."""
        if issubclass(model_type, SDEModel) and not self.stochastic:
            raise ValueError(
                f"{model_type.__name__} is stochastic: use solver='euler_maruyama'"
            )


class Euler(AbstractStepper):
    """Explicit Euler, order 1."""

    order = 1
    stability_radius = 2.0

    def step(self, model, t, y, h, dw):
        return y + h * model.vector_field(t, y)


class Heun(AbstractStepper):
    """Heun's method (explicit trapezoidal rule), order 2."""

    order = 2
    stability_radius = 2.0

    def step(self, model, t, y, h, dw):
        k1 = model.vector_field(t, y)
        k2 = model.vector_field(t + h, y + h * k1)
        return y + 0.5 * h * (k1 + k2)


class RK4(AbstractStepper):
    """The classical fourth-order Runge-Kutta method."""

    order = 4
    stability_radius = 2.785

    def step(self, model, t, y, h, dw):
        f = model.vector_field
        k1 = f(t, y)
        k2 = f(t + 0.5 * h, y + 0.5 * h * k1)
        k3 = f(t + 0.5 * h, y + 0.5 * h * k2)
        k4 = f(t + h, y + h * k3)
        return y + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


class Leapfrog(AbstractStepper):
    """Velocity Verlet (kick-drift-kick) for separable Hamiltonians: symplectic, order 2."""

    order = 2
    stability_radius = 2.0  # omega * dt < 2

    def check(self, model_type):
        super().check(model_type)
        if not issubclass(model_type, HamiltonianModel):
            raise ValueError(
                f"leapfrog needs a HamiltonianModel; {model_type.__name__} is not one"
            )

    def step(self, model, t, y, h, dw):
        q, p = model.split(y)
        p = p + 0.5 * h * model.dp_dt(q)
        q = q + h * model.dq_dt(p)
        p = p + 0.5 * h * model.dp_dt(q)
        return jnp.concatenate([q, p])


class EulerMaruyama(AbstractStepper):
    """Euler-Maruyama for SDEs with diagonal noise: strong order 1/2, weak order 1."""

    order = 1
    stability_radius = 2.0  # of the drift
    stochastic = True

    def check(self, model_type):
        if not issubclass(model_type, SDEModel):
            raise ValueError(
                f"euler_maruyama is for SDE models; {model_type.__name__} is an ODE"
            )

    def step(self, model, t, y, h, dw):
        return y + h * model.vector_field(t, y) + model.diffusion(t, y) * dw
