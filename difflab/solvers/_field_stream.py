"""``stream`` for field models: a field run in chunks of frames, each on the host as it
ends, so a view or a file can show the field as it forms.

A fixed-step run carries its state between chunks as the stepper keeps it (in Fourier
space for exponential steppers) and its time summed step by step, so the frames are
those of ``simulate`` to the last bit on a CPU (to a few units of rounding on an
accelerator, whose fusions may differ between the two programs). Only one chunk of
frames is on the device at a time. Adaptive solvers restart at each chunk's first frame.
"""

from collections.abc import Iterator

import equinox as eqx
import jax
import numpy as np

from ..models import AbstractFieldModel
from ._chunk import Chunk
from ._field_checks import check_memory_of, outcome, why_not_finite
from ._field_runs import (
    _advance,
    _as_float,
    _maybe_float,
    _native,
    _run_adaptive,
    _start,
    _stepper,
    plan_field_run,
)
from ._result import Result, SimulationError


@eqx.filter_jit
def _fixed_chunk(model, stepper, carry, frames: int, per_frame: int):
    """``frames`` frames of ``per_frame`` steps from the carried ``(t, u)``."""
    stepper, _, rhs, to_grid = _native(model, stepper)
    _, out, carry = _advance(stepper, rhs, carry[1], to_grid, carry[0], frames, per_frame)
    return out, carry


@eqx.filter_jit
def _start_carry(model, solver: str, fields, t0, dt):
    """The stepper (its weights computed once) and the state it carries."""
    stepper = _stepper(solver, model, dt)
    return stepper, (t0, _native(model, stepper)[1](fields))


def _fixed_chunks(model, plan, fields, size: int):
    stepper, carry = _start_carry(model, plan.solver, fields, _as_float(plan.t0),
                                  _as_float(plan.dt))
    for first in range(1, plan.n_save, size):
        count = min(size, plan.n_save - first)
        out, carry = _fixed_chunk(model, stepper, carry, count, plan.per_frame)
        yield first, count, out, Result.SUCCESS


def _adaptive_chunks(model, plan, fields, size: int):
    ts = plan.ts
    for first in range(1, plan.n_save, size):
        count = min(size, plan.n_save - first)
        out, code, _ = _run_adaptive(model, plan.solver, fields, ts[first - 1: first + count],
                                     _maybe_float(plan.dt), _as_float(plan.rtol),
                                     _as_float(plan.atol), plan.max_steps)
        out = {n: u[1:] for n, u in out.items()}
        yield first, count, out, Result(int(code))
        fields = {n: u[-1] for n, u in out.items()}


def _finite_frames(frames: dict) -> int:
    """How many leading frames hold only finite values."""
    finite = np.logical_and.reduce([np.isfinite(u.reshape(len(u), -1)).all(axis=1)
                                    for u in frames.values()])
    return int(np.argmin(finite)) if not finite.all() else len(finite)


def stream_fields(model: AbstractFieldModel, t1, *, y0=None, chunk_size: int = 100,
                  throw: bool = True, **solve) -> Iterator:
    """``difflab.stream`` for a field model: :class:`Chunk` s whose ``ys`` are
    ``{field: (frames, *grid.shape)}``, the first holding the initial fields alone (a
    failed chunk is cut to its finite frames, then the error raised, with ``throw``), and
    whose ``settings`` are the run's ``(name, value)`` pairs (the solver's name first), as
    a ``FieldTrajectory`` records them. ``solve``: ``simulate``'s arguments
    (:func:`plan_field_run`)."""
    plan = plan_field_run(model, t1, **solve)
    check_memory_of(model, chunk_size + 1)
    fields = _start(model, y0, 2)
    # traced once before the first chunk, so that what the model cannot do on this grid
    # (a stencil wider than an axis) is refused before a caller opens a file for frames
    jax.eval_shape(model.vector_field, plan.ts[0], fields)
    ts, settings = np.asarray(plan.ts), (("solver", plan.solver), *plan.settings)
    yield Chunk(ts[:1], {n: np.asarray(u)[None] for n, u in fields.items()}, 0,
                plan.n_save, Result.SUCCESS, settings)
    chunks = _adaptive_chunks if plan.adaptive else _fixed_chunks
    for first, count, out, code in chunks(model, plan, fields, chunk_size):
        frames = {n: np.asarray(u) for n, u in jax.device_get(out).items()}
        times = ts[first: first + count]
        result = outcome(times, frames, model.grid, False, code)
        if result != Result.SUCCESS and throw:
            keep = _finite_frames(frames)
            if keep:  # the frames before the failure, then the error
                yield Chunk(times[:keep], {n: u[:keep] for n, u in frames.items()}, first,
                            plan.n_save, Result.SUCCESS, settings)
            outcome(times, frames, model.grid, True, code,  # raises, naming where
                    why=why_not_finite(plan.solver))
            raise SimulationError(f"the field run failed: {result.message}", result)
        yield Chunk(times, frames, first, plan.n_save, result, settings)
        if result != Result.SUCCESS:
            return
