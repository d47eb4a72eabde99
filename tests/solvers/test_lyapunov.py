"""The Lyapunov spectrum by tangent dynamics and QR."""

import json

import jax.numpy as jnp
import numpy as np
import pytest

import difflab as dl


class Linear(dl.Model):
    """``y' = diag(-1, -3) y``: the exponents are the eigenvalues."""

    state_names = ("x", "y")

    def vector_field(self, t, y):
        return jnp.array([-1.0, -3.0]) * y

    def initial_state(self):
        return jnp.array([1.0, 1.0])


def test_linear_exponents_are_the_eigenvalues():
    spectrum = dl.lyapunov(Linear(), 20.0, dt=0.01)
    np.testing.assert_allclose(spectrum.exponents, [-1.0, -3.0], rtol=1e-6)
    assert spectrum.dt <= 0.01 and spectrum.times[-1] == pytest.approx(20.0)


def test_lorenz_spectrum():
    sigma, beta = 10.0, 8.0 / 3.0
    spectrum = dl.lyapunov(dl.models.get("lorenz")(), 5000.0, transient=20.0)
    np.testing.assert_allclose(spectrum.exponents, [0.9056, 0.0, -14.5723], atol=0.01)
    assert spectrum.exponents.sum() == pytest.approx(-(sigma + 1 + beta), rel=1e-4)
    assert (spectrum.error < 0.01).all()
    assert spectrum.kaplan_yorke_dimension == pytest.approx(2.062, abs=0.01)
    assert json.loads(spectrum.to_json()) == {"exponents": list(spectrum.exponents)}


def test_bad_arguments():
    with pytest.raises(ValueError, match="t1 must be a positive"):
        dl.lyapunov(Linear(), -1.0)
    with pytest.raises(ValueError, match="transient"):
        dl.lyapunov(Linear(), 1.0, transient=-1.0)
