"""A Python model file: use it wherever a built-in model name goes.

    difflab run examples/models/pendulum2.py:DrivenPendulum --set drive=1.2 --t1 30
    difflab models examples/models/pendulum2.py:DrivenPendulum

    import difflab as dl
    cls = dl.models.load_file("examples/models/pendulum2.py").get("DrivenPendulum")
    traj = dl.simulate(cls(drive=1.2), 30.0)

Loading the file runs it, like importing a module: load only files you trust.
"""

import jax.numpy as jnp

import difflab as dl


class DrivenPendulum(dl.Model):
    """A damped pendulum driven by a periodic torque; chaotic for some drives."""

    g: float = dl.param(9.81, bounds=(0.1, 30.0), unit="m/s^2", doc="gravitational acceleration")
    length: float = dl.param(1.0, bounds=(0.05, 10.0), unit="m", doc="length of the rod")
    damping: float = dl.param(0.5, bounds=(0.0, 5.0), unit="1/s", doc="friction per unit mass")
    drive: float = dl.param(0.9, bounds=(0.0, 5.0), unit="1/s^2", doc="torque amplitude")
    omega_d: float = 2.0 / 3.0  # a plain annotated float is a parameter too

    state_names = ("theta", "omega")
    time_unit, state_units = "s", ("rad", "rad/s")
    description = "Damped pendulum with a periodic drive"

    def vector_field(self, t, y):
        theta, omega = y
        torque = self.drive * jnp.cos(self.omega_d * t)
        return jnp.stack([omega, -self.g / self.length * jnp.sin(theta)
                          - self.damping * omega + torque])

    def initial_state(self):
        return jnp.array([0.2, 0.0])
