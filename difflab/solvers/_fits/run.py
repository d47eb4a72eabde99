"""The host side of a fit and its jitted kernels: chunks of optimizer steps for every
start, laid over the devices; the starts that stop mattering retire early."""

import dataclasses

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .. import _sharding
from .._result import Result
from .problem import initial_u


class Runner:
    """The host side of a fit: starts on the devices, one chunk of steps per call."""

    def __init__(self, optimizer, problem, scales, mesh, args, model, u_rows, chunk):
        self.optimizer, self.problem, self.mesh, self.args = optimizer, problem, mesh, args
        self.scales = scales
        self.n_starts, self.chunk = len(u_rows), chunk
        n_pad = _sharding.padded_size(self.n_starts, mesh.size)
        free = initial_u(problem, model, u_rows[0], args)["free"]
        rows = _sharding.pad_batch(u_rows, n_pad)
        u = {"scalars": rows, "free": jax.tree.map(
            lambda x: np.broadcast_to(np.asarray(x), (n_pad, *np.shape(x))), free)}
        self.u = _sharding.put_batch(u, mesh)
        self.state = jax.device_put(_init(optimizer, problem, self.u, args),
                                    _sharding.batch_sharding(mesh))
        self.status = _sharding.put_batch({
            "done": np.zeros(n_pad, bool), "code": np.zeros(n_pad, np.int32),
            "best": np.full(n_pad, np.inf), "mark": np.full(n_pad, np.inf),
            "since": np.zeros(n_pad, np.int32)}, mesh)
        self.steps = 0
        self.last_loss = np.full(self.n_starts, np.nan)
        self.last_params = self._params(u_rows)
        self.history, self.param_history = [], []

    @property
    def all_done(self) -> bool:
        return bool(np.all(self.done))

    @property
    def done(self) -> np.ndarray:
        """Which starts have finished, shape (n_starts,)."""
        return np.asarray(_sharding.local_rows(self.status["done"]))[: self.n_starts]

    def _params(self, u_rows):
        return np.stack([[float(s.value(u)) for s, u in zip(self.scales, row)]
                         for row in np.asarray(u_rows)]).reshape(len(u_rows), -1)

    def advance(self, remaining: int):
        """Run one chunk; ``(step, chunk losses, chunk parameters, start losses)``."""
        # the step buffers have a power-of-two length, so small chunk sizes share a program
        size = 1 << max(4, (self.chunk - 1).bit_length())
        finite = np.isfinite(self.last_loss)
        leader = np.nanmin(self.last_loss) if np.any(finite) else np.inf
        # typed scalars: a weakly typed one would make the second chunk a new program
        out = _chunk(self.optimizer, self.problem, size, self.u, self.state, self.status,
                     jnp.asarray(min(remaining, self.chunk), jnp.int32),
                     jnp.asarray(leader, jnp.result_type(float)), self.args)
        # keep the batch laid out as it went in, so the next chunk reuses the program
        self.u, self.state, self.status = jax.device_put(
            out[:3], _sharding.batch_sharding(self.mesh))
        losses, params, taken = out[3:]
        losses, params, taken = (np.array(_sharding.local_rows(x))[: self.n_starts]
                                 for x in (losses, params, taken))
        k = int(taken.max())
        losses, params = self._fill(losses[:, :k], params[:, :k], taken)
        best = np.argmin(np.where(np.isfinite(losses), losses, np.inf), axis=0)
        chunk_losses = losses[best, np.arange(k)]
        chunk_params = params[best, np.arange(k)]
        self.steps += k
        self.history.append(chunk_losses)
        self.param_history.append(chunk_params)
        if k == 0:  # every start had finished
            done = np.ones(self.status["done"].shape, bool)
            self.status = {**self.status, "done": _sharding.put_batch(done, self.mesh)}
        return self.steps, chunk_losses, chunk_params, self.last_loss.copy()

    def _fill(self, losses, params, taken):
        """Carry each start's last loss and parameters over the steps it did not take."""
        for i, n in enumerate(taken):
            if n < losses.shape[1]:
                losses[i, n:] = losses[i, n - 1] if n > 0 else self.last_loss[i]
                params[i, n:] = params[i, n - 1] if n > 0 else self.last_params[i]
            if losses.shape[1]:
                self.last_loss[i], self.last_params[i] = losses[i, -1], params[i, -1]
        return losses, params

    def finish(self, adam: bool, stopped: bool = False) -> "Outcome":
        """The best start: its point, weighted residuals, their Jacobian and result code."""
        u_rows = jax.tree.map(lambda x: np.asarray(_sharding.local_rows(x))[: self.n_starts],
                              self.u)
        code = np.asarray(_sharding.local_rows(self.status["code"]))[: self.n_starts]
        done = np.asarray(_sharding.local_rows(self.status["done"]))[: self.n_starts]
        final = np.where(np.isfinite(self.last_loss), self.last_loss, np.inf)
        best = int(np.argmin(final))
        u = jax.tree.map(lambda x: jnp.asarray(x[best]), u_rows)
        r, jac, params, model = _final(self.problem, u, self.args)
        r, jac, params = np.asarray(r), np.asarray(jac), np.asarray(params)
        result = Result(int(code[best]))
        if result == Result.SUCCESS and ((not done[best] and not adam) or stopped):
            result = Result.MAX_STEPS_REACHED
        history = np.concatenate(self.history) if self.history else np.zeros(0)
        param_history = (np.concatenate(self.param_history) if self.param_history
                         else np.zeros((0, len(self.problem.names))))
        return Outcome(best, u, r, jac, params, result, final, self._params(u_rows["scalars"]),
                       history, param_history, model)


