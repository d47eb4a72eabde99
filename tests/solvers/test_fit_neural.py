"""Training the hybrid neural model: Adam on the network's weights lowers the loss tenfold."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difflab as dl

pytestmark = pytest.mark.slow


class CubicOscillator(dl.Model):
    """The damped oscillator plus a cubic spring the hybrid model does not know about."""

    omega: float = 1.0
    zeta: float = 0.1
    state_names = ("x", "v")

    def vector_field(self, t, y):
        x, v = y
        return jnp.stack([v, -self.omega**2 * x - 2 * self.zeta * self.omega * v - 0.8 * x**3])

    def initial_state(self):
        return jnp.array([1.5, 0.0])


def test_training_the_hybrid_model_lowers_its_loss_tenfold():
    data = dl.io.read_observations(dl.simulate(CubicOscillator(), 10.0, n_save=51))
    hybrid = dl.models.get("hybrid_oscillator")(x0=1.5, width=8, key=jax.random.key(0))
    res = dl.fit(hybrid, data, params=["correction"], sigma=0.01, method="adam",
                 learning_rate=3e-2, fit_max_steps=200, dt=0.05)
    assert res.ok and res.n_steps == 200 and res.method == "adam"
    assert res.loss_history.shape == (200,)
    assert res.loss_history[-1] < res.loss_history[0] / 10
    # the network's weights were trained, the physical parameters were not
    trained = res.model.correction.layers[-1].weight
    assert np.any(np.asarray(trained) != 0) and res.model.omega == hybrid.omega
    assert res.names == () and res.params == {}
