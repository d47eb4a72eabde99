"""Field models advanced as fields: frames of every field, with the grid.

Exponential steppers carry the state in Fourier space (``rfftn`` of each field) through
``lax.scan``; explicit Runge-Kutta steppers carry it on the grid; adaptive ones are
diffrax's, on the dict of fields. Each saved frame is on the grid, so a result holds
arrays of shape ``(frames, *grid.shape)`` per field.
"""

import dataclasses
import math
import warnings

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ..models import AbstractFieldModel, Grid, initial_fields_of
from ._events import overflow_message
from ._field_checks import (
    FIELD_SOLVERS,
    _concrete,
    check_memory_of,
    check_solver,
    check_stable,
    outcome,
    stable_step,
    why_not_finite,
)
from ._field_events import (
    FieldEvents,
    FieldWatch,
    WatchedFields,
    batch_all,
    resolve_field_events,
)
from ._fourier_stack import FourierStack
from ._lean_jit import lean_jit
from ._result import Result, message
from ._steppers import ETD_SOLVERS
from ._steppers.field_steppers import FIELD_EXPLICIT
from ._steppers.imex import FIELD_IMPLICIT

FIXED_STEPS = {**ETD_SOLVERS, **FIELD_EXPLICIT, **FIELD_IMPLICIT}
DEFAULT_FRAMES = 101


class FieldTrajectory(eqx.Module):
    """A field model's run: ``ts`` of shape ``(frames,)``, ``fields[name]`` of shape
    ``(frames, *grid.shape)``, and the ``grid`` they lie on. ``model`` and ``settings``
    (``t0``, ``t1``, ``dt``, ``n_save``, ...) are what made it (``None`` when traced).
    ``events``: the crossings of the events watched (:class:`FieldEvents`; ``None`` when
    none were); frames after a terminal event's crossing are NaN."""

    ts: jax.Array
    fields: dict
    grid: Grid
    solver: str = eqx.field(static=True)
    result: Result = eqx.field(static=True, default=Result.SUCCESS)
    model: object = None
    settings: tuple | None = eqx.field(static=True, default=None)
    events: FieldEvents | None = None

    def __getitem__(self, name: str):
        try:
            return self.fields[name]
        except KeyError:
            raise KeyError(f"no field {name!r}; the fields are "
                           f"{', '.join(self.fields)}") from None

    @property
    def field_names(self) -> tuple[str, ...]:
        return tuple(self.fields)

    #: the last frames when the run that made this trajectory computed them (not a field:
    #: a trajectory transformed or replaced takes them from its frames again)
    _final = None

    @property
    def final(self) -> dict:
        """The last frame of every field."""
        if self._final is not None:
            return self._final
        if all(isinstance(u, jax.Array) for u in self.fields.values()):
            return _last_frames(self.fields)  # one dispatch, not two per field
        return {name: u[-1] for name, u in self.fields.items()}  # e.g. read from a file

    @property
    def ok(self) -> bool:
        return self.result == Result.SUCCESS

    @property
    def message(self) -> str:
        return message(self.result)

    @property
    def stopped(self) -> str | None:
        """The name of the terminal event that ended the run (``None``: none did)."""
        if self.events is None or np.ndim(self.events.stopped_by) != 0 \
                or not _concrete(self.events):
            return None
        return self.events.stopped

    def __repr__(self) -> str:
        model = type(self.model).__name__ if self.model is not None else "?"
        points = "x".join(map(str, self.grid.shape))
        stop = (f"; stopped by {self.stopped!r} at t={self.events.t_stop:.10g}"
                if self.stopped else "")
        return (f"FieldTrajectory({model}, fields {', '.join(self.fields)} on a {points} "
                f"grid; n_save={self.ts.shape[-1]}; {self.solver}; {self.message}{stop})")


@jax.jit
def _last_frames(fields: dict) -> dict:
    return {name: u[-1] for name, u in fields.items()}


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


def _stepper(solver, model: AbstractFieldModel, dt):
    """The stepper ``solver`` names, made for the model and ``dt``."""
    if not isinstance(solver, str):
        return solver
    if solver in ETD_SOLVERS:
        return ETD_SOLVERS[solver](model.linear_part(), dt)
    if solver in FIELD_IMPLICIT:
        return FIELD_IMPLICIT[solver](model, dt)
    return FIELD_EXPLICIT[solver](dt)


#: reverse mode keeps at most ``BLOCK`` states per level of nested checkpoints, so the
#: memory of ``jax.grad`` through a run does not grow with its steps (``CHECKPOINT_LEVELS``
#: levels reverse up to ``BLOCK ** CHECKPOINT_LEVELS`` steps per frame at that cost)
BLOCK = 64
CHECKPOINT_LEVELS = 3


