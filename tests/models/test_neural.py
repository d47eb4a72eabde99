"""The hybrid oscillator: exactly the damped oscillator until its MLP is trained."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difflab as dl
from difflab.models import get

pytestmark = pytest.mark.slow


def _damped_oscillator(t, omega, zeta, x0, v0):
    """The exact x(t) of the underdamped oscillator x'' + 2 zeta omega x' + omega^2 x = 0."""
    wd = omega * np.sqrt(1 - zeta**2)
    envelope = np.exp(-zeta * omega * t)
    return envelope * (x0 * np.cos(wd * t) + (v0 + zeta * omega * x0) / wd * np.sin(wd * t))


def _simulate(model):
    return dl.simulate(model, 10.0, dt=0.01, n_save=101)


def test_untrained_hybrid_is_the_damped_oscillator():
    key = jax.random.key(7)  # any initialisation: the last layer starts at zero
    model = get("hybrid_oscillator")(omega=2.0, zeta=0.2, x0=1.0, v0=0.5, key=key)
    traj = _simulate(model)
    expected = _damped_oscillator(np.asarray(traj.ts), 2.0, 0.2, 1.0, 0.5)
    np.testing.assert_allclose(traj["x"], expected, atol=1e-7)


def test_mlp_changes_the_dynamics_once_its_last_layer_is_nonzero():
    model = get("hybrid_oscillator")()
    last = model.correction.layers[-1]
    nudged = eqx.tree_at(lambda m: m.correction.layers[-1].bias, model, last.bias + 0.1)
    assert not np.allclose(_simulate(model).ys, _simulate(nudged).ys, atol=1e-3)


def test_gradients_reach_the_mlp_weights():
    model = get("hybrid_oscillator")()
    target = jnp.asarray(_damped_oscillator(np.linspace(0, 2, 21), 1.3, 0.1, 1.0, 0.0))

    @eqx.filter_grad
    def loss_grad(model):
        traj = dl.simulate(model, 2.0, dt=0.01, n_save=21)
        return jnp.sum((traj.ys[:, 0] - target) ** 2)

    grads = loss_grad(model)
    assert float(grads.omega) != 0.0
    last = grads.correction.layers[-1]
    assert float(jnp.max(jnp.abs(last.weight))) > 0.0
    assert float(jnp.max(jnp.abs(last.bias))) > 0.0
