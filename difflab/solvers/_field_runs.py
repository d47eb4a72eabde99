"""Field models advanced by exponential steppers: frames of every field, with the grid.

The state travels in Fourier space (``rfftn`` of each field) through ``lax.scan``; each
saved frame goes back to the grid, so a result holds arrays of shape
``(frames, *grid.shape)`` per field.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ..models import AbstractFieldModel, Grid, from_fourier, to_fourier
from ._resources import check_memory
from ._result import Result
from ._simulate import SimulationError
from ._steppers import ETD_SOLVERS

#: copies of the state a run holds besides its frames: the start, the stages and their
#: nonlinear parts, the stepper's weights (in Fourier space, about half a field each)
WORKING_COPIES = 24


class FieldTrajectory(eqx.Module):
    """A field model's run: ``ts`` of shape ``(frames,)``, ``fields[name]`` of shape
    ``(frames, *grid.shape)``, and the ``grid`` they lie on."""

    ts: jax.Array
    fields: dict
    grid: Grid
    solver: str = eqx.field(static=True)
    result: Result = eqx.field(static=True, default=Result.SUCCESS)

    def __getitem__(self, name: str):
        return self.fields[name]

    @property
    def final(self) -> dict:
        """The last frame of every field."""
        return {name: u[-1] for name, u in self.fields.items()}


def _plan(t0: float, t1: float, dt: float, frames: int) -> tuple[int, int]:
    """``(frames - 1, steps per frame)``, refusing a span that ``dt`` and ``frames`` do not
    divide into whole steps."""
    steps = (t1 - t0) / dt
    if not t1 > t0 or dt <= 0 or frames < 2:
        raise ValueError(f"a field run needs t1 > t0, dt > 0 and frames >= 2, not t0={t0}, "
                         f"t1={t1}, dt={dt}, frames={frames}")
    whole = int(round(steps))
    if abs(steps - whole) > 1e-9 * max(1.0, steps) or whole % (frames - 1):
        raise ValueError(f"(t1 - t0) / dt = {steps:g} steps do not split into {frames - 1} "
                         f"equal intervals of whole steps: choose dt or frames to fit")
    return frames - 1, whole // (frames - 1)


def _check_memory(model: AbstractFieldModel, frames: int) -> None:
    """Refuse, before anything is made, a run whose frames and working copies would not fit
    (``frames`` kept on the device and copied to the host)."""
    cells = int(np.prod(model.grid.shape, dtype=np.float64)) * len(model.field_names)
    need = 8.0 * cells * (2 * frames + WORKING_COPIES)
    points = "x".join(str(n) for n in model.grid.shape)
    check_memory(need, f"a field run on a {points} grid with {frames} frames of "
                 f"{len(model.field_names)} field(s)", "use fewer points or frames",
                 device_need=8.0 * cells * (frames + WORKING_COPIES))


def _stepper(solver, model: AbstractFieldModel, dt):
    """The stepper ``solver`` names, made for the model's linear part and ``dt`` (``None``:
    only check the name)."""
    if not isinstance(solver, str):
        return solver
    if solver not in ETD_SOLVERS:
        raise ValueError(f"field models are advanced by {', '.join(ETD_SOLVERS)}, not "
                         f"{solver!r}")
    return None if dt is None else ETD_SOLVERS[solver](model.linear_part(), dt)


def _advance(stepper, model, u_hat, t0, intervals: int, per_interval: int):
    def step(carry, _):
        t, u = carry
        return (t + stepper.dt, stepper.step(model.nonlinear_fourier, t, u)), None

    def interval(carry, _):
        carry, _ = jax.lax.scan(step, carry, None, length=per_interval)
        frame = {name: from_fourier(u, model.grid) for name, u in carry[1].items()}
        return carry, (carry[0], frame)

    _, (ts, frames) = jax.lax.scan(interval, (t0, u_hat), None, length=intervals)
    return ts, frames


@eqx.filter_jit
def _run(model, solver, fields, t0, dt, intervals: int, per_interval: int):
    """The whole run in one program: the stepper's weights, the transforms, the steps."""
    stepper = _stepper(solver, model, dt)
    u_hat = {name: to_fourier(u, model.grid) for name, u in fields.items()}
    ts, later = _advance(stepper, model, u_hat, t0, intervals, per_interval)
    ts = jnp.concatenate([t0[None], ts])
    return ts, {name: jnp.concatenate([u[None], later[name]]) for name, u in fields.items()}