def _steps(step, carry, n: int, levels: int = CHECKPOINT_LEVELS):
    """``n`` steps from ``carry``: plain for up to ``BLOCK`` steps, else checkpointed runs
    of ``BLOCK ** j`` steps (each taken again in the reverse pass; at most ``BLOCK`` of
    them while the levels last) and the remainder. The innermost loops are ``BLOCK``
    steps long, so a forward run pays little for the checkpoints."""
    if n <= BLOCK or levels == 1:
        return jax.lax.scan(step, carry, None, length=n)[0]
    size = BLOCK
    while size * BLOCK < n and size < BLOCK ** (levels - 1):
        size *= BLOCK
    runs, rest = divmod(n, size)
    run = jax.checkpoint(lambda c, _: (_steps(step, c, size, levels - 1), None),
                         prevent_cse=False)
    carry = jax.lax.scan(run, carry, None, length=runs)[0]
    return _steps(step, carry, rest, levels - 1) if rest else carry


def _advance(stepper, rhs, u, to_grid, t0, intervals: int, per_interval: int):
    """``intervals`` frames of ``per_interval`` steps from ``(t0, u)``: the times, the
    frames on the grid and the carry ``(t, u)`` after the last step."""
    def step(carry, _):
        t, u = carry
        return (t + stepper.dt, stepper.step(rhs, t, u)), None

    def interval(carry, _):
        carry = _steps(step, carry, per_interval)
        return carry, (carry[0], to_grid(carry[1]))

    carry, (ts, frames) = jax.lax.scan(jax.checkpoint(interval, prevent_cse=False),
                                       (t0, u), None, length=intervals)
    return ts, frames, carry


def _native(model, stepper):
    """``(stepper, to_native, rhs, to_grid)``: how ``stepper`` carries the fields and
    what it steps. Exponential steppers carry every field's Fourier transform stacked on
    one leading axis (:mod:`._fourier_stack`), their weights stacked alike; the others
    carry the fields on the grid."""
    if not stepper.fourier:
        return stepper, (lambda f: f), model.vector_field, (lambda v: v)
    stack = FourierStack.of(model)
    return (stack.weights(stepper), stack.to_fourier, stack.nonlinear(model),
            stack.from_fourier)


@lean_jit
def _run(model, solver, fields, t0, dt, intervals: int, per_interval: int):
    """The whole run in one program: the stepper's weights, the transforms, the steps;
    ``(ts, frames, whether every frame is finite, the last frame)``."""
    stepper, to_native, rhs, to_grid = _native(model, _stepper(solver, model, dt))
    _, later, _ = _advance(stepper, rhs, to_native(fields), to_grid, t0, intervals,
                           per_interval)
    ts = t0 + dt * per_interval * jnp.arange(intervals + 1)  # not summed step by step
    out = {name: jnp.concatenate([u[None], later[name]]) for name, u in fields.items()}
    return ts, out, _all_finite(out), {name: u[-1] for name, u in out.items()}


def _all_finite(fields: dict) -> jax.Array:
    """Whether every value of every field is finite: one flag for the host to read, not
    every frame."""
    return jnp.all(jnp.stack([jnp.isfinite(u).all() for u in fields.values()]))


def _step_map(solver: str):
    """``step(model, t, u, theta)``: the named stepper's step of size ``theta`` (its
    weights made for ``theta``), on the carry it keeps: what events are located on."""
    def step(model, t, u, theta):
        stepper, _, rhs, _ = _native(model, _stepper(solver, model, theta))
        return stepper.step(rhs, t, u)

    return step


def _advance_watched(stepper, rhs, u, to_grid, t0, intervals: int, per_interval: int,
                     watch: FieldWatch):
    """``_advance`` watching events after every step: ``(frames, FieldRecord)``. After a
    terminal event's step the remaining steps do nothing."""
    def step(carry, _):
        t, u, rec = carry
        stopped = rec.stopped  # a batch steps its stopped members on, unwatched
        t1 = t + stepper.dt
        u1 = jax.lax.cond(batch_all(stopped), lambda: u, lambda: stepper.step(rhs, t, u))
        return (t1, u1, watch.update(rec, t, u, t1, u1, ~stopped)), None

    def interval(carry, _):
        carry = _steps(step, carry, per_interval)
        return carry, to_grid(carry[1])

    carry, frames = jax.lax.scan(jax.checkpoint(interval, prevent_cse=False),
                                 (t0, u, watch.start(t0, u)), None, length=intervals)
    return frames, carry[2]


