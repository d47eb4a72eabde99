"""The Ornstein-Uhlenbeck process against its exact mean and variance."""

import jax
import numpy as np
import pytest

import difflab as dl
from difflab.models import get

THETA, MU, SIGMA, X0 = 1.5, 0.5, 0.8, 2.0
N_PATHS = 4000
TIMES = np.linspace(0.0, 1.0, 6)
KEYS = jax.random.split(jax.random.key(0), N_PATHS)


def _paths(model, keys=KEYS):
    """One path per key, all in one batched simulation."""
    simulate = lambda key: dl.simulate(  # noqa: E731
        model, TIMES[-1], dt=2e-3, n_save=len(TIMES), key=key
    ).ys[:, 0]
    return np.asarray(jax.vmap(simulate)(keys))


@pytest.fixture(scope="module")
def model():
    return get("ornstein_uhlenbeck")(theta=THETA, mu=MU, sigma=SIGMA, x0=X0)


@pytest.fixture(scope="module")
def paths(model):
    return _paths(model)


@pytest.mark.slow
def test_ornstein_uhlenbeck_ensemble_moments(paths):
    t = TIMES[1:]
    mean = MU + (X0 - MU) * np.exp(-THETA * t)
    var = SIGMA**2 / (2 * THETA) * (1 - np.exp(-2 * THETA * t))
    sample_mean, sample_var = paths[:, 1:].mean(axis=0), paths[:, 1:].var(axis=0, ddof=1)
    assert np.all(np.abs(sample_mean - mean) < 4 * np.sqrt(var / N_PATHS))
    assert np.all(np.abs(sample_var - var) < 4 * var * np.sqrt(2 / (N_PATHS - 1)))


@pytest.mark.slow
def test_ornstein_uhlenbeck_same_key_gives_same_path(model, paths):
    np.testing.assert_array_equal(_paths(model), paths)
    assert len(np.unique(paths[:, -1])) == N_PATHS


def test_ornstein_uhlenbeck_without_noise_relaxes_exponentially(model):
    paths = _paths(model.replace(sigma=0.0))
    expected = MU + (X0 - MU) * np.exp(-THETA * TIMES)
    np.testing.assert_allclose(paths, np.broadcast_to(expected, paths.shape), rtol=2e-3)


def test_ornstein_uhlenbeck_needs_a_key(model):
    with pytest.raises(ValueError, match="key"):
        dl.simulate(model, 1.0)
