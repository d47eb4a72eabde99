"""How ``jax.grad`` goes through a solve: forward sensitivities or a checkpointed adjoint.

Three strategies, chosen with ``simulate(..., adjoint=...)``:

- :class:`ForwardSensitivity` (``"forward"``): the Jacobian of the saved states with
  respect to every differentiated input, carried through the same loop as the solve (as
  CVODES does) and contracted with the cotangent. One pass of ``1 + P`` tangents for
  ``P`` differentiated scalars; memory independent of the number of steps. Supports every
  transformation (``jvp``, ``jacfwd``, ``grad``, ``vmap``, ``hessian`` of forward mode).
- :class:`CheckpointedAdjoint` (``"reverse"``): the discrete adjoint, stepped backwards
  from ``t1`` to ``t0`` through the pullback of each step, with the cotangents of the
  saved states added as it passes them. The states it needs are recomputed, not taped: a
  run of steps is cut into at most ``block`` runs whose start states are kept, each of
  those again (``levels`` deep, 3 by default), down to runs of at most ``block`` steps
  whose every state is kept. Memory is ``levels * block`` states whatever the number of
  steps (up to ``block ** levels`` of them); the cost is one forward pass, one re-run per
  level actually needed (none for a level longer than the whole run), and the pullbacks,
  about 4-6 forward passes whatever ``P``. Adaptive solves use diffrax's
  ``RecursiveCheckpointAdjoint``. Reverse mode only (``jax.grad``, ``jax.vjp``,
  ``jax.jacrev``).
- :class:`AutoAdjoint` (``"auto"``, the default): forward sensitivities while the
  differentiated scalars number at most ``max_forward``, else the checkpointed adjoint.

The rule of ``"auto"``: a model whose array leaves hold at most ``max_forward`` (16)
scalars in total is always differentiated by forward sensitivities, which every JAX
transformation supports. A larger model (a neural network) is wrapped in a
``jax.custom_vjp`` that counts, when ``jax.grad`` reaches it, the scalars actually
differentiated (``P``): forward sensitivities for ``P <= max_forward``, the checkpointed
adjoint above. Forward mode (``jax.jvp``/``jax.jacfwd``) through such a large model needs
``adjoint="forward"``.
"""

import functools

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax.flatten_util import ravel_pytree

from .._host_checks import error_if_on_cpu
from .integrate import Plan, forward_integrate, save_step, sensitivities, step_count

MAX_FORWARD = 16  # measured crossover: between 13 and 21 scalars (docs/fitting.md)


class AbstractAdjoint(eqx.Module):
    """How derivatives of a solve are computed: ``integrate(plan, args)``, differentiable."""

    def integrate(self, plan: Plan, args: dict):
        raise NotImplementedError


class ForwardSensitivity(AbstractAdjoint):
    """Forward sensitivities carried in the solve; works under every JAX transformation."""

    def integrate(self, plan, args):
        return forward_integrate(plan, args)


class CheckpointedAdjoint(AbstractAdjoint):
    """The discrete adjoint from checkpoints: reverse mode, memory independent of steps.

    A run of up to ``block ** levels`` steps (default ``512 ** 3``, over 10^8) is reversed
    with ``levels`` buffers of ``block`` states; a longer run raises an error.
    """

    block: int = eqx.field(static=True, default=512)
    levels: int = eqx.field(static=True, default=3)

    def __check_init__(self):
        if self.block < 2 or self.levels < 1:
            raise ValueError("CheckpointedAdjoint needs block >= 2 and levels >= 1")

    def integrate(self, plan, args):
        return _reverse_integrate(plan, args)


class AutoAdjoint(AbstractAdjoint):
    """Forward sensitivities for at most ``max_forward`` differentiated scalars, else reverse."""

    max_forward: int = eqx.field(static=True, default=MAX_FORWARD)
    reverse: CheckpointedAdjoint = CheckpointedAdjoint()

    def integrate(self, plan, args):
        if _size(args["model"]) <= self.max_forward:
            return forward_integrate(plan, args)
        return _reverse_integrate(plan, args)


_BY_NAME = {"auto": AutoAdjoint, "forward": ForwardSensitivity, "reverse": CheckpointedAdjoint}


def resolve_adjoint(adjoint) -> AbstractAdjoint:
    """The strategy for a name (``"auto"``, ``"forward"``, ``"reverse"``) or object."""
    if isinstance(adjoint, AbstractAdjoint):
        return adjoint
    if isinstance(adjoint, str) and adjoint in _BY_NAME:
        return _BY_NAME[adjoint]()
    raise ValueError(
        f"adjoint must be 'auto', 'forward', 'reverse' or an adjoint object, not {adjoint!r}"
    )


