"""A per-trajectory kernel for fixed-step sweeps, written with Pallas.

The contract, for a sweep that chooses it::

    if pallas_supported(model, solver, names):
        ys = solve_block_pallas(model, solver, y0, values, t0=t0, h=h,
                                n_steps=n_steps, n_intervals=n_intervals)

``y0`` is ``(n_states, B)`` and ``values`` maps each swept parameter name to ``(B,)``
(struct-of-arrays: a row per state or parameter, a column per trajectory); the other
parameters are the model's own. The result is ``(n_intervals + 1, n_states, B)``: ``y0``,
then the state after step ``(j * n_steps) // n_intervals`` for ``j = 1 .. n_intervals``,
the states ``simulate`` saves with ``n_save = n_intervals + 1`` and ``h = (t1 - t0) /
n_steps``. The arithmetic is ``simulate``'s: the stepper's own ``step`` of the model,
traced for one point and run lane by lane on the block (``lanes.py``). ``t0``, ``h``,
``n_steps``, the parameters and the states are traced, so new values never recompile.

Each program of the grid takes ``block`` trajectories (a power of two), keeps their state
in registers through every step (one ``fori_loop`` per save interval) and writes each
saved state once. On a GPU it compiles through Pallas' Triton lowering; elsewhere it runs
in Pallas' interpret mode (``interpret=None`` chooses), which is slow and meant for tests.
"""

import functools

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ...models import Model
from .._steppers import resolve_solver, solver_name
from .lanes import Lanes, Unsupported, elements

DEFAULT_BLOCK = 128
_REASONS: dict = {}  # why a step cannot run in the kernel (None: it can), by structure


def _step_program(model, stepper, names, dtype):
    """One point's step, ``(t, y, h, *swept, *model_arrays) -> y``, as a closed jaxpr."""
    dynamic, static = eqx.partition(model, eqx.is_array)
    leaves, treedef = jax.tree.flatten(dynamic)

    def one_point(t, y, h, swept, arrays):
        point = eqx.combine(jax.tree.unflatten(treedef, arrays), static)
        if names:
            point = point.replace(**dict(zip(names, swept)))
        return stepper.step(point, t, y, h, None)

    scalar = jax.ShapeDtypeStruct((), dtype)
    state = jax.ShapeDtypeStruct((len(model.state_names),), dtype)
    arrays = [jax.ShapeDtypeStruct(x.shape, x.dtype) for x in leaves]
    return jax.make_jaxpr(one_point)(scalar, state, scalar, (scalar,) * len(names), arrays)


def _advance(lanes, program, t, y, h, values, arrays):
    """The block's states ``y`` (a tuple of ``(block,)`` vectors) after one step."""
    scalar = lambda x: elements((), lambda _: x)  # noqa: E731
    state = elements((len(y),), lambda i: y[i[0]])
    [out] = lanes.run(program, scalar(t), state, scalar(h), *map(scalar, values), *arrays)
    return tuple(lanes.widen(out[i], y[i].dtype) for i in range(len(y)))


def _model_arrays(model, dtype) -> list:
    leaves = jax.tree.leaves(eqx.filter(model, eqx.is_array))
    odd = [x.dtype for x in leaves if x.dtype != dtype]
    if odd:
        raise Unsupported(f"its parameter arrays must all be {dtype}, not {odd[0]}")
    return leaves


def _as_elements(numbers, shapes) -> list:
    """Object arrays of ``shapes`` holding the scalars ``numbers`` in order."""
    out, at = [], 0
    for shape in shapes:
        size = int(np.prod(shape))
        out.append(elements((size,), lambda i, a=at: numbers[a + i[0]]).reshape(shape))
        at += size
    return out


def _check(model, solver, names):
    """The stepper for ``solver``; ``ValueError`` if the kernel cannot run the model."""
    if not isinstance(model, Model):
        raise TypeError(f"model must be a difflab.Model, not {type(model).__name__}")
    stepper = resolve_solver(solver, model)
    what = f"the per-trajectory kernel cannot run {type(model).__name__} with " \
           f"{solver_name(solver, model)}"
    if stepper.adaptive or stepper.stochastic:
        kind = "adaptive" if stepper.adaptive else "stochastic"
        raise ValueError(f"{what}: it takes deterministic fixed-step solvers "
                         f"(euler, heun, rk4, leapfrog), and this one is {kind}")
    specs = model.parameter_specs()
    unknown = [n for n in names if n not in specs]
    if unknown:
        raise ValueError(f"{type(model).__name__} has no parameter {unknown[0]!r}; its "
                         f"parameters are {', '.join(specs) or 'none'}")
    reason = _reason(model, stepper, tuple(names), jnp.result_type(float))
    if reason is not None:
        raise ValueError(f"{what}: {reason}")
    return stepper


