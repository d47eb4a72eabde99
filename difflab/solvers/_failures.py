"""``throw=True`` under ``jax.jit`` and ``jax.vmap``: an error that says why the run failed
and, for a batch, which member failed first.

Inside a transformation the result code is only known when the program runs, so the check
is an ``equinox.branched_error_if`` whose index encodes the first failed member (counted
over the whole batch, through a ``custom_vmap`` rule) and its result code. The check
raises through a host callback, which only a program for the CPU may hold: a program
lowered for a GPU or a TPU (``lax.platform_dependent``) carries the result codes alone,
and the host raises from them when the values come back (``simulate`` does so for a run
it is not traced in).
"""

import dataclasses
import functools
import math
from collections.abc import Sequence

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ._result import Result, message

_CODES = len(Result)


@dataclasses.dataclass(frozen=True)
class FailureMessages(Sequence):
    """The error text for each index ``member * len(Result) + code`` (``member``: the
    flat position in a batch of ``shape``; ``()`` for a single run)."""

    model: str
    shape: tuple[int, ...]

    def __len__(self) -> int:
        return _CODES * math.prod(self.shape)

    def __getitem__(self, index: int) -> str:
        member, code = divmod(int(index), _CODES)
        text = f"{self.model}: {message(code)}"
        if not self.shape:
            return text
        where = tuple(int(i) for i in np.unravel_index(member, self.shape))
        axes = "" if len(where) == 1 else " (an index per vmapped axis, outermost first)"
        where = where[0] if len(where) == 1 else where
        return (f"{text}; batch member {where}{axes} is the first that failed (simulate "
                "with throw=False to keep the batch and read each member's result)")


def error_if_failed(name: str, ys, result):
    """``ys``, with an error at run time naming the reason when ``result`` is a failure
    (on the CPU; elsewhere ``ys`` as it is, the failure in ``result``)."""
    return jax.lax.platform_dependent(ys, result, cpu=lambda ys, result: _check(ys, result, name),
                                      default=lambda ys, result: ys)


@functools.partial(jax.custom_jvp, nondiff_argnums=(2,))
def _check(ys, result, name):
    return _batch_aware(name)(ys, result)


@_check.defjvp
def _check_jvp(name, primals, tangents):
    ys, result = primals
    return _check(ys, result, name), tangents[0]


def _batch_aware(name: str):
    """The check, which under ``vmap`` sees the whole batch of result codes at once."""

    @jax.custom_batching.custom_vmap
    def check(ys, result):
        return _error_if(ys, result, name)

    @check.def_vmap
    def _rule(axis_size, in_batched, ys, result):
        ys, result = (x if batched else jnp.broadcast_to(x, (axis_size, *x.shape))
                      for x, batched in zip((ys, result), in_batched))
        return check(ys, result), True

    return check


def _error_if(ys, result, name: str):
    failed = result != Result.SUCCESS
    first = jnp.argmax(failed.reshape(-1))
    index = first * _CODES + result.reshape(-1)[first]
    return eqx.branched_error_if(ys, jnp.any(failed), index,
                                 FailureMessages(name, tuple(result.shape)))


def explain(code, stats: dict, *, solver: str, stiff: bool, t0, t1) -> str:
    """The message of result ``code``, with what happened (``stats``: see
    ``_steppers/integrate.py``) and what would help, for a run of ``solver`` from ``t0``
    to ``t1`` (``stiff``: whether the solver is implicit)."""
    code = Result(int(code))
    s = {k: np.asarray(v).item() for k, v in stats.items()}
    a, r, t, h, stable = (s["accepted_steps"], s["rejected_steps"], s["t_reached"],
                          s["dt_reached"], s["dt_stable"])
    where = f"at t = {t:.6g} (t1 = {float(t1):g})"
    limit = (f"{solver}'s stability limit for this problem is about dt = {stable:.3g} (from "
             "the spectral radius of the Jacobian)")
    remedy = f"use solver='kvaerno5' (stiff) or dt <= {0.9 * stable:.2g}"
    if code == Result.UNSTABLE:
        return (f"dt = {h:.3g} is outside {solver}'s stability region, so the states are "
                f"garbage: {limit}; {remedy}")
    if code == Result.DIVERGED and h > stable:
        return (f"the state became infinite or NaN (the solution diverged) {where}: {limit}; "
                f"{remedy}")
    if code == Result.MAX_STEPS_REACHED:
        return f"{_steps_taken(a, r, where, h)}; {_more_steps(a, r, t, float(t0), float(t1), stiff)}"
    if code in (Result.DIVERGED, Result.STEP_SIZE_TOO_SMALL, Result.SOLVER_FAILED):
        return f"{code.message} ({where}, step size {h:.3g}, {a} steps accepted, {r} rejected)"
    return code.message


def _steps_taken(a, r, where, h) -> str:
    return (f"the solver took max_steps = {a + r} steps ({a} accepted, {r} rejected) and "
            f"stopped {where} with step size {h:.3g}")


def _more_steps(a, r, t, t0, t1, stiff) -> str:
    """What would help a run that ran out of steps."""
    if a == 0 or r > a:
        what = "no step was accepted" if a == 0 else "most steps were rejected"
        if stiff:
            return (f"{what}: give a small first step (dt = 1e-8, say) or try another stiff "
                    "solver (kvaerno3, kvaerno4)")
        return f"{what}, so the problem is probably stiff: use solver='kvaerno5'"
    pace = "" if not t > t0 else (
        f"at this pace about {int(np.ceil((a + r) * (t1 - t0) / (t - t0))):,} steps "
        "are needed: ")
    return f"{pace}raise max_steps or loosen rtol/atol" + (
        "" if stiff else "; if the problem is stiff, kvaerno5 needs far fewer steps")
