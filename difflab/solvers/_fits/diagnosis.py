"""What a fit's statistics say: its covariance, and whether the data determine the parameters.

The covariance is the Gauss-Newton ``(J^T J)^-1``, found on the Jacobian with each column
scaled to unit length (each parameter in units of its own effect on the data), so the
rank does not depend on the parameters' units. A singular value below ``RANK_TOLERANCE``
times the largest one is a direction the data do not determine (a *null direction*):
along it the variance is infinite, so the parameters it moves have infinite standard
errors, and their correlation is the limit of ``(J^T J + lambda I)^-1`` as ``lambda -> 0``:
that of the null directions (``-1`` for ``a`` and ``b`` when only ``a * b`` is
determined). The other entries are those of the pseudo-inverse.
"""

import dataclasses
import math

import numpy as np

RANK_TOLERANCE = 1e-8  # relative singular value of the scaled Jacobian taken as zero
SUPPORT = 1e-10  # a parameter a null direction moves: its squared component above this
SHOWN = 0.05  # components of a null direction smaller than this are left out of its text
FAR = 3.0  # a reduced chi-square this many standard deviations from 1 is named


@dataclasses.dataclass(frozen=True)
class Covariance:
    """``covariance``, ``stderr`` and ``correlation`` in the order of the parameters;
    ``null_directions`` (k, P): unit vectors, in the scaled parameters, the data do not
    determine."""

    covariance: np.ndarray
    stderr: np.ndarray
    correlation: np.ndarray
    null_directions: np.ndarray


def covariance(jac, chi2: float, dof: int, absolute: bool) -> Covariance:
    """The :class:`Covariance` of weighted residuals with Jacobian ``jac`` (n, P), times
    ``chi2 / dof`` unless the noise level was given (``absolute``)."""
    p = jac.shape[-1]
    if p == 0:
        return Covariance(np.zeros((0, 0)), np.zeros(0), np.zeros((0, 0)), np.zeros((0, 0)))
    norms = np.linalg.norm(jac, axis=0)
    scale = np.where(norms > 0, norms, 1.0)
    _, s, vt = np.linalg.svd(jac / scale, full_matrices=True)
    s = np.concatenate([s, np.zeros(p - len(s))])
    rank = int(np.sum(s > RANK_TOLERANCE * s.max())) if s.max() > 0 else 0
    kept = vt[:rank] / scale  # the determined directions, in natural units
    pinv = kept.T @ np.diag(1.0 / s[:rank] ** 2) @ kept
    null = vt[rank:] / scale  # v = w / |J_i|: back to natural units
    null = null / np.linalg.norm(null, axis=1, keepdims=True)
    factor = 1.0 if absolute else (chi2 / dof if dof > 0 else math.inf)
    return _assemble(pinv, null, factor)


def _assemble(pinv, null, factor) -> Covariance:
    projector = null.T @ null
    free = np.diag(projector) > SUPPORT  # moved by a null direction: not determined
    with np.errstate(divide="ignore", invalid="ignore"):
        d = np.sqrt(np.diag(pinv))
        corr = np.where(np.outer(free, free), projector / np.sqrt(
            np.outer(np.diag(projector), np.diag(projector))), pinv / np.outer(d, d))
        corr = np.where(np.outer(free, ~free) | np.outer(~free, free), 0.0, corr)
        stderr = np.where(free, np.inf, np.sqrt(factor * np.diag(pinv)))
        cov = np.where(corr == 0, 0.0, corr * np.outer(stderr, stderr))
    np.fill_diagonal(corr, 1.0)
    return Covariance(cov, stderr, np.clip(corr, -1.0, 1.0), null)


# -- in words ---------------------------------------------------------------------------


def notes(names, params, null_directions, n_data, dof, chi2, absolute) -> tuple[str, ...]:
    """What the statistics say against trusting a fit, one sentence each (none: nothing)."""
    found = []
    n_fitted = n_data - dof
    if dof < 0:
        found.append(f"more parameters ({n_fitted}) than data values ({n_data}): the data "
                     f"cannot determine them ({dof} degrees of freedom)")
    elif dof == 0:
        found.append(f"as many parameters as data values ({n_data}): the curve can pass "
                     "through every value, so χ² says nothing (0 degrees of freedom)")
    null = np.zeros((0, len(names))) if null_directions is None else null_directions
    found.extend(_null_text(w, names, params) for w in null[:3])
    if len(null) > 3:
        found.append(f"{len(null) - 3} more combinations are not determined either")
    if absolute and dof > 0 and np.isfinite(chi2):
        found.extend(_chi2_text(chi2, dof))
    return tuple(found)


def _null_text(v, names, params) -> str:
    moved = [i for i in range(len(v)) if abs(v[i]) >= SHOWN * np.abs(v).max()]
    if len(moved) == 1:
        return (f"{names[moved[0]]} is not identifiable: it has no effect on the data "
                "(its s.e. is infinite)")
    relative = all(params[i] != 0 for i in moved)
    if relative:  # in relative changes dp/p, in which a product keeps equal ones
        r = np.array([v[i] / params[i] if i in moved else 0.0 for i in range(len(v))])
        only = _determined(r, moved, names, "/*") or _determined(v, moved, names, "-+")
        v = r / np.linalg.norm(r)
    else:
        only = _determined(v, moved, names, "-+")
    v = v * (1 if v[moved[0]] > 0 else -1)
    terms = " ".join(f"{'-' if v[i] < 0 else '+'} {abs(v[i]):.2g}*"
                     + (f"Δ{names[i]}/{names[i]}" if relative else f"Δ{names[i]}")
                     for i in moved)
    who = ", ".join(names[i] for i in moved)
    return (f"{who} are not identifiable: {only}the direction {terms[2:]} is not "
            "determined by the data (their s.e. is infinite)")


def _determined(v, moved, names, ops) -> str:
    """``"only a*b is determined; "`` when the null direction ``v`` of two parameters
    changes them equally (``ops``: the operator kept for equal and opposite changes)."""
    if len(moved) != 2:
        return ""
    i, j = moved
    if abs(abs(v[i]) - abs(v[j])) > 1e-3 * max(abs(v[i]), abs(v[j])):
        return ""
    return f"only {names[i]}{ops[0] if v[i] * v[j] > 0 else ops[1]}{names[j]} is determined; "


def _chi2_text(chi2, dof) -> list[str]:
    """The reduced chi-square, named when it lies far from 1 for the degrees of freedom
    (Wilson-Hilferty: ``(chi2/dof)^(1/3)`` is about normal)."""
    reduced = chi2 / dof
    spread = math.sqrt(2.0 / (9.0 * dof))
    z = (reduced ** (1.0 / 3.0) - (1.0 - spread ** 2)) / spread
    if z > FAR:
        return [f"reduced χ² = {reduced:.3g} with the noise given: the model misses the "
                "data by far more than the noise (a poor start or a wrong model; try more "
                "starts, or check σ)"]
    if z < -FAR:
        return [f"reduced χ² = {reduced:.3g} with the noise given: the model follows the "
                "data more closely than the noise allows (is σ overstated?)"]
    return []
