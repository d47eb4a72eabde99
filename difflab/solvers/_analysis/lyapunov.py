"""The Lyapunov spectrum by tangent dynamics and repeated QR (Benettin et al. 1980).

The state ``y`` and an orthonormal frame ``Q`` (n, n) advance together by RK4 steps of
``y' = f(t, y)``, ``Q' = J(t, y) Q``, the tangent part by ``jax.linearize`` of the exact
vector field. Every ``qr_every`` steps ``Q = QR`` re-orthonormalises the frame and
``log |R_ii|`` adds to the stretching of direction ``i``; the exponents are the sums
divided by the time. Everything after the transient runs in one compiled ``lax.scan``.
"""

import json
import math

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._datasets import to_dataset
from .._resources import check_memory, check_step_count
from .traced import untraced


class LyapunovSpectrum(eqx.Module):
    """The Lyapunov ``exponents`` (largest first) of ``model`` over ``t1`` time units
    after a ``transient``, with a convergence estimate: ``error`` is the spread (max -
    min) of each running estimate over the last quarter of the run, whose ``history``
    (k, n) at ``times`` (k,) it keeps."""

    exponents: np.ndarray
    error: np.ndarray
    times: np.ndarray
    history: np.ndarray
    final_state: np.ndarray
    t1: float
    transient: float
    dt: float
    state_names: tuple[str, ...] = eqx.field(static=True)
    model: object

    def to_dict(self) -> dict:
        """``{"exponents": [l1, l2, ...]}``"""
        return {"exponents": [float(v) for v in self.exponents]}

    def to_json(self) -> str:
        """:meth:`to_dict` as a JSON string."""
        return json.dumps(self.to_dict())

    @property
    def kaplan_yorke_dimension(self) -> float:
        """``j + sum(l_1..l_j) / |l_(j+1)|`` for the largest ``j`` with a sum >= 0."""
        sums = np.cumsum(self.exponents)
        j = int(np.sum(sums >= 0))
        if j == 0 or j == len(sums):
            return float(j)
        return j + float(sums[j - 1] / abs(self.exponents[j]))

    def to_xarray(self):
        """This result as an ``xarray.Dataset``: the variables, coordinates and attributes
        of its group in a session file (``docs/hdf5-schema.md``)."""
        return to_dataset(self)


def _rk4(f, t, y, dt):
    k1 = f(t, y)
    k2 = f(t + dt / 2, jax.tree.map(lambda a, b: a + dt / 2 * b, y, k1))
    k3 = f(t + dt / 2, jax.tree.map(lambda a, b: a + dt / 2 * b, y, k2))
    k4 = f(t + dt, jax.tree.map(lambda a, b: a + dt * b, y, k3))
    return jax.tree.map(lambda a, b, c, d, e: a + dt / 6 * (b + 2 * c + 2 * d + e),
                        y, k1, k2, k3, k4)


def _tangent(model):
    def f(t, state):
        y, q = state
        value, push = jax.linearize(lambda z: model.vector_field(t, z), y)
        return value, jax.vmap(push, in_axes=1, out_axes=1)(q)

    return f


@eqx.filter_jit
def _spectrum(model, y0, t0, dt, n_transient, qr_every, per_record, n_records):
    def plain(i, carry):
        t, y = carry
        return t + dt, _rk4(lambda s, z: model.vector_field(s, z), t, y, dt)

    t, y = jax.lax.fori_loop(0, n_transient, plain, (t0, y0))
    start, tangent = t, _tangent(model)

    def block(i, carry):
        t, y, q, logs = carry
        t, (y, q) = jax.lax.fori_loop(
            0, qr_every, lambda j, c: (c[0] + dt, _rk4(tangent, c[0], c[1], dt)),
            (t, (y, q)))
        q, r = jnp.linalg.qr(q)
        d = jnp.diagonal(r)
        return t, y, q * jnp.where(d < 0, -1.0, 1.0)[None, :], logs + jnp.log(jnp.abs(d))

    def record(carry, _):
        carry = jax.lax.fori_loop(0, per_record, block, carry)
        return carry, (carry[0] - start, carry[3] / (carry[0] - start))

    frame = jnp.eye(y0.shape[0], dtype=y0.dtype)
    carry = (t, y, frame, jnp.zeros_like(y0))
    carry, (times, history) = jax.lax.scan(record, carry, None, length=n_records)
    return carry[1], times, history


def _check(t1, transient, dt, qr_every):
    for name, value in (("t1", t1), ("dt", dt)):
        if not (math.isfinite(value) and value > 0):
            raise ValueError(f"{name} must be a positive number, got {value}")
    if not (math.isfinite(transient) and transient >= 0):
        raise ValueError(f"transient must be a number >= 0, got {transient}")
    if qr_every < 1:
        raise ValueError(f"qr_every must be at least 1, got {qr_every}")


def lyapunov(model, t1: float, transient: float = 0.0, dt: float = 0.01, *, y0=None,
             t0: float = 0.0, qr_every: int = 10, records: int = 200) -> LyapunovSpectrum:
    """The full Lyapunov spectrum of ``model`` from ``y0`` (default: its initial state):
    ``transient`` time units dropped, then ``t1`` averaged, with RK4 steps of at most
    ``dt`` (shortened so that whole blocks of ``qr_every`` steps fill ``t1``) and the
    running estimate kept at ``records`` times."""
    untraced("lyapunov", model, t1, transient, dt, y0)
    t1, transient, dt = float(t1), float(transient), float(dt)
    _check(t1, transient, dt, qr_every)
    if hasattr(model, "diffusion"):
        raise ValueError("lyapunov: stochastic models have no Lyapunov spectrum here")
    n = len(model.state_names)
    check_step_count((transient + t1) / dt,
                     f"a transient of {transient:g} and t1 = {t1:g} in RK4 steps of dt = {dt:g}",
                     "shorten them (--transient, --t1) or raise dt (--dt)")
    blocks = max(1, math.ceil(t1 / (dt * qr_every)))
    n_records = max(1, min(int(records), blocks))
    check_memory(2 * n_records * (n + 1) * 8, f"keeping {n_records:,} records of {n} "
                 "exponents", "keep fewer records")
    per_record = math.ceil(blocks / n_records)
    step = t1 / (n_records * per_record * qr_every)
    n_transient = math.ceil(transient / dt)
    start = jnp.asarray(model.initial_state() if y0 is None else y0, dtype=float)
    final, times, history = _spectrum(
        model, start, jnp.asarray(t0, float), jnp.asarray(step),
        jnp.asarray(n_transient), jnp.asarray(qr_every), jnp.asarray(per_record), n_records)
    final, times, history = (np.asarray(a) for a in (final, times, history))
    tail = history[-max(1, len(history) // 4):]
    return LyapunovSpectrum(
        exponents=history[-1], error=tail.max(axis=0) - tail.min(axis=0), times=times,
        history=history, final_state=final, t1=t1, transient=transient, dt=step,
        state_names=tuple(model.state_names), model=model)
