"""The automatic step and saved points: one rule for every entry point.

``simulate``, ``stream``, ``sweep``, ``sensitivity``, ``fit``, the command line and the
app all leave ``dt`` and ``n_save`` to :func:`auto_settings` when they are not given.

The rule (``docs/solvers.md``): a short probe follows the model from its initial state
and measures ``rate``, the largest spectral radius of the Jacobian ``df/dy`` it meets
(power iteration on Jacobian-vector products, ``stability.dominant_eigenvalue``). A
fixed step is then the smallest of

- ``(t1 - t0) / 1000``, the resolution of the run;
- ``STABILITY_SAFETY * radius / rate``, inside the method's stability region;
- ``z / rate`` with ``z = ((p + 1)! * rtol) ** (1 / p)`` for a method of order ``p``: the
  local error over one characteristic time ``1 / rate`` stays under ``rtol``; this one is
  relaxed to at most :data:`MAX_AUTO_STEPS` steps, the other two never are.

Saved points (explicit solvers): :data:`POINTS_PER_TIME` per characteristic time, taken
from the ladder 1001, 2001, 5001, 10001, ... (nearby parameter values share a compiled
program), at most one per step and within :data:`SAVE_BUDGET` bytes of saved states.
"""

import dataclasses
import math

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ._model_checks import check_returns, initial_state
from ._resources import INDEX_LIMIT_32
from ._settings import DEFAULTS
from ._steppers.catalog import resolve_solver
from ._steppers.fixed import RK4
from ._steppers.stability import dominant_eigenvalue

DEFAULT_STEPS = 1000  # (t1 - t0) / 1000: the coarsest automatic step
PROBE_SEGMENTS, PROBE_STEPS = 64, 4
PROBE_STEP = 0.5  # the probe's own step, in characteristic times 1 / rate
STABILITY_SAFETY = 0.5  # the rate met later in a run may exceed the probe's
MAX_AUTO_STEPS = 2_000_000  # accuracy is relaxed past this many steps, stability never
POINTS_PER_TIME = 20  # saved points per characteristic time 1 / rate
MIN_SAVE = 1001
SAVE_BUDGET = 32 * 2**20  # bytes of saved states an automatic n_save may take


@dataclasses.dataclass(frozen=True)
class AutoStep:
    """What the rule chose: ``dt`` (``None``: an adaptive solver's own), ``n_save``, the
    probed ``rate`` (``nan`` when not measured) and what limited the step, in words."""

    dt: float | None
    n_save: int | None
    rate: float
    limit: str


PROBE_TRIES = 4  # each try after a probe that diverged takes steps ten times smaller
PROBE_JUMP = 1e3  # a rate this many times the last one: the probe itself diverged


@eqx.filter_jit
def _probe(model, t0, t1, y0, fraction=1.0):
    """The spectral radius of ``df/dy`` at the start of each probe segment, stepping
    ``fraction`` of the probe's usual step."""
    stepper = RK4()

    def segment(carry, _):
        t, y = carry
        rate, _ = dominant_eigenvalue(lambda y: model.vector_field(t, y), y)
        h = fraction * jnp.minimum(PROBE_STEP / rate,
                                   (t1 - t0) / (PROBE_SEGMENTS * PROBE_STEPS))

        def step(c, _):
            t, y = c
            return (t + h, stepper.step(model, t, y, h, None)), None

        return jax.lax.scan(step, (t, y), None, length=PROBE_STEPS)[0], rate

    return jax.lax.scan(segment, (t0, y0), None, length=PROBE_SEGMENTS)[1]


def probe_rate(model, t0: float, t1: float, y0) -> float:
    """The largest spectral radius of the Jacobian met along a short probe from ``y0``
    (``nan`` when it cannot be measured: a vector field JAX cannot differentiate, or a
    probe that found no finite rate)."""
    model = jax.tree.map(lambda x: jax.lax.stop_gradient(x) if eqx.is_array(x) else x, model)
    y0 = jnp.asarray(y0)
    t0, t1 = jnp.asarray(t0, y0.dtype), jnp.asarray(t1, y0.dtype)
    for k in range(PROBE_TRIES):  # a fast transient the first rate did not foresee
        try:
            rates = np.asarray(_probe(model, t0, t1, y0, jnp.asarray(10.0**-k, y0.dtype)))
        except (TypeError, ValueError, NotImplementedError):  # e.g. a callback without a JVP
            return math.nan
        kept = _before_divergence(rates)
        if len(kept) == len(rates):
            break
    kept = kept[kept > 0]
    return float(kept.max()) if kept.size else math.nan


def _before_divergence(rates: np.ndarray) -> np.ndarray:
    """The rates measured before the probe's own steps diverged (a rate not finite, or
    :data:`PROBE_JUMP` times the one before)."""
    bad = ~np.isfinite(rates)
    bad[1:] |= rates[1:] > PROBE_JUMP * np.abs(rates[:-1])
    return rates[: np.argmax(bad)] if bad.any() else rates


