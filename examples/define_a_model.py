"""Define your own model in a few lines, simulate it and differentiate through it.

    python examples/define_a_model.py
"""

import jax
import jax.numpy as jnp

import difflab as dl


class Spring(dl.Model):
    """A damped spring: x'' = -k x - c x'."""

    k: float = dl.param(1.0, bounds=(0.0, 10.0), unit="N/m", doc="stiffness per unit mass")
    c: float = 0.1  # a plain annotated float is a parameter too
    state_names = ("x", "v")

    def vector_field(self, t, y):
        x, v = y
        return jnp.stack([v, -self.k * x - self.c * v])

    def initial_state(self):
        return jnp.array([1.0, 0.0])


def final_position(model):
    return dl.simulate(model, t1=10.0, dt=1e-3).ys[-1, 0]


traj = dl.simulate(Spring(k=2.0), t1=10.0, dt=1e-3)
print(f"x(10) = {float(traj['x'][-1]):.6f} after {int(traj.steps)} RK4 steps ({traj.message})")

grads = jax.grad(final_position)(Spring())
print(f"d x(10) / dk = {float(grads.k):.6f},  d x(10) / dc = {float(grads.c):.6f}")

# Many parameter values at once: vmap over the model's own fields.
ks = jnp.linspace(0.5, 4.0, 8)
finals = jax.vmap(lambda k: final_position(Spring(k=k)))(ks)
for k, x in zip(ks, finals):
    print(f"k = {float(k):.2f}: x(10) = {float(x):+.4f}")
