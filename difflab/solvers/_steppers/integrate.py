"""Integration kernels, and their derivatives as forward sensitivities carried in the solve.

``integrate(plan, args)`` returns ``(ys, result, stats)``, ``stats`` a dict of scalars:
``accepted_steps``, ``rejected_steps``, ``t_reached`` (the end, or where the run stopped
or first saved a non-finite state), ``dt_reached`` (the step size there) and
``dt_stable`` (the largest stable fixed step, ``inf`` for adaptive solvers); a plan with
``events`` returns a fourth output, the run's ``Events`` (``crossings.py``), and is always
differentiated by forward sensitivities, which carry the events' times and states too;
otherwise ``plan.adjoint`` says how it is differentiated (``difflab/solvers/_adjoint.py``). The default, forward sensitivities, is
the JVP rule below: it computes the Jacobian of ``ys`` with respect to every input that is
being differentiated (found through symbolic zeros) by pushing a basis of tangents through
the same loop, as CVODES does, and contracts it with the incoming tangent. That rule is
linear in the tangents, so ``jax.grad`` transposes it: reverse mode costs one forward pass
with a few extra tangents, needs no tape, and works through loops whose trip count is a
traced value. Its memory does not depend on the number of steps.
"""

import dataclasses
import functools

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax.custom_derivatives import SymbolicZero
from jax.flatten_util import ravel_pytree

from .._result import Result, mark_diverged
from .crossings import Record, Watch
from .stability import stable_step


def step_count(t0, t1, dt):
    """The number of fixed steps of at most ``dt`` that cover ``[t0, t1]``."""
    n = jnp.ceil((t1 - t0) / dt * (1.0 - 1e-12))
    return jnp.maximum(n, 1).astype(jnp.int64 if jax.config.jax_enable_x64 else jnp.int32)


def save_step(j, n_steps, n_intervals):
    """The step index at which save point ``j`` is taken (clipped to the last step)."""
    j = jnp.minimum(j, n_intervals)
    return (j * n_steps) // n_intervals


def advance(stepper, model, y, t0, h, n_steps, n_intervals, first, count, key):
    """Step through save intervals ``first .. first + count - 1``; the state at each end."""

    def one_step(i, y):
        dw = None
        if stepper.stochastic:
            noise = jax.random.normal(jax.random.fold_in(key, i), y.shape, y.dtype)
            dw = noise * jnp.sqrt(h)
        return stepper.step(model, t0 + i * h, y, h, dw)

    def interval(y, j):
        start = save_step(j, n_steps, n_intervals)
        stop = save_step(j + 1, n_steps, n_intervals)
        y = jax.lax.fori_loop(start, stop, one_step, y)
        return y, y

    return jax.lax.scan(interval, y, first + jnp.arange(count))


def advance_watched(stepper, model, y0, t0, h, n_steps, n_intervals, watch: Watch):
    """``advance`` over the whole run, watching events: ``(saved states, Record)``.

    After a terminal event the state stays the event's and the remaining steps do nothing.
    """

    def step_map(model, t, y, theta):
        return stepper.step(model, t, y, theta, None)

    def one_step(i, carry):
        y, rec = carry

        def go():
            t, t_next = t0 + i * h, t0 + (i + 1) * h
            y1 = stepper.step(model, t, y, h, None)
            rec1 = watch.update(rec, step_map, model, t, y, t_next, y1)
            return jnp.where(rec1.stopped_by >= 0, rec1.y_stop, y1), rec1

        return jax.lax.cond(rec.stopped_by >= 0, lambda: (y, rec), go)

    def interval(carry, j):
        start = save_step(j, n_steps, n_intervals)
        stop = save_step(j + 1, n_steps, n_intervals)
        carry = jax.lax.fori_loop(start, stop, one_step, carry)
        return carry, carry[0]

    (_, rec), ys = jax.lax.scan(interval, (y0, watch.start(t0, y0)), jnp.arange(n_intervals))
    return ys, rec