def _after_stop(ts, out: dict, t_stop) -> dict:
    """``out`` with the frames after a terminal event's crossing (``ts > t_stop``) NaN."""
    def cut(u):
        return jnp.where((ts > t_stop).reshape(-1, *([1] * (u.ndim - 1))), jnp.nan, u)

    return {name: cut(u) for name, u in out.items()}


@lean_jit
def _run_watched(model, solver: str, fields, t0, dt, intervals: int, per_interval: int,
                 events: tuple):
    """``_run`` watching ``events``: ``(ts, frames, FieldEvents)``."""
    stepper, to_native, rhs, to_grid = _native(model, _stepper(solver, model, dt))
    watch = FieldWatch(events, to_grid)
    later, rec = _advance_watched(stepper, rhs, to_native(fields), to_grid, t0, intervals,
                                  per_interval, watch)
    ts = t0 + dt * per_interval * jnp.arange(intervals + 1)
    out = {name: jnp.concatenate([u[None], later[name]]) for name, u in fields.items()}
    found, t_stop = watch.finish(rec, _step_map(solver), model)
    return ts, _after_stop(ts, out, t_stop), found


@lean_jit
def _run_adaptive(model, solver: str, fields, ts, dt0, rtol, atol, max_steps: int,
                  events: tuple | None = None):
    """A diffrax solve of the fields from ``ts[0]``, saved at the times ``ts``, watching
    ``events`` if given: ``(frames, result code, FieldEvents or None)``."""
    import diffrax

    from ._steppers.adaptive import as_stepped
    from ._steppers.catalog import EXPLICIT

    term = diffrax.ODETerm(lambda t, u, args: model.vector_field(t, u))
    method = getattr(diffrax, EXPLICIT[solver])()
    controller = diffrax.PIDController(rtol=rtol, atol=atol)
    if events is not None:
        watch = FieldWatch(events, lambda u: u)
        controller = WatchedFields(controller, watch, as_stepped(method, controller))
    sol = diffrax.diffeqsolve(
        term, method, ts[0], ts[-1], dt0, fields,
        saveat=diffrax.SaveAt(ts=ts, controller_state=events is not None),
        max_steps=max_steps, throw=False, stepsize_controller=controller)
    result = diffrax.RESULTS.where(sol.result == diffrax.RESULTS.event_occurred,
                                   diffrax.RESULTS.successful, sol.result)
    failed = result != diffrax.RESULTS.successful
    out_of_steps = result == diffrax.RESULTS.max_steps_reached
    code = jnp.where(out_of_steps, Result.MAX_STEPS_REACHED,
                     jnp.where(failed, Result.SOLVER_FAILED, Result.SUCCESS))
    if events is None:
        return sol.ys, code, None
    rec = sol.controller_state[1]
    found, t_stop = watch.finish(rec, controller.step, model)
    return _after_stop(ts, sol.ys, t_stop), code, found


def _as_float(v):
    """A number (a time, a tolerance) as a compiled run takes it, traced, not static:
    converted by NumPy, which costs less than JAX's conversion on every call."""
    return v if isinstance(v, jax.Array) else np.asarray(v, dtype=float)


def _start(model: AbstractFieldModel, fields, frames: int) -> dict:
    if not isinstance(model, AbstractFieldModel):
        raise TypeError(f"simulate_fields takes a field model, not {type(model).__name__}")
    check_memory_of(model, int(frames))
    fields = initial_fields_of(model) if fields is None else fields
    if not isinstance(fields, dict):
        raise TypeError(f"the initial fields are a dict {{name: array}}, not "
                        f"{type(fields).__name__}")
    type(model).check_fields(model, fields)  # not a bound method: an equinox Module each
    return {name: u if _float_array(u) else jnp.asarray(u, dtype=float)
            for name, u in fields.items()}


def _float_array(u) -> bool:
    """Whether ``u`` is already what a run takes (no conversion to pay for)."""
    return isinstance(u, jax.Array) and u.dtype == jax.dtypes.canonicalize_dtype(float)


def _name(solver) -> str:
    return solver if isinstance(solver, str) else type(solver).__name__.lower()


