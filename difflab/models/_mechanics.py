"""Mechanical systems: pendulums, oscillators, chains and gravitating bodies."""

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from ._base import HamiltonianModel, Model, param
from ._registry import register

_ANGLE = (-np.pi, np.pi)

# Chenciner & Montgomery's figure-eight orbit of three equal masses (G = m = 1).
_EIGHT_Q = ((0.97000436, -0.24308753), (-0.97000436, 0.24308753), (0.0, 0.0))
_EIGHT_V = ((0.46620369, 0.43236573), (0.46620369, 0.43236573), (-0.93240737, -0.86473146))


@register("pendulum")
class Pendulum(HamiltonianModel):
    """A frictionless simple pendulum; ``omega`` is the angular velocity."""

    g: float = param(9.81, bounds=(0.1, 30.0), unit="m/s^2", doc="gravitational acceleration")
    length: float = param(1.0, bounds=(0.05, 10.0), unit="m", doc="length of the rod")
    theta0: float = param(1.0, bounds=(-3.14, 3.14), unit="rad", doc="initial angle")

    state_names = ("theta", "omega")
    time_unit, state_units = "s", ("rad", "rad/s")
    domain = "mechanics"
    description = "Simple pendulum, H = omega^2/2 + (g/L)(1 - cos theta)"

    def kinetic_energy(self, p):
        return 0.5 * jnp.sum(p**2)

    def potential_energy(self, q):
        return jnp.sum(self.g / self.length * (1.0 - jnp.cos(q)))

    def initial_state(self):
        return jnp.stack([self.theta0, jnp.zeros_like(self.theta0)])


@register("double_pendulum")
class DoublePendulum(Model):
    """Two point masses on massless rods, the second hung from the first; chaotic.

    The angles are measured from the downward vertical. The Hamiltonian is not
    separable, so the model gives the Lagrangian equations of motion for the
    angular velocities ``omega1, omega2`` and an :meth:`energy` to monitor.
    """

    m1: float = param(1.0, bounds=(0.01, 100.0), unit="kg", doc="upper mass")
    m2: float = param(1.0, bounds=(0.01, 100.0), unit="kg", doc="lower mass")
    l1: float = param(1.0, bounds=(0.05, 10.0), unit="m", doc="upper rod length")
    l2: float = param(1.0, bounds=(0.05, 10.0), unit="m", doc="lower rod length")
    g: float = param(9.81, bounds=(0.1, 30.0), unit="m/s^2", doc="gravitational acceleration")
    theta1_0: float = param(2.0, bounds=_ANGLE, unit="rad", doc="initial upper angle")
    theta2_0: float = param(1.0, bounds=_ANGLE, unit="rad", doc="initial lower angle")

    state_names = ("theta1", "theta2", "omega1", "omega2")
    time_unit, state_units = "s", ("rad", "rad", "rad/s", "rad/s")
    domain = "mechanics"
    description = "Double pendulum, Lagrangian equations of motion"

    def vector_field(self, t, y):
        th1, th2, w1, w2 = y
        c, s = jnp.cos(th1 - th2), jnp.sin(th1 - th2)
        m12 = self.m1 + self.m2
        # M @ [a1, a2] = [f1, f2] with M = [[m12 l1, m2 l2 c], [l1 c, l2]]
        f1 = -self.m2 * self.l2 * w2**2 * s - m12 * self.g * jnp.sin(th1)
        f2 = self.l1 * w1**2 * s - self.g * jnp.sin(th2)
        det = self.l1 * self.l2 * (self.m1 + self.m2 * s**2)
        a1 = (self.l2 * f1 - self.m2 * self.l2 * c * f2) / det
        a2 = (m12 * self.l1 * f2 - self.l1 * c * f1) / det
        return jnp.stack([w1, w2, a1, a2])

    def energy(self, y):
        """The total energy, kinetic plus potential (zero at the pivot's height)."""
        th1, th2, w1, w2 = y[..., 0], y[..., 1], y[..., 2], y[..., 3]
        m12 = self.m1 + self.m2
        kinetic = 0.5 * m12 * (self.l1 * w1) ** 2 + 0.5 * self.m2 * (self.l2 * w2) ** 2
        kinetic += self.m2 * self.l1 * self.l2 * w1 * w2 * jnp.cos(th1 - th2)
        potential = -self.g * (m12 * self.l1 * jnp.cos(th1) + self.m2 * self.l2 * jnp.cos(th2))
        return kinetic + potential

    def initial_state(self):
        zero = jnp.zeros_like(self.theta1_0)
        return jnp.stack([self.theta1_0, self.theta2_0, zero, zero])