def _first_nonfinite(ts, fields: dict, grid: Grid) -> tuple[int, str] | None:
    """``(frame, where)`` of a field's first non-finite value, or ``None``."""
    found = None
    for name, u in fields.items():
        bad = ~np.isfinite(np.asarray(u))
        if bad.any():
            frame = int(np.argmax(bad.reshape(bad.shape[0], -1).any(axis=1)))
            if found is None or frame < found[0]:
                index = np.unravel_index(np.argmax(bad[frame]), bad.shape[1:])
                found = (frame, _describe(name, float(ts[frame]), index[-grid.ndim:], grid))
    return found


def _describe(name: str, t: float, index, grid: Grid) -> str:
    point = ", ".join(f"{axis} = {grid.axis_coordinates(i)[k]:.4g}"
                      for i, (axis, k) in enumerate(zip(grid.axis_names, index, strict=True)))
    return f"field {name!r} is not finite at t = {t:.6g}, first at {point}"


def _outcome(ts, out: dict, grid: Grid, throw: bool) -> Result:
    """``DIVERGED`` where a frame holds a NaN or infinity (raised if ``throw``), checked on
    the host once the run is done; under a JAX transformation the values are not known."""
    if any(isinstance(x, jax.core.Tracer) for x in jax.tree.leaves((ts, out))):
        return Result.SUCCESS
    found = _first_nonfinite(ts, out, grid)
    if found is None:
        return Result.SUCCESS
    if throw:
        raise SimulationError(f"{found[1]}: the run diverged; a smaller dt or finer grid "
                              f"may keep it finite", Result.DIVERGED)
    return Result.DIVERGED


def simulate_fields(model: AbstractFieldModel, t1: float, *, dt: float, frames: int = 11,
                    t0: float = 0.0, solver="etdrk4", fields: dict | None = None,
                    throw: bool = True):
    """Advance ``model`` from ``t0`` (its ``initial_fields()``, or ``fields``) to ``t1`` in
    steps of ``dt`` with ``solver`` (``"etdrk4"``, ``"etdrk2"`` or a stepper made for the
    model's linear part), keeping ``frames`` equally spaced frames (``t0`` and ``t1``
    among them). Returns a :class:`FieldTrajectory`. One compiled program does it all;
    changing ``t0``, ``dt`` or the parameters does not compile it again. A frame with a
    NaN or infinity raises :class:`SimulationError` naming the field, the time and the
    point where it first appeared (``throw=False``: recorded in ``result`` instead)."""
    if not isinstance(model, AbstractFieldModel):
        raise TypeError(f"simulate_fields takes a field model, not {type(model).__name__}")
    intervals, per_interval = _plan(float(t0), float(t1), float(dt), int(frames))
    _check_memory(model, int(frames))
    fields = model.initial_fields() if fields is None else fields
    model.check_fields(fields)
    if isinstance(solver, str):
        _stepper(solver, model, None)  # an unknown name fails here, before tracing
    elif abs(float(solver.dt) - dt) > 1e-12 * abs(dt):
        raise ValueError(f"the stepper was made for dt = {float(solver.dt):g}, not {dt:g}")
    fields = {name: jnp.asarray(u, dtype=float) for name, u in fields.items()}
    as_float = lambda v: jnp.asarray(v, dtype=float)  # noqa: E731
    ts, out = _run(model, solver, fields, as_float(t0), as_float(dt), intervals, per_interval)
    result = _outcome(ts, out, model.grid, throw)
    name = solver if isinstance(solver, str) else type(solver).__name__.lower()
    return FieldTrajectory(ts, out, model.grid, name, result)