def simulate_fields(model: AbstractFieldModel, t1: float, *, dt: float, frames: int = 11,
                    t0: float = 0.0, solver="etdrk4", fields: dict | None = None,
                    throw: bool = True, events=None):
    """Advance ``model`` from ``t0`` (its ``initial_fields()``, or ``fields``) to ``t1`` in
    steps of ``dt`` with ``solver`` (``"etdrk4"``, ``"etdrk2"``, ``"rk4"``, ``"heun"``,
    ``"euler"`` or a stepper made for the model's linear part), keeping ``frames`` equally
    spaced frames (``t0`` and ``t1`` among them). Returns a :class:`FieldTrajectory`.
    One compiled program does it all; changing ``t0``, ``dt`` or the parameters does not
    compile it again. A frame with a NaN or infinity raises :class:`SimulationError`
    naming the field, the time and the point where it first appeared (``throw=False``:
    recorded in ``result`` instead). ``events``: an :class:`Event` or a sequence of them,
    conditions ``(t, fields) -> scalar`` located inside the steps (:mod:`._field_events`);
    they need a solver given by name."""
    intervals, per_interval = _plan(float(t0), float(t1), float(dt), int(frames))
    fields = _start(model, fields, frames)
    if isinstance(solver, str):
        if solver not in FIXED_STEPS:
            raise ValueError(f"simulate_fields takes the fixed-step solvers "
                             f"{', '.join(FIXED_STEPS)}, not {solver!r}")
        check_solver(solver, model)
        check_stable(solver, model, float(dt))
    watched = resolve_field_events(events, fields, float(t0))
    found, finite, last = None, None, None
    if watched is None:
        ts, out, finite, last = _run(model, solver, fields, _as_float(t0), _as_float(dt),
                                     intervals, per_interval)
        _check_made_for(solver, dt)  # while the run computes: a wrong one is thrown away
    elif not isinstance(solver, str):
        raise ValueError("events are located on a solver given by name (such as 'etdrk4'), "
                         "not on a stepper object")
    else:
        ts, out, found = _run_watched(model, solver, fields, _as_float(t0), _as_float(dt),
                                      intervals, per_interval, watched)
        found = _with_definitions(found, watched)
    settings = (("t0", float(t0)), ("t1", float(t1)), ("dt", float(dt)), ("n_save", frames))
    run = FieldTrajectory(ts, out, model.grid, _name(solver), model=model, settings=settings,
                          events=found)  # made while the device computes
    object.__setattr__(run, "_final", last)  # see FieldTrajectory.final
    result = _outcome(ts, out, model.grid, throw, found, solver, finite=finite)
    return run if result == Result.SUCCESS else dataclasses.replace(run, result=result)


def _check_made_for(solver, dt: float) -> None:
    """Refuse a stepper object made for another step than ``dt``."""
    if not isinstance(solver, str) and _concrete(solver.dt) \
            and abs(float(solver.dt) - dt) > 1e-12 * abs(dt):
        raise ValueError(f"the stepper was made for dt = {float(solver.dt):g}, not {dt:g}")


def _with_definitions(found: FieldEvents, watched: tuple) -> FieldEvents:
    """``found`` knowing its events' definitions when it is concrete, warning when an
    event crossed more often than it keeps."""
    if not _concrete(found):
        return found
    text = overflow_message(found)
    if text is not None:
        warnings.warn(text, stacklevel=4)
    return eqx.tree_at(lambda e: e.definitions, found, watched, is_leaf=lambda x: x is None)


def _outcome(ts, out: dict, grid, throw: bool, found, solver, code=Result.SUCCESS,
             finite=None) -> Result:
    """``outcome`` of the frames up to a terminal event's crossing (the later ones are
    NaN on purpose) of a run by ``solver``; ``finite``: whether every frame is, when the
    run said."""
    if found is not None and _concrete((ts, out, found)) and int(found.stopped_by) >= 0:
        alive = np.asarray(ts) <= float(found.t_stop)
        ts, out = np.asarray(ts)[alive], {n: np.asarray(u)[alive] for n, u in out.items()}
    return outcome(ts, out, grid, throw, code, finite, why_not_finite(solver))


def _frames_and_steps(span: float, dt: float, n_save: int | None) -> tuple[int, int]:
    """``(n_save, steps)``: at least ``span / dt`` steps, a whole number per frame."""
    steps = max(1, math.ceil(span / dt * (1 - 1e-12)))
    n_save = min(DEFAULT_FRAMES, steps + 1) if n_save is None else int(n_save)
    if n_save < 2:
        raise ValueError(f"n_save must be at least 2, got {n_save}")
    per_frame = math.ceil(steps / (n_save - 1))
    return n_save, per_frame * (n_save - 1)


def _default_dt(solver: str, model, span: float) -> float:
    """A thousandth of the span, or 0.9 of an explicit solver's stable step if smaller
    (none: refused, saying why)."""
    limit = stable_step(solver, model)
    if limit == 0.0:
        check_stable(solver, model, span)
    return min(span / 1000, 0.9 * limit)