def _reason(model, stepper, names, dtype) -> str | None:
    """Why the kernel cannot run this step (``None``: it can), remembered per structure."""
    dynamic, static = eqx.partition(model, eqx.is_array)
    leaves, treedef = jax.tree.flatten(dynamic)
    key = (static, treedef, tuple((x.shape, x.dtype) for x in leaves), stepper, names, dtype)
    try:
        hash(key)
    except TypeError:  # a model with unhashable static fields: probed every time
        key = None
    if key in _REASONS:
        return _REASONS[key]
    try:
        _probe(model, stepper, names, dtype)
        reason = None
    except Unsupported as error:
        reason = str(error)
    if key is not None:
        if len(_REASONS) >= 64:
            _REASONS.clear()
        _REASONS[key] = reason
    return reason


def _probe(model, stepper, names, dtype):
    """Trace one step on a block of one point, without running it."""
    program = _step_program(model, stepper, names, dtype)
    shapes = [x.shape for x in _model_arrays(model, dtype)]
    one = jax.ShapeDtypeStruct((1,), dtype)
    scalar = jax.ShapeDtypeStruct((), dtype)
    numbers = [scalar] * sum(int(np.prod(s)) for s in shapes)

    def run(t, y, h, values, numbers):
        arrays = _as_elements(numbers, shapes)
        return _advance(Lanes(1), program, t, y, h, values, arrays)

    jax.eval_shape(run, scalar, (one,) * len(model.state_names), scalar,
                   (one,) * len(names), numbers)


def pallas_supported(model, solver, names=()) -> bool:
    """Whether :func:`solve_block_pallas` can step ``model`` with ``solver`` (a name or a
    stepper), sweeping the parameters ``names``."""
    try:
        _check(model, solver, tuple(names))
    except (ValueError, TypeError):
        return False
    return True


def _kernel(program, shapes, n_intervals, scalars_ref, steps_ref, y0_ref, *refs):
    """One block: load, step through every save interval, store each saved state."""
    *values_ref, out_ref = refs
    lanes = Lanes(y0_ref.shape[-1])
    t0, h = scalars_ref[0], scalars_ref[1]
    numbers = [scalars_ref[2 + k] for k in range(sum(int(np.prod(s)) for s in shapes))]
    arrays = _as_elements(numbers, shapes)
    values = [values_ref[0][k, :] for k in range(values_ref[0].shape[0])] if values_ref else []
    y = tuple(y0_ref[s, :] for s in range(y0_ref.shape[0]))
    _store(out_ref, 0, y)
    n_steps = steps_ref[0]

    def step(i, y):
        t = t0 + i.astype(t0.dtype) * h
        return _advance(lanes, program, t, y, h, values, arrays)

    def interval(j, y):
        j = j.astype(n_steps.dtype)
        start = lax.div(j * n_steps, n_steps.dtype.type(n_intervals))
        stop = lax.div((j + 1) * n_steps, n_steps.dtype.type(n_intervals))
        y = lax.fori_loop(start, stop, step, y)
        _store(out_ref, j + 1, y)
        return y

    lax.fori_loop(0, n_intervals, interval, y)


def _store(out_ref, row, y):
    for s, column in enumerate(y):
        out_ref[row, s, :] = column