@dataclasses.dataclass(frozen=True)
class Outcome:
    """What a fit found, before its statistics."""

    best: int
    u: dict
    residuals: np.ndarray
    jacobian: np.ndarray
    params: np.ndarray
    result: Result
    start_losses: np.ndarray
    start_params: np.ndarray
    history: np.ndarray
    param_history: np.ndarray
    model: object


# -- the jitted kernels -----------------------------------------------------------------


# The starts are laid over the devices by their input sharding (``put_batch``) and the
# batch stays split through ``jit(vmap(...))``. Not ``shard_map``: inside it, lineax
# compares array structures that carry the manual mesh axis and refuses them.


@eqx.filter_jit
def _init(optimizer, problem, u, args):
    def one(u):
        return eqx.filter(optimizer.init(problem, u, args), eqx.is_array)

    return _batched(one, u)


def _batched(fn, *batch):
    """``vmap(fn)``, or ``fn`` on the only row of a batch of one (it compiles in about half
    the time: a vmapped Levenberg-Marquardt step batches its linear algebra and branches)."""
    if jax.tree.leaves(batch)[0].shape[0] == 1:
        out = fn(*jax.tree.map(lambda x: x[0], batch))
        return jax.tree.map(lambda x: x[None], out)
    return jax.vmap(fn)(*batch)


def _static_state(optimizer, problem, u, args):
    """The non-array part of the optimizer's state (made afresh; its arrays go unused)."""
    return eqx.filter(optimizer.init(problem, u, args), eqx.is_array, inverse=True)


@eqx.filter_jit
def _chunk(optimizer, problem, size, u, state, status, limit, leader, args):
    def one(u, state, status):
        static = _static_state(optimizer, problem, u, args)
        losses = jnp.full((size,), jnp.nan)
        params = jnp.full((size, len(problem.names)), jnp.nan)

        def cond(carry):
            k, _, _, status, _, _ = carry
            return (k < limit) & ~status["done"]

        def body(carry):
            k, u, state, status, losses, params = carry
            u, state, loss, done, code = optimizer.step(
                problem, u, eqx.combine(state, static), args)
            status = _stalled(optimizer, status, loss, done, code, args["optimizer"], leader)
            state = eqx.filter(state, eqx.is_array)
            losses = losses.at[k].set(loss)
            params = params.at[k].set(problem.params(u, args))
            return k + 1, u, state, status, losses, params

        carry = (jnp.zeros((), jnp.int32), u, state, status, losses, params)
        k, u, state, status, losses, params = jax.lax.while_loop(cond, body, carry)
        return u, state, status, losses, params, k

    return _batched(one, u, state, status)


STALL_STEPS = 25
TRAILING = (10.0, 1e-2)  # a start 10x worse than the best one, improving < 1% per window


def _stalled(optimizer, status, loss, done, code, opt, leader):
    """Retire LM/BFGS starts that will not matter, in windows of ``STALL_STEPS`` steps.

    A start whose best loss fell by less than ``fit_rtol`` (relative) over a window has
    converged as far as it will (what is left are steps rejected again and again). With
    several starts, one still ``TRAILING[0]`` times worse than the best start at the last
    chunk (``leader``), and improving by less than ``TRAILING[1]`` per window, is given up.
    """
    best = jnp.minimum(status["best"], loss)
    since = status["since"] + 1
    window = since >= STALL_STEPS
    progress = (status["mark"] - best) / jnp.abs(status["mark"])
    stalled = window & ((progress <= opt["rtol"])
                        | ((best > TRAILING[0] * leader) & (progress < TRAILING[1])))
    stalled = stalled & jnp.asarray(getattr(optimizer, "stalls", False))
    return {"done": done | stalled, "code": code, "best": best,
            "mark": jnp.where(window, best, status["mark"]),
            "since": jnp.where(window, 0, since)}


@eqx.filter_jit
def _final(problem, u, args):
    """The weighted residuals at ``u``, their Jacobian in the natural parameters, those
    parameters and the model (one program: nothing is left to run op by op)."""
    r = problem.residuals(u, args, adjoint="forward")
    params = problem.params(u, args)
    model = problem.model(u, args, params)
    if not problem.names:
        return r, jnp.zeros((r.shape[0], 0)), params, model
    jac = jax.jacfwd(lambda p: problem.residuals(u, args, params=p, adjoint="forward"))(params)
    return r, jac, params, model