def _inexact(x) -> bool:
    dtype = getattr(x, "dtype", None)
    return dtype is not None and jnp.issubdtype(dtype, jnp.inexact)


def _size(tree) -> int:
    return sum(int(np.size(x)) for x in jax.tree.leaves(tree) if _inexact(x))


def _strategy(plan) -> CheckpointedAdjoint:
    adjoint = plan.adjoint
    return adjoint.reverse if isinstance(adjoint, AutoAdjoint) else adjoint


def _max_forward(plan) -> int:
    adjoint = plan.adjoint
    return adjoint.max_forward if isinstance(adjoint, AutoAdjoint) else 0


# -- the custom VJP: forward sensitivities or a reverse sweep, chosen per call ---------


@functools.partial(jax.custom_vjp, nondiff_argnums=(0,))
def _reverse_integrate(plan: Plan, args: dict):
    return plan.run(args)


class _Residuals(eqx.Module):
    values: list
    saved: jax.Array  # the Jacobian (forward) or the saved states (reverse)
    mode: str = eqx.field(static=True)
    treedef: object = eqx.field(static=True)
    live: tuple[int, ...] = eqx.field(static=True)


def _fwd(plan, args):
    leaves, treedef = jax.tree.flatten(args, is_leaf=lambda x: hasattr(x, "perturbed"))
    values = [leaf.value for leaf in leaves]
    live = tuple(i for i, leaf in enumerate(leaves)
                 if leaf.perturbed and _inexact(leaf.value))
    n_live = sum(int(np.size(values[i])) for i in live)
    if n_live <= _max_forward(plan):
        out, jac, _ = sensitivities(plan, values, treedef, list(live))
        return out, _Residuals(values, jac, "forward", treedef, live)
    out = plan.run(treedef.unflatten(values))
    return out, _Residuals(values, jnp.zeros(0), "reverse", treedef, live)  # no tape


def _bwd(plan, residuals, cts):
    mode, treedef, live = residuals.mode, residuals.treedef, residuals.live
    values, saved = residuals.values, residuals.saved
    ct = cts[0]
    if isinstance(ct, jax.custom_derivatives.SymbolicZero):
        ct = jnp.zeros(ct.shape, ct.dtype)
    if mode == "forward":
        x_live, unravel = ravel_pytree([values[i] for i in live])
        grads = unravel(jnp.tensordot(ct, saved, axes=ct.ndim))
    else:
        grads = _reverse_sweep(plan, values, treedef, live, ct)
    out = [None] * len(values)
    for i, g in zip(live, grads):
        out[i] = g
    return (treedef.unflatten(out),)


_reverse_integrate.defvjp(_fwd, _bwd, symbolic_zeros=True)


def _reverse_sweep(plan, values, treedef, live, ct):
    """The cotangents of ``values[i] for i in live`` given the cotangent ``ct`` of ``ys``."""
    live_values = [values[i] for i in live]

    def args_of(live_values):
        vals = list(values)
        for i, v in zip(live, live_values):
            vals[i] = v
        return treedef.unflatten(vals)

    if plan.solver.adaptive:
        def ys_of(live_values):
            return _run_adaptive_checkpointed(plan, args_of(live_values))

        _, pull = jax.vjp(ys_of, live_values)
        return pull(ct)[0]
    return _fixed_sweep(plan, args_of, live_values, ct, _strategy(plan))


def _run_adaptive_checkpointed(plan, a):
    import diffrax

    model = eqx.combine(a["model"], plan.model_static)
    ts = jnp.linspace(a["t0"], a["t1"], plan.n_save)
    ys, _, _ = plan.solver.solve(
        model, a["y0"], a["t0"], a["t1"], ts, a["dt"], a["rtol"], a["atol"], plan.max_steps,
        adjoint=diffrax.RecursiveCheckpointAdjoint(),
    )
    return ys


# -- the discrete adjoint of a fixed-step solve ---------------------------------------


def _fixed_sweep(plan, args_of, live_values, ct, strategy):
    """Step the adjoint back from ``t1`` to ``t0`` (see the module docs)."""
    a = args_of(live_values)
    n_steps = step_count(a["t0"], a["t1"], a["dt"])

    def theta_of(live_values):  # what a step depends on differentiably
        a = args_of(live_values)
        return a["model"], a["t0"], (a["t1"] - a["t0"]) / n_steps

    theta, theta_pull = jax.vjp(theta_of, live_values)
    inject = _Injection(ct, n_steps, plan.n_save - 1)
    sweep = _Levels(_Step(plan, a["key"]), inject, strategy.block)
    g0 = jax.tree.map(jnp.zeros_like, theta)
    lam, g = sweep.reverse(strategy.levels, theta, a["y0"], 0, n_steps, inject(n_steps), g0)
    grads = theta_pull(g)[0]
    _, y0_pull = jax.vjp(lambda v: args_of(v)["y0"], live_values)
    grads = jax.tree.map(jnp.add, grads, y0_pull(lam)[0])
    too_long = n_steps > strategy.block ** strategy.levels
    return error_if_on_cpu(grads, too_long, "CheckpointedAdjoint: the run has more than "
                        "block ** levels steps; raise levels (or block)")