@dataclasses.dataclass(frozen=True)
class Plan:
    """Everything static about one solve, hashable: the solver, the model's static part
    (its non-array leaves), and sizes. Two equal plans share one compiled program."""

    solver: eqx.Module
    model_static: eqx.Module
    n_save: int
    max_steps: int
    adjoint: eqx.Module | None = None  # how derivatives are taken; None: forward sensitivities
    events: tuple | None = None  # the static part of the events watched (the rest in args)

    def run(self, args):
        model = eqx.combine(args["model"], self.model_static)
        if self.events is not None:
            return self._run_watched(model, args, Watch(eqx.combine(args["events"], self.events)))
        if self.solver.adaptive:
            return self._run_adaptive(model, args)
        return self._run_fixed(model, args)

    def _run_fixed(self, model, a):
        n_steps = step_count(a["t0"], a["t1"], a["dt"])
        h = (a["t1"] - a["t0"]) / n_steps
        n = self.n_save - 1
        _, ys = advance(self.solver, model, a["y0"], a["t0"], h, n_steps, n, 0, n, a["key"])
        ys = jnp.concatenate([a["y0"][None], ys])
        code, dt_stable = fixed_result(self.solver, model, a["t0"], a["t1"], h, ys)
        bad = ~jnp.all(jnp.isfinite(ys), axis=-1)
        first_bad = jnp.where(jnp.any(bad), jnp.argmax(bad), n)
        taken = save_step(first_bad, n_steps, n)  # a failed run's steps: to its failure
        return ys, code, run_stats(taken, 0, a["t0"] + taken * h, h, dt_stable)

    def _run_adaptive(self, model, a):
        ts = jnp.linspace(a["t0"], a["t1"], self.n_save)
        return self.solver.solve(
            model, a["y0"], a["t0"], a["t1"], ts, a["dt"], a["rtol"], a["atol"], self.max_steps
        )

    def _run_watched(self, model, a, watch: Watch):
        """``(ys, result, stats, Events)``: saved states after a terminal event are NaN."""
        if self.solver.adaptive:
            ts = jnp.linspace(a["t0"], a["t1"], self.n_save)
            return self.solver.solve(model, a["y0"], a["t0"], a["t1"], ts, a["dt"], a["rtol"],
                                     a["atol"], self.max_steps, watch=watch)
        n_steps = step_count(a["t0"], a["t1"], a["dt"])
        h = (a["t1"] - a["t0"]) / n_steps
        n = self.n_save - 1
        ys, rec = advance_watched(self.solver, model, a["y0"], a["t0"], h, n_steps, n, watch)
        ys = jnp.concatenate([a["y0"][None], ys])
        code, dt_stable = fixed_result(self.solver, model, a["t0"], a["t1"], h, ys)
        bad = ~jnp.all(jnp.isfinite(ys), axis=-1)
        first_bad = jnp.where(jnp.any(bad), jnp.argmax(bad), n)
        stopped = rec.stopped_by >= 0
        failed_at = save_step(first_bad, n_steps, n)  # n_steps when nothing failed
        t_reached = jnp.where(stopped, rec.t_stop, a["t0"] + failed_at * h)
        taken = jnp.where(stopped, jnp.ceil((rec.t_stop - a["t0"]) / h), failed_at)
        ts = a["t0"] + save_step(jnp.arange(self.n_save), n_steps, n) * h
        ys = after_stop(ts, ys, rec)
        return ys, code, run_stats(taken, 0, t_reached, h, dt_stable), watch.finish(rec)


def fixed_result(stepper, model, t0, t1, h, ys):
    """``(result code, largest stable step)`` of fixed steps ``h`` that saved ``ys``.

    A run whose states stayed finite fails as ``UNSTABLE`` when ``h`` is outside the
    stepper's stability region at its start or at its end (``stability.py``).
    """
    dt_stable = jnp.minimum(stable_step(stepper, model, t0, ys[0]),
                            stable_step(stepper, model, t1, ys[-1]))
    code = mark_diverged(jnp.int32(Result.SUCCESS), ys)
    code = jnp.where((code == Result.SUCCESS) & (h > dt_stable), Result.UNSTABLE, code)
    return code.astype(jnp.int32), dt_stable


