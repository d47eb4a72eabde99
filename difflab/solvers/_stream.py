"""``stream``: a simulation advanced in jitted chunks, each handed to the host as it ends.

The GUI plots each chunk, the CLI moves its progress bar, the HDF5 writer appends it.
Stop by leaving the loop (or calling ``close()`` on the generator): no further chunk runs.
"""

from collections.abc import Iterator

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from ..models import AbstractFieldModel
from ._chunk import Chunk
from ._field_stream import stream_fields
from ._resources import check_memory
from ._result import Result, message
from ._settings import SolveSettings, solve_arguments
from ._simulate import SimulationError, prepare, save_times, settings_of
from ._steppers.catalog import solver_name
from ._steppers.integrate import advance, fixed_result, save_step, step_count


@eqx.filter_jit
def _fixed_chunk(plan, args, y, first, size):
    model = eqx.combine(args["model"], plan.model_static)
    n_steps = step_count(args["t0"], args["t1"], args["dt"])
    h = (args["t1"] - args["t0"]) / n_steps
    n = plan.n_save - 1
    _, ys = advance(plan.solver, model, y, args["t0"], h, n_steps, n, first - 1, size, args["key"])
    start, stop = (args["t0"] + save_step(j, n_steps, n) * h for j in (first - 1, first - 1 + size))
    code, _ = fixed_result(plan.solver, model, start, stop, h, jnp.concatenate([y[None], ys]))
    return ys, code


@eqx.filter_jit
def _adaptive_chunk(plan, args, y, first, size):
    model = eqx.combine(args["model"], plan.model_static)
    grid = jnp.linspace(args["t0"], args["t1"], plan.n_save)
    ts = grid[jnp.minimum(first + jnp.arange(size), plan.n_save - 1)]
    ys, result, _ = plan.solver.solve(
        model, y, grid[first - 1], ts[-1], ts, args["dt"], args["rtol"], args["atol"],
        plan.max_steps,
    )
    return ys, result


def stream(model, t1=None, *, t0=None, dt=None, solver=None, n_save: int | None = None,
           y0=None, key=None, rtol=None, atol=None, max_steps: int | None = None,
           settings: SolveSettings | None = None, chunk_size: int = 100,
           throw: bool = True) -> Iterator[Chunk]:
    """Yield a simulation chunk by chunk, ``chunk_size`` saved points at a time.

    ``t1`` to ``settings`` are the arguments of :func:`simulate`, with its defaults. The
    points of all chunks, joined, equal ``simulate``'s trajectory; the first chunk starts
    with the initial state. A failed chunk ends the stream (raising
    :class:`SimulationError` when ``throw``). A field model's chunks hold frames:
    ``ys[field]`` of shape ``(len(ts), *grid.shape)``, only one chunk's on the device.
    """
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be at least 1, got {chunk_size}")
    if isinstance(model, AbstractFieldModel):
        if settings is not None or key is not None:
            raise ValueError("a field model's stream takes no settings or key")
        yield from stream_fields(model, t1, t0=t0, dt=dt, solver=solver, n_save=n_save,
                                 y0=y0, rtol=rtol, atol=atol, max_steps=max_steps,
                                 chunk_size=chunk_size, throw=throw)
        return
    solve = solve_arguments(settings, t1=t1, t0=t0, dt=dt, solver=solver, n_save=n_save,
                            y0=y0, key=key, rtol=rtol, atol=atol, max_steps=max_steps)
    plan, args = prepare(model, **solve)
    check_memory(2 * plan.n_save * args["y0"].dtype.itemsize,
                 f"the {plan.n_save:,} save times of a streamed run", "lower n_save")
    recorded = settings_of(plan, args, solver_name(solve["solver"], model))
    run_chunk = _adaptive_chunk if plan.solver.adaptive else _fixed_chunk
    ts = np.asarray(save_times(plan, args))
    y = args["y0"]
    yield Chunk(ts[:1], np.asarray(y)[None], 0, plan.n_save, Result.SUCCESS, recorded)
    for first in range(1, plan.n_save, chunk_size):
        ys, result = run_chunk(plan, args, y, jnp.asarray(first), chunk_size)
        count = min(chunk_size, plan.n_save - first)
        ys, result = np.asarray(ys[:count]), Result(int(result))
        if result != Result.SUCCESS and throw:
            raise SimulationError(f"{type(model).__name__}: {message(result)}", result)
        yield Chunk(ts[first : first + count], ys, first, plan.n_save, result, recorded)
        if result != Result.SUCCESS:
            return
        y = jnp.asarray(ys[-1])
