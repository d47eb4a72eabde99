"""Low-dimensional nonlinear and chaotic systems."""

import jax.numpy as jnp

from ._base import Model, param
from ._registry import register


@register("lorenz")
class Lorenz(Model):
    """The Lorenz system of atmospheric convection, chaotic at the classic parameters."""

    sigma: float = param(10.0, bounds=(0.1, 50.0), unit="1", doc="Prandtl number")
    rho: float = param(28.0, bounds=(0.0, 100.0), unit="1", doc="Rayleigh number")
    beta: float = param(8.0 / 3.0, bounds=(0.1, 10.0), unit="1", doc="geometric factor")

    state_names = ("x", "y", "z")
    time_unit, state_units = "1", "1"  # dimensionless, as the model is
    domain = "chaos"
    description = "Lorenz (1963) convection model"

    def vector_field(self, t, y):
        x, yy, z = y
        return jnp.stack(
            [self.sigma * (yy - x), x * (self.rho - z) - yy, x * yy - self.beta * z]
        )

    def initial_state(self):
        return jnp.array([1.0, 1.0, 1.0])


@register("van_der_pol")
class VanDerPol(Model):
    """The Van der Pol oscillator ``x'' - mu (1 - x^2) x' + x = 0``.

    Every orbit tends to a limit cycle of amplitude about 2. For large ``mu`` the
    cycle is a relaxation oscillation of period about ``(3 - 2 ln 2) mu``, and the
    equations are stiff: use an implicit solver such as ``"kvaerno5"``.
    """

    mu: float = param(1.0, bounds=(0.01, 1000.0), unit="1", doc="nonlinear damping strength")

    state_names = ("x", "v")
    time_unit, state_units = "1", "1"
    domain = "oscillators"
    description = "Van der Pol relaxation oscillator (stiff at large mu)"

    def vector_field(self, t, y):
        x, v = y
        return jnp.stack([v, self.mu * (1.0 - x**2) * v - x])

    def initial_state(self):
        return jnp.array([2.0, 0.0])


@register("fitzhugh_nagumo")
class FitzHughNagumo(Model):
    """The FitzHugh-Nagumo model of an excitable neuron.

    ``v' = v - v^3/3 - w + I``, ``tau w' = v + a - b w``: a fast membrane potential
    ``v`` and a slow recovery variable ``w``. The cell rests at low ``I`` and fires
    periodically for ``I`` in an intermediate range, which contains the default.
    """

    a: float = param(0.7, bounds=(-2.0, 2.0), unit="1", doc="recovery offset")
    b: float = param(0.8, bounds=(0.0, 5.0), unit="1", doc="recovery feedback")
    tau: float = param(12.5, bounds=(0.1, 100.0), unit="1", doc="recovery time scale")
    current: float = param(0.5, bounds=(-2.0, 2.0), unit="1", doc="external stimulus current I")

    state_names = ("v", "w")
    time_unit, state_units = "1", "1"
    domain = "neural"
    description = "FitzHugh-Nagumo excitable neuron"

    def vector_field(self, t, y):
        v, w = y
        dv = v - v**3 / 3.0 - w + self.current
        return jnp.stack([dv, (v + self.a - self.b * w) / self.tau])

    def initial_state(self):
        return jnp.array([-1.0, 1.0])
