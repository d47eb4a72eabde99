"""Population dynamics, epidemics and synchronisation."""

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from ._base import Model, param
from ._registry import register

_GOLDEN = (5.0**0.5 - 1.0) / 2.0


@register("lotka_volterra")
class LotkaVolterra(Model):
    """The Lotka-Volterra predator-prey model.

    ``x' = alpha x - beta x y``, ``y' = delta x y - gamma y`` for prey ``x`` and
    predators ``y``. Orbits are closed: ``delta x - gamma ln x + beta y - alpha ln y``
    is conserved.
    """

    alpha: float = param(1.1, bounds=(0.01, 10.0), unit="1", doc="prey growth rate")
    beta: float = param(0.4, bounds=(0.001, 10.0), unit="1", doc="predation rate")
    gamma: float = param(0.4, bounds=(0.01, 10.0), unit="1", doc="predator death rate")
    delta: float = param(0.1, bounds=(0.001, 10.0), unit="1", doc="predator growth per prey")
    prey0: float = param(10.0, bounds=(0.0, 1000.0), unit="1", doc="initial prey population")
    predator0: float = param(10.0, bounds=(0.0, 1000.0), unit="1", doc="initial predator population")

    state_names = ("prey", "predator")
    time_unit, state_units = "1", "1"  # counts, over time in units of the rates' own
    domain = "biology"
    description = "Lotka-Volterra predator-prey cycles"

    def vector_field(self, t, y):
        x, p = y
        return jnp.stack(
            [self.alpha * x - self.beta * x * p, self.delta * x * p - self.gamma * p]
        )

    def initial_state(self):
        return jnp.stack([self.prey0, self.predator0])


@register("sir")
class SIR(Model):
    """The Kermack-McKendrick SIR epidemic in a closed population of size ``N``.

    ``S' = -beta S I / N``, ``I' = beta S I / N - gamma I``, ``R' = gamma I``; the
    basic reproduction number is ``R0 = beta / gamma``.
    """

    beta: float = param(0.3, bounds=(0.0, 10.0), unit="1/day", doc="transmission rate")
    gamma: float = param(0.1, bounds=(0.001, 10.0), unit="1/day", doc="recovery rate")
    N: float = param(1000.0, bounds=(1.0, 1e9), unit="1", doc="total population")
    infected0: float = param(1.0, bounds=(0.0, 1e6), unit="1", doc="initially infected individuals")

    state_names = ("S", "I", "R")
    time_unit, state_units = "day", "1"  # individuals
    domain = "biology"
    description = "SIR epidemic model"

    def vector_field(self, t, y):
        s, i, _ = y
        infection = self.beta * s * i / self.N
        recovery = self.gamma * i
        return jnp.stack([-infection, infection - recovery, recovery])

    def initial_state(self):
        return jnp.stack([self.N - self.infected0, self.infected0, jnp.zeros_like(self.N)])


@register("kuramoto")
class Kuramoto(Model):
    """``n`` phase oscillators with all-to-all coupling, the Kuramoto model.

    ``theta_i' = omega_i + (K / n) sum_j sin(theta_j - theta_i)``. The natural
    frequencies are the quantiles of a Lorentzian of centre ``omega0`` and half-width
    ``gamma``, so for many oscillators they synchronise above ``K_c = 2 gamma``,
    with order parameter ``r -> sqrt(1 - K_c / K)``. The initial phases are spread
    over the circle by the golden angle.
    """

    K: float = param(2.0, bounds=(0.0, 20.0), unit="rad/s", doc="coupling strength")
    gamma: float = param(0.5, bounds=(0.01, 10.0), unit="rad/s", doc="frequency half-width")
    omega0: float = param(0.0, bounds=(-10.0, 10.0), unit="rad/s", doc="central frequency")
    n: int = eqx.field(static=True, default=100)

    domain = "biology"
    description = "Kuramoto model of synchronising oscillators"
    time_unit, state_units = "s", "rad"

    @property
    def state_names(self):
        return tuple(f"theta{i}" for i in range(self.n))

    def natural_frequencies(self):
        """``omega_i = omega0 + gamma tan(pi (i + 1/2) / n - pi / 2)``."""
        quantile = (np.arange(self.n) + 0.5) / self.n
        return self.omega0 + self.gamma * np.tan(np.pi * quantile - np.pi / 2)

    def order_parameter(self, y):
        """The coherence ``r`` and mean phase ``psi`` of ``r e^{i psi} = <e^{i theta}>``."""
        c, s = jnp.mean(jnp.cos(y), axis=-1), jnp.mean(jnp.sin(y), axis=-1)
        return jnp.hypot(c, s), jnp.arctan2(s, c)

    def derived(self, y):
        """Quantities of a state the plots offer beside the phases."""
        r, psi = self.order_parameter(y)
        return {"order parameter r": r, "mean phase psi": psi}

    def vector_field(self, t, y):
        c, s = jnp.mean(jnp.cos(y)), jnp.mean(jnp.sin(y))
        return self.natural_frequencies() + self.K * (s * jnp.cos(y) - c * jnp.sin(y))

    def initial_state(self):
        return jnp.asarray(2.0 * np.pi * np.mod(_GOLDEN * np.arange(self.n), 1.0))