@register("duffing")
class Duffing(Model):
    """The driven, damped Duffing oscillator.

    ``x'' + delta x' + alpha x + beta x^3 = gamma cos(omega t)``; the defaults are the
    classic chaotic double well (``alpha < 0 < beta``).
    """

    delta: float = param(0.3, bounds=(0.0, 5.0), unit="1/s", doc="damping")
    alpha: float = param(-1.0, bounds=(-10.0, 10.0), unit="1/s^2", doc="linear stiffness")
    beta: float = param(1.0, bounds=(-10.0, 10.0), unit="1/(m^2 s^2)", doc="cubic stiffness")
    gamma: float = param(0.5, bounds=(0.0, 10.0), unit="m/s^2", doc="driving amplitude")
    omega: float = param(1.2, bounds=(0.01, 10.0), unit="rad/s", doc="driving frequency")
    x0: float = param(1.0, bounds=(-5.0, 5.0), unit="m", doc="initial displacement")
    v0: float = param(0.0, bounds=(-5.0, 5.0), unit="m/s", doc="initial velocity")

    state_names = ("x", "v")
    time_unit, state_units = "s", ("m", "m/s")
    domain = "mechanics"
    description = "Driven damped Duffing oscillator, x'' + delta x' + alpha x + beta x^3 = F(t)"

    def vector_field(self, t, y):
        x, v = y
        drive = self.gamma * jnp.cos(self.omega * t)
        return jnp.stack([v, drive - self.delta * v - self.alpha * x - self.beta * x**3])

    def initial_state(self):
        return jnp.stack([self.x0, self.v0])


@register("spring_chain")
class SpringChain(HamiltonianModel):
    """``n`` equal masses joined by equal linear springs between two fixed walls.

    The state is the displacements ``x_i`` from rest, then the momenta ``p_i``. The
    chain starts at rest with only the first mass displaced (plucked).
    """

    k: float = param(1.0, bounds=(0.01, 100.0), unit="N/m", doc="spring constant")
    m: float = param(1.0, bounds=(0.01, 100.0), unit="kg", doc="mass of each body")
    pluck: float = param(0.1, bounds=(-1.0, 1.0), unit="m", doc="initial displacement of mass 0")
    n: int = eqx.field(static=True, default=8)

    domain = "mechanics"
    description = "Chain of masses and springs between fixed walls"
    time_unit = "s"

    def state_unit(self, name):
        return "m" if name.startswith("x") else "kg m/s"

    @property
    def state_names(self):
        return tuple(f"x{i}" for i in range(self.n)) + tuple(f"p{i}" for i in range(self.n))

    def kinetic_energy(self, p):
        return jnp.sum(p**2) / (2.0 * self.m)

    def potential_energy(self, q):
        stretch = jnp.diff(jnp.pad(q, 1))
        return 0.5 * self.k * jnp.sum(stretch**2)

    def initial_state(self):
        return jnp.zeros(2 * self.n).at[0].set(self.pluck)


@register("nbody")
class NBody(HamiltonianModel):
    """``n`` equal point masses in the plane under softened Newtonian gravity.

    The state is ``q = [x0, y0, x1, y1, ...]`` then the momenta ``p`` in the same
    layout. The potential is ``-G m^2 / sqrt(r^2 + softening^2)`` per pair. Three
    bodies start on the figure-eight orbit of Chenciner and Montgomery; any other
    number starts as a ring of radius 1 in uniform rotation (a circular orbit for two).
    """

    G: float = param(1.0, bounds=(0.01, 100.0), unit="1", doc="gravitational constant")
    mass: float = param(1.0, bounds=(0.01, 100.0), unit="1", doc="mass of each body")
    softening: float = param(1e-3, bounds=(0.0, 1.0), unit="1", doc="softening length")
    n: int = eqx.field(static=True, default=3)

    domain = "mechanics"
    description = "Planar N-body gravity with softening"
    time_unit, state_units = "1", "1"  # G, masses and lengths in units of their own

    @property
    def state_names(self):
        q = [f"{a}{i}" for i in range(self.n) for a in ("x", "y")]
        return tuple(q) + tuple(f"p{name}" for name in q)

    def kinetic_energy(self, p):
        return jnp.sum(p**2) / (2.0 * self.mass)

    def potential_energy(self, q):
        r = q.reshape(self.n, 2)
        i, j = np.triu_indices(self.n, 1)
        d2 = jnp.sum((r[i] - r[j]) ** 2, axis=-1) + self.softening**2
        return -self.G * self.mass**2 * jnp.sum(1.0 / jnp.sqrt(d2))

    def total_momentum(self, y):
        """The total linear momentum ``(px, py)``, conserved."""
        _, p = self.split(y)
        return p.reshape(*p.shape[:-1], self.n, 2).sum(axis=-2)

    def angular_momentum(self, y):
        """The total angular momentum about the origin, conserved."""
        q, p = self.split(y)
        return jnp.sum(q[..., 0::2] * p[..., 1::2] - q[..., 1::2] * p[..., 0::2], axis=-1)

    def initial_state(self):
        q, v = self._figure_eight() if self.n == 3 else self._ring()
        return jnp.concatenate([q.ravel(), self.mass * v.ravel()])

    def _figure_eight(self):
        speed = jnp.sqrt(self.G * self.mass)
        return jnp.array(_EIGHT_Q), speed * jnp.array(_EIGHT_V)

    def _ring(self):
        angle = 2.0 * np.pi * np.arange(self.n) / self.n
        s = np.sin(np.pi * np.arange(1, self.n) / self.n)  # half the chords to the others
        pull = jnp.sum(2.0 * s**2 / (4.0 * s**2 + self.softening**2) ** 1.5)
        speed = jnp.sqrt(self.G * self.mass * pull)
        q = np.stack([np.cos(angle), np.sin(angle)], axis=-1)
        return jnp.asarray(q), speed * np.stack([-q[:, 1], q[:, 0]], axis=-1)