def after_stop(ts, ys, rec: Record):
    """``ys`` with the states saved after a terminal event (at ``ts > t_stop``) NaN."""
    return jnp.where((ts > rec.t_stop)[:, None], jnp.nan, ys)


def run_stats(accepted, rejected, t_reached, dt_reached, dt_stable) -> dict:
    """The ``stats`` of a solve, as arrays of one dtype each (see the module docs)."""
    count = jnp.int64 if jax.config.jax_enable_x64 else jnp.int32
    time = jnp.result_type(t_reached, dt_reached, float)
    return dict(accepted_steps=jnp.asarray(accepted, count),
                rejected_steps=jnp.asarray(rejected, count),
                t_reached=jnp.asarray(t_reached, time), dt_reached=jnp.asarray(dt_reached, time),
                dt_stable=jnp.asarray(dt_stable, time))


def integrate(plan: Plan, args: dict):
    """``(ys, result, stats)`` of ``plan`` run on the traced ``args``.

    Differentiable by ``plan.adjoint`` (forward sensitivities when ``None``).
    """
    if plan.adjoint is None or plan.events is not None:  # events: forward sensitivities
        return forward_integrate(plan, args)
    return plan.adjoint.integrate(plan, args)


@functools.partial(jax.custom_jvp, nondiff_argnums=(0,))
def forward_integrate(plan: Plan, args: dict):
    """``integrate`` whose derivatives are forward sensitivities (the JVP rule below)."""
    return plan.run(args)


def sensitivities(plan: Plan, leaves, treedef, live):
    """``(ys, result, stats)`` and ``d ys / d x`` (n_save, n_states, P), ``x`` the raveled
    ``leaves[i] for i in live``: a basis of P tangents pushed through one solve."""
    x, unravel = ravel_pytree([leaves[i] for i in live])

    def run_at(x):
        values = list(leaves)
        for i, v in zip(live, unravel(x)):
            values[i] = v
        return plan.run(treedef.unflatten(values))

    def push(v):
        out, tangent = jax.jvp(run_at, (x,), (v,))
        return out, carried(tangent)

    basis = jnp.eye(x.size, dtype=x.dtype)
    out, jac = jax.vmap(push, out_axes=(None, -1))(basis)
    return out, jac, unravel


def _integrate_jvp(plan, primals, tangents):
    (args,), (targs,) = primals, tangents
    leaves, treedef = jax.tree.flatten(args)
    tleaves = treedef.flatten_up_to(targs)
    live = [i for i, t in enumerate(tleaves) if not isinstance(t, SymbolicZero)]
    out, jac, _ = sensitivities(plan, leaves, treedef, live)
    tx, _ = ravel_pytree([tleaves[i] for i in live])
    if len(out) == 4:  # with events: their times and states carry derivatives too
        codes, stats, events = jax.tree.map(zero_tangent, out[1:])
        events = eqx.tree_at(lambda e: (e.ts, e.ys), events, (jac[1] @ tx, jac[2] @ tx))
        return out, (jac[0] @ tx, codes, stats, events)
    return out, (jac @ tx, *jax.tree.map(zero_tangent, out[1:]))


def carried(out):
    """The outputs of a solve that carry derivatives: the saved states, and with events
    (a fourth output) their times and states."""
    return out[0] if len(out) == 3 else (out[0], out[3].ts, out[3].ys)


def zero_tangent(x):
    """A zero tangent of an output that does not depend on the inputs (codes, stats)."""
    if jnp.issubdtype(x.dtype, jnp.inexact):
        return jnp.zeros(x.shape, x.dtype)
    return np.zeros(x.shape, jax.dtypes.float0)


forward_integrate.defjvp(_integrate_jvp, symbolic_zeros=True)
