"""Fit statistics against linear least squares solved by NumPy.

The model ``dy/dt = a + b t``, ``y(0) = 0`` has ``y = a t + b t^2 / 2``: linear in its
parameters, so the fit's optimum, chi-square, covariance and correlation have a closed
form that ``numpy.linalg.lstsq`` computes independently.
"""

import jax.numpy as jnp
import numpy as np
import pytest

import difflab as dl


class Ramp(dl.Model):
    """dy/dt = a + b t."""

    a: float = dl.param(0.5, bounds=(-10.0, 10.0))
    b: float = dl.param(0.1, bounds=(-10.0, 10.0))
    state_names = ("y",)

    def vector_field(self, t, y):
        return jnp.stack([self.a + self.b * t])

    def initial_state(self):
        return jnp.array([0.0])


T = np.linspace(0.1, 4.0, 40)
TRUE = (1.3, -0.4)
SIGMA = 0.05


def noisy_data(sigma_known: bool) -> dl.io.Observations:
    y = TRUE[0] * T + TRUE[1] * T**2 / 2
    y = y + SIGMA * np.random.default_rng(0).standard_normal(T.shape)
    sigma = np.full((len(T), 1), SIGMA) if sigma_known else None
    return dl.io.Observations(T, y[:, None], ("y",), sigma)


def lstsq_answer(data, sigma_known: bool):
    """Estimates, chi-square, standard errors and correlation of the linear fit."""
    design = np.column_stack([T, T**2 / 2])
    y = data.y[:, 0]
    beta, *_ = np.linalg.lstsq(design, y, rcond=None)
    residuals = y - design @ beta
    sigma = SIGMA if sigma_known else 1.0
    chi2 = float(residuals @ residuals) / sigma**2
    cov = np.linalg.inv(design.T @ design) * sigma**2
    if not sigma_known:
        cov = cov * chi2 / (len(T) - 2)
    sd = np.sqrt(np.diag(cov))
    return beta, chi2, sd, cov / np.outer(sd, sd), residuals


@pytest.mark.parametrize("sigma_known", [True, False])
def test_statistics_match_linear_least_squares(sigma_known):
    data = noisy_data(sigma_known)
    fitted = dl.fit(Ramp(), data, ["a", "b"], solver="rk4", dt=0.01, t1=4.0)
    stats = dl.solvers.fit_statistics(fitted)
    beta, chi2, sd, corr, residuals = lstsq_answer(data, sigma_known)
    np.testing.assert_allclose(stats.values, beta, rtol=1e-6)
    np.testing.assert_allclose(stats.chi2, chi2, rtol=1e-6)
    assert stats.dof == len(T) - 2
    np.testing.assert_allclose(stats.reduced_chi2, chi2 / (len(T) - 2), rtol=1e-6)
    np.testing.assert_allclose(stats.stderr, sd, rtol=1e-4)
    np.testing.assert_allclose(stats.correlation, corr, atol=1e-6)
    np.testing.assert_allclose(stats.residuals[:, 0], residuals, atol=1e-7)
    assert stats.sigma_given is sigma_known
    assert ("noise unknown" in stats.describe()) is not sigma_known


def test_sigma_given_to_the_fit_weights_the_residuals():
    data = noisy_data(False)
    fitted = dl.fit(Ramp(), data, ["a", "b"], sigma=SIGMA, solver="rk4", dt=0.01, t1=4.0)
    stats = dl.solvers.fit_statistics(fitted, sigma=SIGMA)
    _, chi2, sd, _, _ = lstsq_answer(data, True)
    np.testing.assert_allclose(stats.chi2, chi2, rtol=1e-6)
    np.testing.assert_allclose(stats.stderr, sd, rtol=1e-4)


def test_predicted_values_must_match_the_data():
    fitted = dl.fit(Ramp(), noisy_data(True), ["a", "b"], solver="rk4", dt=0.01, t1=4.0)
    with pytest.raises(ValueError, match="predicted values have shape"):
        dl.solvers.fit_statistics(fitted, predicted=np.zeros((3, 1)))