def _call(program, shapes, n_intervals, block, interpret, scalars, steps, y0, values):
    from jax.experimental import pallas as pl  # here: loading Pallas takes 0.07 s
    from jax.experimental.pallas import triton as pallas_triton

    n_states, width = y0.shape
    rows = lambda n: pl.BlockSpec((n, block), lambda i: (0, i))  # noqa: E731
    whole = lambda x: pl.BlockSpec(x.shape, lambda i: (0,))  # noqa: E731
    inputs = [scalars, steps, y0] + ([values] if values is not None else [])
    in_specs = [whole(scalars), whole(steps), rows(n_states)] + [rows(v.shape[0])
                                                                for v in inputs[3:]]
    n_save = n_intervals + 1
    return pl.pallas_call(
        functools.partial(_kernel, program, shapes, n_intervals),
        out_shape=jax.ShapeDtypeStruct((n_save, n_states, width), y0.dtype),
        grid=(width // block,), in_specs=in_specs,
        out_specs=pl.BlockSpec((n_save, n_states, block), lambda i: (0, 0, i)),
        interpret=interpret, name="difflab_trajectories",
        compiler_params=pallas_triton.CompilerParams(num_warps=max(1, min(8, block // 32)),
                                                     num_stages=1),
    )(*inputs)


@eqx.filter_jit
def _solve(model, stepper, y0, values, t0, h, n_steps, n_intervals, block, interpret):
    names = tuple(values)
    program = _step_program(model, stepper, names, y0.dtype)
    arrays = _model_arrays(model, y0.dtype)
    scalars = jnp.concatenate([jnp.stack([t0, h]).astype(y0.dtype),
                               *[jnp.ravel(x) for x in arrays]])
    rows = jnp.stack([values[n] for n in names]) if names else None
    width = y0.shape[1]
    extra = -width % block
    pad = lambda x: jnp.pad(x, ((0, 0), (0, extra)), mode="edge")  # noqa: E731
    ys = _call(program, [x.shape for x in arrays], n_intervals, block, interpret,
               scalars, jnp.reshape(n_steps, (1,)), pad(y0),
               None if rows is None else pad(rows))
    return ys[:, :, :width]


def solve_block_pallas(model, solver, y0, values=None, *, t0, h, n_steps, n_intervals,
                       block: int = DEFAULT_BLOCK, interpret: bool | None = None):
    """The saved states ``(n_intervals + 1, n_states, B)`` of ``B`` trajectories.

    Args:
        model: the model; parameters not in ``values`` keep its values.
        solver: a fixed-step solver's name (``"rk4"``) or stepper object.
        y0: the initial states, ``(n_states, B)``.
        values: ``{name: (B,) array}``, one value of each swept parameter per trajectory.
        t0, h, n_steps: the start time, the step and the number of steps.
        n_intervals: the saved intervals (``n_save - 1``), at most ``n_steps``.
        block: trajectories per program, a power of two.
        interpret: run in Pallas' interpret mode (``None``: unless on a GPU).

    Raises ``ValueError`` where the kernel cannot run the model (see
    :func:`pallas_supported`) or an argument is malformed.
    """
    values = dict(values or {})
    stepper = _check(model, solver, tuple(values))
    y0 = jnp.asarray(y0, jnp.result_type(float))
    n_states = len(model.state_names)
    if y0.ndim != 2 or y0.shape[0] != n_states or y0.shape[1] == 0:
        raise ValueError(f"y0 must be (n_states, B) = ({n_states}, B), not {y0.shape}")
    values = {n: jnp.asarray(v, y0.dtype) for n, v in values.items()}
    for name, v in values.items():
        if v.shape != y0.shape[1:]:
            raise ValueError(f"values[{name!r}] must be ({y0.shape[1]},), one per "
                             f"trajectory, not {v.shape}")
    _check_sizes(block, n_intervals, n_steps, h)
    if interpret is None:
        interpret = jax.default_backend() != "gpu"
    count = jnp.int64 if jax.config.jax_enable_x64 else jnp.int32
    return _solve(model, stepper, y0, values, jnp.asarray(t0, y0.dtype),
                  jnp.asarray(h, y0.dtype), jnp.asarray(n_steps, count), int(n_intervals),
                  int(block), bool(interpret))


def _check_sizes(block, n_intervals, n_steps, h):
    if not isinstance(block, (int, np.integer)) or block < 1 or block & (block - 1):
        raise ValueError(f"block must be a power of two, not {block!r}")
    if not isinstance(n_intervals, (int, np.integer)) or n_intervals < 1:
        raise ValueError(f"n_intervals must be a positive integer, not {n_intervals!r}")
    if not isinstance(n_steps, jax.core.Tracer):
        if int(n_steps) < n_intervals:
            raise ValueError(f"n_intervals={n_intervals} asks for more saved states than "
                             f"the {int(n_steps)} steps give; lower n_intervals")
    if not isinstance(h, jax.core.Tracer) and not float(h) > 0:
        raise ValueError(f"h, the step, must be positive, got {float(h)}")