class _Injection:
    """The cotangent of the state after ``i`` steps: the sum of ``ct[j]`` over the saved
    points ``j`` taken after step ``i`` (none, one, or several when ``n_save`` exceeds the
    number of steps)."""

    def __init__(self, ct, n_steps, n):
        self.ct, self.n_steps, self.n = ct, n_steps, n
        j = jnp.arange(n + 1)
        # more saved points than steps: steps <= n, so a segment sum over n + 1 slots
        self.per_step = jax.ops.segment_sum(ct, save_step(j, n_steps, n), num_segments=n + 1)

    def __call__(self, i):
        n, steps = self.n, self.n_steps
        lo = (i * n + steps - 1) // steps  # the save points j with save_step(j) == i
        hi = ((i + 1) * n + steps - 1) // steps - 1
        one = jnp.where(lo <= hi, self.ct[jnp.clip(lo, 0, n)], 0.0)
        return jnp.where(steps >= n, one, self.per_step[jnp.minimum(i, n)])


class _Step:
    """One step as a function of ``theta = (model arrays, t0, h)``, and its pullback."""

    def __init__(self, plan, key):
        self.stepper, self.static, self.key = plan.solver, plan.model_static, key

    def __call__(self, theta, i, y):
        model_dyn, t0, h = theta
        dw = None
        if self.stepper.stochastic:
            noise = jax.random.normal(jax.random.fold_in(self.key, i), y.shape, y.dtype)
            dw = noise * jnp.sqrt(h)
        model = eqx.combine(model_dyn, self.static)
        return self.stepper.step(model, t0 + i * h, y, h, dw)

    def advance(self, theta, y, start, stop):
        return jax.lax.fori_loop(start, stop, lambda i, y: self(theta, i, y), y)

    def pull(self, theta, i, y, lam):
        _, pull = jax.vjp(lambda th, y: self(th, i, y), theta, y)
        return pull(lam)


class _Levels:
    """Reverse steps ``a .. b - 1`` from the state at ``a``, ``levels`` buffers deep.

    A level above the last cuts its steps into runs of ``block ** (level - 1)`` steps
    (at most ``block`` of them), keeps their start states, and reverses the runs from the
    last; the last level keeps every state of a run of at most ``block`` steps and steps
    the adjoint back through them, adding the saved points' cotangents as it passes them.
    A run shorter than a level's run length passes straight through that level.
    """

    def __init__(self, step: _Step, inject: _Injection, block: int):
        self.step, self.inject, self.block = step, inject, block

    def reverse(self, level, theta, y_a, a, b, lam, g):
        if level == 1:
            return self._leaf(theta, y_a, a, b, lam, g)
        size = self.block ** (level - 1)
        count = (b - a + size - 1) // size
        buffer = jnp.zeros((self.block, *y_a.shape), y_a.dtype).at[0].set(y_a)

        def forward(s, carry):
            y, buffer = carry
            y = self.step.advance(theta, y, a + s * size, a + (s + 1) * size)
            return y, buffer.at[s + 1].set(y)

        _, buffer = jax.lax.fori_loop(0, count - 1, forward, (y_a, buffer))

        def backward(r, carry):
            s = count - 1 - r
            lo = a + s * size
            return self.reverse(level - 1, theta, buffer[s], lo, jnp.minimum(lo + size, b),
                                *carry)

        return jax.lax.fori_loop(0, count, backward, (lam, g))

    def _leaf(self, theta, y_a, a, b, lam, g):
        buffer = jnp.zeros((self.block, *y_a.shape), y_a.dtype)

        def forward(k, carry):
            y, buffer = carry
            return self.step(theta, a + k, y), buffer.at[k].set(y)

        _, buffer = jax.lax.fori_loop(0, b - a, forward, (y_a, buffer))

        def backward(r, carry):
            lam, g = carry
            k = b - a - 1 - r
            g_theta, lam = self.step.pull(theta, a + k, buffer[k], lam)
            return lam + self.inject(a + k), jax.tree.map(jnp.add, g, g_theta)

        return jax.lax.fori_loop(0, b - a, backward, (lam, g))
