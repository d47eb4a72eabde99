"""A fit's statistics: chi-square, reduced chi-square, standard errors, correlations, residuals.

``chi2 = sum(((data - model) / sigma)^2)`` over the observed values, ``reduced_chi2 =
chi2 / (N - p)``; the covariance is the fit's Gauss-Newton ``(J^T J)^-1``, which the fit
scales by the reduced chi-square when the noise level was not given (see ``diagnosis``).
"""

import dataclasses
import math

import jax
import numpy as np

from .fit import FitResult
from .problem import hermite


@dataclasses.dataclass(frozen=True, eq=False)
class FitStatistics:
    """What a finished fit says about itself, in plain arrays.

    ``residuals[i, j]``: observed minus fitted value of ``states[j]`` at ``t[i]`` (NaN
    where not observed); ``sigma``: the noise level each was weighted by (1 where the
    noise is unknown); ``values``, ``stderr``, ``correlation``: in the order of ``names``;
    ``notes``: what the statistics say against the fit (:attr:`FitResult.notes`).
    """

    names: tuple[str, ...]
    values: np.ndarray
    stderr: np.ndarray
    correlation: np.ndarray
    n_data: int
    dof: int
    sigma_given: bool
    t: np.ndarray
    states: tuple[str, ...]
    residuals: np.ndarray
    sigma: np.ndarray
    notes: tuple[str, ...] = ()

    @property
    def chi2(self) -> float:
        """The sum of squared residuals over the squared noise levels."""
        return float(np.nansum((self.residuals / self.sigma) ** 2))

    @property
    def reduced_chi2(self) -> float:
        """``chi2 / (N - p)``: near 1 when the model and the noise level fit the data."""
        return self.chi2 / self.dof if self.dof > 0 else math.nan

    def describe(self) -> str:
        """The statistics in one line of words."""
        text = (f"χ² = {self.chi2:.4g} for {self.n_data} values, {self.dof} degrees of "
                f"freedom; reduced χ² = {self.reduced_chi2:.4g}")
        if not self.sigma_given:
            text += " (noise unknown: the errors are scaled by the reduced χ²)"
        return text + "".join(f". But {note}" for note in self.notes)


def predicted_values(fit: FitResult) -> np.ndarray:
    """The fitted model at the observed times, shape ``(times, observed states)``, found
    as the fit found it (its simulation, interpolated by cubic Hermite)."""
    traj = fit.trajectory()
    slopes = jax.vmap(fit.model.vector_field)(traj.ts, traj.ys)
    values = np.asarray(hermite(traj.ts, traj.ys, slopes, np.asarray(fit.data.t)))
    index = [fit.model.state_index(s) for s in fit.data.states]
    return values[:, index]


def fit_statistics(fit: FitResult, predicted: np.ndarray | None = None,
                   sigma=None) -> FitStatistics:
    """The :class:`FitStatistics` of ``fit``.

    ``predicted``: the model's values at the observed times (default: simulated, see
    :func:`predicted_values`); ``sigma``: the noise level the fit was given, when it was
    not part of its data.
    """
    data = fit.data
    if data is None:
        raise ValueError("the fit holds no data, so it has no residuals")
    predicted = predicted_values(fit) if predicted is None else np.asarray(predicted, float)
    if predicted.shape != data.y.shape:
        raise ValueError(f"predicted values have shape {predicted.shape}, the data "
                         f"{data.y.shape}")
    sd = sigma if sigma is not None else data.sigma
    noise = np.ones(data.y.shape) if sd is None else np.broadcast_to(sd, data.y.shape)
    return FitStatistics(
        names=tuple(fit.names), values=np.array([fit.params[n] for n in fit.names]),
        stderr=np.array([fit.stderr[n] for n in fit.names], dtype=float),
        correlation=np.asarray(fit.correlation, dtype=float), notes=tuple(fit.notes), n_data=fit.n_data, dof=fit.dof,
        sigma_given=bool(fit.absolute_sigma), t=np.asarray(data.t),
        states=tuple(data.states), residuals=data.y - predicted,
        sigma=np.asarray(noise, dtype=float))
