"""The compiled program of a sweep: blocks of points solved on each device, no collectives.

Each device receives its rows of the chunk (``shard_map``). How it walks them depends on
the backend (:func:`device_layout`, the one place that chooses): a CPU goes one
cache-sized block at a time (``lax.map``); a GPU or TPU, whose thousands of lanes such a
block would leave idle, solves all its rows at once (one block per device chunk, the chunk
sized from the device's memory: ``device_budget``). A block of a fixed-step, deterministic model is stepped
*as columns*: the state is held as ``(n_states, block)``, so every operation of a step
runs over contiguous vectors of points, and the block stays in the CPU's cache for all
its steps (see ``benchmarks/sweep_throughput.py`` for the measurements behind this).
Adaptive and stochastic solvers ``vmap`` the single-point solve of ``simulate`` instead.
Either way a point's arithmetic is that of ``simulate``. A fixed-step block may instead
run the Pallas kernel of ``_accelerators/pallas_sweep.py`` (``Kernel.engine``).
"""

import dataclasses
import functools
import time
from collections import OrderedDict
from typing import Any, ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from .. import _sharding
from .._accelerators import pallas_supported, solve_block_pallas
from .._result import Result
from .._simulate import Trajectory, save_times
from .._steppers.integrate import Plan, advance, step_count

_CACHE_SIZE = 16
#: the backends whose devices solve their whole share of a chunk at once
ACCELERATORS = frozenset({"gpu", "cuda", "rocm", "tpu"})
#: the share of an accelerator's memory a sweep's chunk may fill by default
DEVICE_MEMORY_SHARE = 0.5


def device_layout(platform: str) -> str:
    """How a device of ``platform`` walks its rows of a chunk: ``"blocks"`` (the CPU:
    cache-sized blocks one after another) or ``"whole"`` (GPUs and TPUs: all at once)."""
    if platform == "cpu":
        return "blocks"
    if platform in ACCELERATORS:
        return "whole"
    raise ValueError(f"unknown platform {platform!r}; expected cpu, gpu (cuda, rocm) or tpu")


def resolve_layout(layout: str | None, platform: str) -> str:
    """``layout`` checked (``None``: the one for ``platform``, :func:`device_layout`)."""
    if layout is None:
        return device_layout(platform)
    if layout not in ("blocks", "whole"):
        raise ValueError(f"layout must be 'blocks' or 'whole', not {layout!r}")
    return layout


def resolve_engine(kernel: str, model, solver, names) -> str:
    """What steps a block: ``"xla"`` (the compiled columns or ``vmap``), or ``"pallas"``.

    ``kernel="auto"`` is ``"xla"`` on every backend, until measurements on a GPU show
    the Pallas kernel faster (``docs/performance.md``); ``"pallas"`` is for the
    fixed-step, deterministic runs that :func:`pallas_supported` accepts (interpreted,
    slowly, off GPUs).
    """
    if kernel in ("auto", "xla"):
        return "xla"
    if kernel != "pallas":
        raise ValueError(f"kernel must be 'auto', 'xla' or 'pallas', not {kernel!r}")
    if solver.adaptive or solver.stochastic or not pallas_supported(model, solver, names):
        raise ValueError(f"kernel='pallas' cannot step {type(model).__name__} with this "
                         "solver: it runs fixed-step, deterministic models whose step it "
                         "can trace (see pallas_supported); use kernel='xla'")
    return "pallas"


def device_budget(device, default: int) -> int:
    """The bytes a chunk may fill on ``device``: ``DEVICE_MEMORY_SHARE`` of its memory where
    it reports it (``memory_stats()["bytes_limit"]``: GPUs and TPUs), else ``default``."""
    try:
        limit = (device.memory_stats() or {}).get("bytes_limit")
    except Exception:  # a backend without memory statistics
        limit = None
    return default if not limit else int(DEVICE_MEMORY_SHARE * limit)


@dataclasses.dataclass(frozen=True)
class Kernel:
    """What a sweep computes for each point: static and hashable, the key of its program."""

    plan: Plan
    names: tuple[str, ...]
    y0_swept: bool
    observables: tuple[tuple[str, Any], ...]
    keep_y: bool
    block: int
    state_names: tuple[str, ...]
    key_impl: str | None = None
    engine: str = "xla"  # or "pallas": fixed-step blocks through pallas_sweep.py

    @property
    def as_columns(self) -> bool:
        solver = self.plan.solver
        return not solver.adaptive and not solver.stochastic


def with_values(model, names, values):
    """``model`` with the scalar parameters ``names`` set to ``values[name]``."""
    if not names:
        return model
    return eqx.tree_at(lambda m: [getattr(m, n) for n in names], model,
                       [values[n] for n in names])


class _Columns(eqx.Module):
    """A stepper advancing a block of points at once: column ``j`` of ``y`` is point ``j``."""

    stepper: eqx.Module
    names: tuple[str, ...] = eqx.field(static=True)
    stochastic: ClassVar[bool] = False

    def step(self, model_values, t, y, h, dw):
        model, values = model_values

        def one(vals, column):
            return self.stepper.step(with_values(model, self.names, vals), t, column, h, None)

        return jax.vmap(one, in_axes=(0, 1), out_axes=1)(values, y)