@dataclasses.dataclass(frozen=True)
class FieldPlan:
    """What a field run will do: ``solver`` from ``t0`` to ``t1`` keeping ``n_save``
    frames; fixed steps: ``dt`` and ``per_frame`` steps per frame; adaptive ones
    (``per_frame`` 0): ``dt`` the initial step (``None``: chosen), tolerances and
    ``max_steps``."""

    solver: str
    t0: float
    t1: float
    n_save: int
    dt: float | None
    per_frame: int = 0
    rtol: float = 1e-6
    atol: float = 1e-9
    max_steps: int = 100_000

    @property
    def adaptive(self) -> bool:
        return self.per_frame == 0

    @property
    def settings(self) -> tuple:
        """``(name, value)`` pairs, as a :class:`FieldTrajectory` records them."""
        if self.adaptive:
            return (("t0", self.t0), ("t1", self.t1), ("n_save", self.n_save),
                    ("rtol", self.rtol), ("atol", self.atol))
        return (("t0", self.t0), ("t1", self.t1), ("dt", self.dt), ("n_save", self.n_save))

    @property
    def ts(self) -> jax.Array:
        """The frames' times, as the run computes them."""
        if self.adaptive:
            return jnp.linspace(_as_float(self.t0), _as_float(self.t1), self.n_save)
        return self.t0 + self.dt * self.per_frame * jnp.arange(self.n_save)


def plan_field_run(model: AbstractFieldModel, t1, *, t0=None, dt=None, solver=None,
                   n_save=None, rtol=None, atol=None, max_steps=None) -> FieldPlan:
    """``simulate``'s arguments for a field model, checked and completed with its
    defaults: a fixed step ``dt`` is shortened so that every frame falls on a step."""
    if t1 is None:
        raise TypeError("t1, the end time, is missing")
    check_memory_of(model, 2)  # a grid too big for two frames: before anything is made
    solver = model.default_solver if solver is None else solver
    if not isinstance(solver, str):
        raise TypeError(f"a field model's solver is one of {', '.join(FIELD_SOLVERS)}, "
                        f"not {type(solver).__name__}")
    check_solver(solver, model)
    t0, t1 = float(0.0 if t0 is None else t0), float(t1)
    if not t1 > t0:
        raise ValueError(f"t1 ({t1}) must be greater than t0 ({t0})")
    if solver not in FIXED_STEPS:
        n_save = DEFAULT_FRAMES if n_save is None else int(n_save)
        return FieldPlan(solver, t0, t1, n_save, None if dt is None else float(dt), 0,
                         1e-6 if rtol is None else float(rtol),
                         1e-9 if atol is None else float(atol),
                         100_000 if max_steps is None else int(max_steps))
    dt = _default_dt(solver, model, t1 - t0) if dt is None else float(dt)
    if not dt > 0:
        raise ValueError(f"dt must be positive, got {dt}")
    n_save, steps = _frames_and_steps(t1 - t0, dt, n_save)
    check_stable(solver, model, (t1 - t0) / steps)
    return FieldPlan(solver, t0, t1, n_save, (t1 - t0) / steps, steps // (n_save - 1))


def simulate_field_model(model: AbstractFieldModel, t1, *, y0=None, throw: bool = True,
                         events=None, **solve) -> FieldTrajectory:
    """``difflab.simulate`` for a field model (see its docstring): ``y0`` is a dict of
    fields; ``events`` conditions of ``(t, fields)`` (:mod:`._field_events`); ``solve``
    as :func:`plan_field_run` takes it."""
    plan = plan_field_run(model, t1, **solve)
    if not plan.adaptive:
        return simulate_fields(model, plan.t1, dt=plan.dt, frames=plan.n_save, t0=plan.t0,
                               solver=plan.solver, fields=y0, throw=throw, events=events)
    fields = _start(model, y0, plan.n_save)
    watched = resolve_field_events(events, fields, plan.t0)
    out, code, found = _run_adaptive(model, plan.solver, fields, plan.ts,
                                     _maybe_float(plan.dt), _as_float(plan.rtol),
                                     _as_float(plan.atol), plan.max_steps, watched)
    found = None if found is None else _with_definitions(found, watched)
    result = _outcome(plan.ts, out, model.grid, throw, found, plan.solver, code)
    return FieldTrajectory(plan.ts, out, model.grid, plan.solver, result, model,
                           plan.settings, found)


def _maybe_float(v):
    return None if v is None else _as_float(v)