def probe_rates(model, t0: float, t1: float, y0s, models=None) -> float:
    """:func:`probe_rate`, the largest over several initial states or models (a sweep's)."""
    found = [probe_rate(m, t0, t1, y) for m, y in zip(models or [model] * len(y0s), y0s)]
    found = [r for r in found if math.isfinite(r)]
    return max(found) if found else math.nan


def fixed_step(stepper, rate: float, span: float, rtol: float) -> tuple[float, str]:
    """The rule's fixed step for ``stepper`` and what limited it."""
    candidates = [(span / DEFAULT_STEPS, "resolution (t1 - t0) / 1000")]
    if math.isfinite(rate) and rate > 0:
        radius = getattr(stepper, "stability_radius", None)
        if radius is not None:
            candidates.append((STABILITY_SAFETY * radius / rate, "stability"))
        if not stepper.stochastic:
            p = stepper.order
            z = (math.factorial(p + 1) * float(rtol)) ** (1.0 / p)
            accurate = max(z / rate, span / MAX_AUTO_STEPS)
            why = "accuracy" if z / rate >= span / MAX_AUTO_STEPS else "step budget"
            candidates.append((accurate, why))
    return min(candidates)


def _ladder(n: float) -> int:
    """The smallest of 1001, 2001, 5001, 10001, 20001, ... that is at least ``n``."""
    for value in _rungs():
        if value >= n:
            break
    return value


def _ladder_below(n: int) -> int:
    """The largest rung of the ladder that is at most ``n`` (1001 at least)."""
    below = MIN_SAVE
    for value in _rungs():
        if value > n:
            break
        below = value
    return below


def _rungs():
    return (m * 10**k + 1 for k in range(3, 16) for m in (1, 2, 5))


def save_points(rate: float, span: float, steps: int | None, n_states: int,
                itemsize: int, min_points: int | None = None) -> int:
    """Saved points resolving ``POINTS_PER_TIME`` per characteristic time ``1 / rate``
    on the ladder, at least ``min_points``, at most one per step and within the budget."""
    wanted = max(MIN_SAVE, min_points or 0)
    if math.isfinite(rate) and rate > 0:
        wanted = max(wanted, _ladder(POINTS_PER_TIME * rate * span + 1))
    most = max(MIN_SAVE, SAVE_BUDGET // (max(n_states, 1) * itemsize))
    if steps is not None:
        most = min(most, steps + 1)
        if not jax.config.jax_enable_x64:
            most = min(most, INDEX_LIMIT_32 // max(steps, 1) + 1)
    if most < MIN_SAVE:
        return max(2, int(most))
    if wanted > most:
        wanted = max(_ladder_below(most), min(min_points or 0, most))
    return int(wanted)


def _explicit(solver) -> bool:
    inner = getattr(solver, "solver", None)
    return not solver.stochastic and not isinstance(inner, diffrax.AbstractImplicitSolver)


def choose(model, solver, t0: float, t1: float, y0, *, dt=None, n_save=None,
                  rtol: float = 1e-6, min_points: int | None = None,
                  points: bool = True) -> AutoStep:
    """``dt`` and ``n_save`` for a run of ``model`` with ``solver`` (a resolved solver)
    from ``y0``, the given ones kept, the others chosen by the rule of this module
    (``n_save`` only with ``points``: else left ``None``, the plain default)."""
    span = float(t1) - float(t0)
    need_dt = dt is None and not solver.adaptive
    need_points = n_save is None and points and _explicit(solver)
    rate, limit = math.nan, "given"
    if need_dt or need_points:
        rate = probe_rate(model, t0, t1, y0)
    if need_dt:
        dt, limit = fixed_step(solver, rate, span, rtol)
    elif dt is None:
        limit = "error control"
    steps = None if solver.adaptive else max(1, math.ceil(span / float(dt) * (1.0 - 1e-12)))
    if need_points:
        y0 = np.asarray(y0)
        n_save = save_points(rate, span, steps, y0.size, y0.dtype.itemsize, min_points)
    elif n_save is None and points and min_points:  # implicit or stochastic: as asked
        n_save = max(2, min(min_points, math.inf if steps is None else steps + 1))
    return AutoStep(None if dt is None else float(dt), n_save, rate, limit)


def auto_step(model, t1, *, t0=None, solver=None, y0=None, dt=None, n_save=None,
              rtol=None, min_points: int | None = None) -> AutoStep:
    """What ``simulate(model, t1, ...)`` takes for ``dt`` and ``n_save`` left ``None``:
    the automatic rule (``docs/solvers.md``), with at least ``min_points`` saved points
    for an explicit solver (a plot's width, say). Arguments as in ``simulate``."""
    solver = resolve_solver(solver, model)
    t0 = DEFAULTS["t0"] if t0 is None else float(t0)
    y0 = initial_state(model, y0)
    check_returns(model, t0, y0)
    rtol = DEFAULTS["rtol"] if rtol is None else float(rtol)
    return choose(model, solver, t0, float(t1), y0, dt=dt, n_save=n_save, rtol=rtol,
                  min_points=min_points)