def _solve_columns(kernel, model, base, values, y0):
    t0, t1 = base["t0"], base["t1"]
    n_steps = step_count(t0, t1, base["dt"])
    h = (t1 - t0) / n_steps
    n = kernel.plan.n_save - 1
    if kernel.engine == "pallas":
        ys = solve_block_pallas(model, kernel.plan.solver, y0.T, values, t0=t0, h=h,
                                n_steps=n_steps, n_intervals=n)
        ys = jnp.transpose(ys, (2, 0, 1))
    else:
        stepper = _Columns(kernel.plan.solver, kernel.names)
        _, ys = advance(stepper, (model, values), y0.T, t0, h, n_steps, n, 0, n, None)
        ys = jnp.concatenate([y0[:, None], jnp.transpose(ys, (2, 0, 1))], axis=1)
    finite = jnp.all(jnp.isfinite(ys), axis=(1, 2))
    result = jnp.where(finite, Result.SUCCESS, Result.DIVERGED).astype(jnp.int32)
    return ys, result, jnp.broadcast_to(n_steps, result.shape)


def _solve_each(kernel, base, values, y0, index):
    key = base["key"]
    if key is not None and kernel.key_impl is not None:
        key = jax.random.wrap_key_data(key, impl=kernel.key_impl)

    def one(vals, y0_i, i):
        args = dict(base, model=with_values(base["model"], kernel.names, vals), y0=y0_i,
                    key=None if key is None else jax.random.fold_in(key, i))
        ys, result, stats = kernel.plan.run(args)
        return ys, result, stats["accepted_steps"] + stats["rejected_steps"]

    return jax.vmap(one)(values, y0, index)


def solve_block(kernel: Kernel, base: dict, points: dict) -> dict:
    """The outputs of one block of points (traced once per compiled program)."""
    block = points["index"].shape[0]
    y0 = points.get("y0")
    if y0 is None:
        y0 = jnp.broadcast_to(base["y0"], (block, *base["y0"].shape))
    values = {n: points[n] for n in kernel.names}
    if kernel.as_columns:
        model = eqx.combine(base["model"], kernel.plan.model_static)
        ys, result, steps = _solve_columns(kernel, model, base, values, y0)
    else:
        ys, result, steps = _solve_each(kernel, base, values, y0, points["index"])
    out = {"y": ys if kernel.keep_y else ys[:, -1:], "result": result,
           "steps": steps.astype(jnp.int64 if jax.config.jax_enable_x64 else jnp.int32)}
    if kernel.observables:
        out["observables"] = _observe(kernel, base, values, ys, result, steps)
    return out


def _observe(kernel: Kernel, base: dict, values, ys, result, steps) -> dict:
    """Each observable of each point, from a trajectory that carries the point's model."""
    ts = save_times(kernel.plan, base)
    model = eqx.combine(base["model"], kernel.plan.model_static)

    def observe(ys_i, result_i, steps_i, vals):
        traj = Trajectory(ts, ys_i, result_i, steps_i, kernel.state_names,
                          model=with_values(model, kernel.names, vals))
        return {name: jnp.asarray(fn(traj), dtype=ys.dtype) for name, fn in kernel.observables}

    return jax.vmap(observe)(ys, result, steps, values)


def device_rows(kernel: Kernel, base: dict, points: dict) -> dict:
    """The outputs of one device's rows of a chunk: one block, or blocks one by one."""
    rows = points["index"].shape[0]
    n_blocks = rows // kernel.block
    if n_blocks == 1:
        return solve_block(kernel, base, points)
    blocks = jax.tree.map(lambda x: x.reshape(n_blocks, kernel.block, *x.shape[1:]), points)
    out = jax.lax.map(lambda b: solve_block(kernel, base, b), blocks)
    return jax.tree.map(lambda x: x.reshape(rows, *x.shape[2:]), out)


class Program:
    """A compiled sweep program for one kernel, mesh and chunk size."""

    def __init__(self, kernel: Kernel, mesh, base, points):
        fn = _sharding.map_batch(functools.partial(device_rows, kernel), mesh, replicated=(0,))
        start = time.perf_counter()
        lowered = jax.jit(fn).lower(base, points)
        self.compiled = lowered.compile()
        self.compile_time = time.perf_counter() - start

    def __call__(self, base, points):
        return self.compiled(base, points)

    def text(self) -> str:
        """The optimised HLO of the program (to check it holds no collectives)."""
        return self.compiled.as_text()


_PROGRAMS: "OrderedDict[tuple, Program]" = OrderedDict()


def _signature(tree) -> tuple:
    leaves, treedef = jax.tree.flatten(tree)
    return treedef, tuple((x.shape, str(x.dtype)) for x in leaves)


def program(kernel: Kernel, mesh, base, points) -> tuple[Program, bool]:
    """The compiled program for these inputs, and whether it was compiled just now."""
    key = (kernel, mesh, _signature(base), _signature(points))
    if key in _PROGRAMS:
        _PROGRAMS.move_to_end(key)
        return _PROGRAMS[key], False
    made = _PROGRAMS[key] = Program(kernel, mesh, base, points)
    while len(_PROGRAMS) > _CACHE_SIZE:
        _PROGRAMS.popitem(last=False)
    return made, True


def put_replicated(tree, mesh):
    """Every leaf whole on every device of ``mesh`` (in every process)."""
    sharding = NamedSharding(mesh, P())
    if jax.process_count() == 1:
        return jax.device_put(tree, sharding)
    return jax.tree.map(
        lambda x: jax.make_array_from_process_local_data(sharding, jax.device_get(x)), tree)
