"""``simulate`` and its ``Trajectory``: one run of a model, jitted once, reused for any values."""

import math
import time
import warnings

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ..models import AbstractFieldModel, Model
from ._auto_step import choose
from ._datasets import to_dataset
from ._events import Events, overflow_message, resolve_events
from ._failures import error_if_failed, explain
from ._field_runs import FieldTrajectory, simulate_field_model
from ._model_checks import check_returns, initial_state
from ._resources import check_fixed_steps, check_saved_states
from ._result import Result, SimulationError, message
from ._settings import SolveSettings, key_to_record, solve_arguments
from ._steppers.adjoint import CheckpointedAdjoint, resolve_adjoint
from ._steppers.catalog import IMPLICIT, resolve_solver, solver_name
from ._steppers.integrate import Plan, integrate, save_step, step_count

DEFAULT_N_SAVE = 1001


class Trajectory(eqx.Module):
    """Saved times ``ts`` (n_save,), states ``ys`` (n_save, n_states) and how the run ended.

    ``traj["x"]`` is the column of state ``x``. ``result`` is a :class:`Result` code;
    ``steps`` the number of steps taken, ``accepted_steps`` plus ``rejected_steps`` (an
    adaptive solver's; a fixed-step run rejects none); ``stats`` holds those two and
    ``t_reached`` (where the run stopped, or first saved a non-finite state),
    ``dt_reached`` (the step size there) and ``dt_stable`` (the largest stable fixed
    step, ``inf`` when not limited); ``wall_time`` the seconds the run took.
    ``model`` and ``settings`` (a :class:`SolveSettings`) are what made the run, so it
    can be saved (``difflab.io.save``) and rerun (:meth:`rerun`) with no other
    arguments. ``wall_time``, ``model`` and ``settings`` are ``None`` when the call was
    traced (e.g. under ``jax.grad`` or ``jax.vmap``). A run read from a session file has
    its ``name`` there, arrays read when used, and for a user model whose code DiffLab
    does not run, the stored model record as ``model`` (:meth:`rerun` takes the model).
    ``events``: the crossings of the events watched (:class:`Events`; ``None`` when none
    were); a run stopped by a terminal event succeeded, and its states saved after the
    event are NaN.
    """

    ts: jax.Array
    ys: jax.Array
    result: jax.Array
    steps: jax.Array
    state_names: tuple[str, ...] = eqx.field(static=True)
    wall_time: float | None = eqx.field(static=True, default=None)
    model: object = None
    settings: SolveSettings | None = eqx.field(static=True, default=None)
    name: str | None = eqx.field(static=True, default=None)
    stats: dict | None = None
    events: Events | None = None

    @property
    def accepted_steps(self):
        """The steps accepted (all of a fixed-step run's); ``None`` if not known."""
        return None if self.stats is None else self.stats.get("accepted_steps")

    @property
    def rejected_steps(self):
        """The steps an adaptive solver rejected and retried smaller; ``None`` if not known."""
        return None if self.stats is None else self.stats.get("rejected_steps")

    def __repr__(self) -> str:
        model = type(self.model).__name__ if self.model is not None else "?"
        ended = "traced" if isinstance(self.result, jax.core.Tracer) else self.message
        names = ", ".join(self.state_names[:6]) + (
            f", ... ({len(self.state_names)} in all)" if len(self.state_names) > 6 else "")
        return f"Trajectory({model}, states {names}; n_save={self.ts.shape[-1]}; {ended})"

    def __getitem__(self, name: str) -> jax.Array:
        try:
            return self.ys[..., self.state_names.index(name)]
        except ValueError:
            raise KeyError(
                f"no state {name!r}; the states are {', '.join(self.state_names)}"
            ) from None

    @property
    def ok(self) -> bool:
        """True when the run ended successfully."""
        return bool(np.all(np.asarray(self.result) == Result.SUCCESS))

    @property
    def message(self) -> str:
        """How the run ended, in words: for a failed run, what happened and what would help."""
        code = np.max(np.asarray(self.result))
        if code == Result.SUCCESS and self._stopped_by() is not None:
            return (f"success (stopped by event {self._stopped_by()!r} at t = "
                    f"{self.events.t_stop:.10g})")
        if code == Result.SUCCESS or self.settings is None or np.ndim(self.result) != 0 \
                or "t_reached" not in (self.stats or {}):
            return message(code)
        s = self.settings
        return explain(code, self.stats, solver=s.solver, stiff=s.solver in IMPLICIT,
                       t0=s.t0, t1=s.t1)

    def _stopped_by(self) -> str | None:
        if self.events is None or np.ndim(self.events.stopped_by) != 0 \
                or isinstance(self.events.stopped_by, jax.core.Tracer):
            return None
        return self.events.stopped

    def rerun(self, model=None, **changes) -> "Trajectory":
        """Simulate again with the same model, settings and events (``changes`` override
        them; a run read from a file has no events to repeat: pass ``events=``).

        ``model``: an instance of a user model's class, for a run read from a file (its
        arrays are replaced by the stored ones).
        """
        if self.model is None or self.settings is None:
            raise ValueError("this trajectory was computed under a JAX transformation and "
                             "does not know its model and settings")
        watched = None if self.events is None else self.events.definitions
        kwargs = {**self.settings.kwargs(), "throw": False, "events": watched, **changes}
        return simulate(model_of(self.model, model), kwargs.pop("t1"), **kwargs)

    @property
    def final(self) -> jax.Array:
        """The last saved state."""
        return self.ys[..., -1, :]

    def to_xarray(self):
        """This result as an ``xarray.Dataset``: the variables, coordinates and attributes
        of its group in a session file (``docs/hdf5-schema.md``)."""
        return to_dataset(self)


def model_of(made_with, given=None):
    """The model a result was made with: a stored model record is built (``given``: an
    instance of a user model's class); a model is used as it is, unless one is given."""
    if hasattr(made_with, "build"):  # a model record of a session file
        return made_with.build(given)
    return made_with if given is None else given


def _is_concrete(x) -> bool:
    return not isinstance(x, jax.core.Tracer)


def _float(x, name: str):
    """A scalar argument: a NumPy scalar when concrete (cheap), the tracer as it is."""
    if not _is_concrete(x):
        value = x
    else:
        try:
            value = np.asarray(x, dtype=jnp.result_type(float))
        except (TypeError, ValueError):
            raise TypeError(f"{name} must be a number, not {x!r}") from None
    if value.shape != ():
        raise ValueError(f"{name} must be a scalar, not an array of shape {value.shape}")
    return value


def _tolerance(x, name: str, model: Model):
    """A tolerance: a scalar, or one value per state (a 1-D array as long as the state)."""
    if not _is_concrete(x):
        value = x
    elif np.ndim(x) == 0:
        value = _float(x, name)
    else:
        try:
            value = np.asarray(x, dtype=jnp.result_type(float))
        except (TypeError, ValueError):
            raise TypeError(f"{name} must be a number or an array of numbers, not {x!r}") \
                from None
    n = len(model.state_names)
    if value.shape not in ((), (n,)):
        raise ValueError(f"{name} must be a number or one per state ({n} for "
                         f"{type(model).__name__}), not an array of shape {value.shape}")
    return value


def _check_positive(value, name: str) -> None:
    if _is_concrete(value) and not np.all(value > 0):
        raise ValueError(f"{name} must be positive, got {_plain(value)}")


def _plain(value):
    """A concrete scalar as a float, an array as a tuple of floats."""
    return float(value) if np.ndim(value) == 0 else tuple(map(float, np.ravel(value)))


def _n_save(n_save, t0, t1, dt, solver) -> int:
    """The number of saved states: at most one per fixed step, 1001 by default."""
    steps = None
    if not solver.adaptive and all(map(_is_concrete, (t0, t1, dt))):
        steps = max(1, math.ceil((t1 - t0) / dt * (1.0 - 1e-12)))
    if n_save is None:
        return DEFAULT_N_SAVE if steps is None else min(DEFAULT_N_SAVE, steps + 1)
    n_save = int(n_save)
    if n_save < 2:
        raise ValueError(f"n_save must be at least 2, got {n_save}")
    if steps is not None and n_save > steps + 1:
        raise ValueError(
            f"n_save={n_save} asks for more states than the {steps} steps of dt give "
            f"({steps + 1}); lower n_save or dt"
        )
    return n_save


def _automatic(model, solver, t0, t1, y0, dt, n_save, rtol, points: bool):
    """``dt`` and ``n_save``, those left ``None`` chosen by the automatic rule
    (``_auto_step``); where anything it needs is traced, ``(t1 - t0) / 1000``."""
    if not ((dt is None and not solver.adaptive) or (n_save is None and points)):
        return dt, n_save
    leaves = jax.tree.leaves(eqx.filter(model, eqx.is_array))
    if not all(map(_is_concrete, (t0, t1, y0, rtol, *leaves))):
        default = None if solver.adaptive else (t1 - t0) / (DEFAULT_N_SAVE - 1)
        return _first(dt, default), n_save
    auto = choose(model, solver, t0, t1, y0, dt=dt, n_save=n_save, rtol=rtol, points=points)
    return (dt if dt is not None else auto.dt), auto.n_save


def _first(*values):
    return next((v for v in values if v is not None), None)


def prepare(model, t1, *, t0, dt, solver, n_save, y0, key, rtol, atol, max_steps,
            adjoint="auto", events=None, points=True):
    """Check the arguments of a run and turn them into a static plan and traced args;
    ``dt`` and ``n_save`` left ``None`` follow the automatic rule (``_auto_step``; with
    ``points=False`` ``n_save`` keeps its plain default, at most 1001)."""
    if not isinstance(model, Model):
        raise TypeError(f"model must be a difflab.Model, not {type(model).__name__}")
    if t1 is None:
        raise TypeError("t1, the end time, is missing (give t1 or settings=)")
    solver = resolve_solver(solver, model)
    t0, t1 = _float(t0, "t0"), _float(t1, "t1")
    if all(map(_is_concrete, (t0, t1))) and not t1 > t0:
        raise ValueError(f"t1 ({float(t1)}) must be greater than t0 ({float(t0)})")
    if dt is not None:
        dt = _float(dt, "dt")
        _check_positive(dt, "dt")
    rtol, atol = _float(rtol, "rtol"), _tolerance(atol, "atol", model)
    _check_positive(rtol, "rtol")
    _check_positive(atol, "atol")
    if solver.stochastic and key is None:
        raise ValueError("a stochastic model needs key=jax.random.key(...)")
    y0 = initial_state(model, y0)
    check_returns(model, t0, y0)
    dt, n_save = _automatic(model, solver, t0, t1, y0, dt, n_save, rtol, points)
    if not solver.adaptive:
        check_fixed_steps(t0, t1, dt, max_steps, n_save)
    n_save = _n_save(n_save, t0, t1, dt, solver)
    dynamic, static = eqx.partition(model, eqx.is_array)
    adjoint = resolve_adjoint(adjoint)
    watched = _watched(events, model, solver, adjoint, t0, y0)
    moving, fixed = eqx.partition(watched, eqx.is_array)
    plan = Plan(solver, static, int(n_save), int(max_steps), adjoint, fixed)
    args = dict(model=dynamic, y0=y0, t0=t0, t1=t1, dt=dt, rtol=rtol, atol=atol, key=key)
    if watched is not None:
        args["events"] = moving
    return plan, args


def _watched(events, model, solver, adjoint, t0, y0):
    """The resolved events of a run (``None``: none), after refusing runs that cannot
    watch them."""
    if events is None:
        return None
    if solver.stochastic:
        raise ValueError("events are located on deterministic runs only; a stochastic "
                         "model's crossings are not supported")
    if isinstance(adjoint, CheckpointedAdjoint):
        raise ValueError("a run with events is differentiated by forward sensitivities: "
                         "use adjoint='forward' or 'auto'")
    t = t0 if _is_concrete(t0) else 0.0
    return resolve_events(events, model.state_names, t, y0)


def save_times(plan: Plan, args):
    """The times of the saved states."""
    if plan.solver.adaptive:
        return jnp.linspace(args["t0"], args["t1"], plan.n_save)
    n_steps = step_count(args["t0"], args["t1"], args["dt"])
    h = (args["t1"] - args["t0"]) / n_steps
    j = jnp.arange(plan.n_save)
    return args["t0"] + save_step(j, n_steps, plan.n_save - 1) * h


def _solved(plan, args):
    ys, result, stats, *events = integrate(plan, args)  # events: with plan.events only
    steps = stats["accepted_steps"] + stats["rejected_steps"]  # here: no program of its own
    return save_times(plan, args), ys, result, stats, steps, *events


#: XLA's options for a program compiled with ``optimize=False``: LLVM's ``-O0``
QUICK_COMPILE = {"xla_backend_optimization_level": 0}
_solve = jax.jit(_solved, static_argnums=0)
_solve_quickly = jax.jit(_solved, static_argnums=0, compiler_options=QUICK_COMPILE)


def simulate(
    model: Model,
    t1=None,
    *,
    t0=None,
    dt=None,
    solver=None,
    n_save: int | None = None,
    y0=None,
    key=None,
    rtol=None,
    atol=None,
    max_steps: int | None = None,
    settings: SolveSettings | None = None,
    throw: bool = True,
    adjoint="auto",
    events=None,
    optimize: bool = True,
) -> Trajectory:
    """Simulate ``model`` from ``t0`` to ``t1`` and return its :class:`Trajectory`.

    Args:
        model: a :class:`difflab.Model` instance, or a field model
            (:class:`difflab.models.AbstractFieldModel`): then ``y0`` is a dict of fields,
            the solver ``"etdrk4"`` by default (``"rk4"`` for a model without a Fourier
            linear part; also ``"etdrk2"``, ``"euler"``, ``"heun"`` and the explicit
            adaptive ones), and the result a ``FieldTrajectory`` whose ``traj["u"]`` has
            shape ``(n_save, *grid.shape)`` (``docs/fields.md``).
        t1, t0: the end and start times (``t0`` default 0).
        dt: the step of a fixed-step solver (the last steps are shortened evenly so
            they end at ``t1``); the initial step of an adaptive one (``None``: chosen
            by Hairer's algorithm). Fixed-step default: ``(t1 - t0) / 1000``.
        solver: a name (fixed steps: ``"euler"``, ``"heun"``, ``"rk4"``, ``"leapfrog"``,
            ``"euler_maruyama"``; adaptive: ``"tsit5"``, ``"dopri5"``, ``"dopri8"``,
            ``"bosh3"``, ``"ralston"``; stiff: ``"kvaerno3"``, ``"kvaerno4"``,
            ``"kvaerno5"``), a diffrax solver (``diffrax.Kvaerno3()``), or a solver
            object such as ``Adaptive(diffrax.Kvaerno5(), controller=...)`` to choose
            the step controller too (``docs/solvers.md``). Default: the model's
            ``default_solver`` (``"imex2"`` for the stiff field ``heat1d``), else ``"rk4"``
            (``"euler_maruyama"`` for SDE models).
        n_save: how many states to keep, evenly spaced from ``t0`` to ``t1``
            (default: every step, at most 1001).
        y0: the initial state (default ``model.initial_state()``).
        key: a ``jax.random`` key, needed by stochastic models.
        rtol, atol: tolerances of adaptive solvers (default 1e-6, 1e-9); ``atol`` may
            be one value per state (an array as long as the state).
        max_steps: the most steps an adaptive solver may take (default 100,000). Fixed
            steps may number a billion, or up to ``max_steps`` if that is more; a run
            that would take more, or keep more states than the memory allowed
            (``DIFFLAB_MEMORY_LIMIT``, else 80% of what is available), is refused with a
            ``ValueError`` before it starts.
        settings: a :class:`SolveSettings` (such as ``traj.settings``) giving every
            argument above that is left ``None``, except ``y0``.
        throw: raise :class:`SimulationError` if the run fails; with ``False`` the
            failure is recorded in ``Trajectory.result``. Under ``jax.jit`` or
            ``jax.vmap`` the error comes from JAX when the program runs on the CPU, with
            the same reason and, for a batch, the first failed member (a program for a
            GPU or TPU cannot raise: there ``result`` carries it); pass ``throw=False`` to
            a batch to keep every member and read ``result`` (one code per member).
        adjoint: how ``jax.grad`` and ``jax.jacfwd`` differentiate the run:
            ``"forward"`` (sensitivities carried in the solve), ``"reverse"`` (a
            checkpointed discrete adjoint, reverse mode only) or ``"auto"`` (forward for
            at most 16 differentiated scalars, else reverse; see ``docs/fitting.md``).
        events: an :class:`Event` or a sequence of them: their crossings are found at
            every step, located inside it on the solver's own step map (as accurate as a
            step) and returned in ``Trajectory.events``; a terminal event ends the run
            there. Derivatives of a run with events (event times included) are forward
            sensitivities. Not for stochastic models (``docs/analysis.md``). On a field
            model a condition is a function of ``(t, fields)``, ``fields`` the dict of
            arrays on the grid, and the crossings are in ``FieldTrajectory.events``
            (``docs/fields.md``).
        optimize: ``False`` compiles the run's program with less optimization: the
            first call compiles about a third faster and the run takes up to twice as
            long; for interactive use, where each run takes milliseconds (the app does
            so). Under ``jax.jit`` and other transformations the enclosing program
            decides, and this is ignored.

    Parameter values, ``y0``, ``t0``, ``t1``, ``dt`` and tolerances are traced: changing
    them reuses the compiled program. A fixed-step run whose ``dt`` is outside the
    solver's stability region for the model (estimated from the Jacobian at the start
    and the end) fails with ``Result.UNSTABLE``; a failure's message says what happened
    (steps accepted and rejected, the time and step size reached) and what would help.
    """
    if isinstance(model, AbstractFieldModel):
        return _simulate_fields(model, t1, settings=settings, key=key, adjoint=adjoint,
                                events=events, t0=t0, dt=dt, solver=solver, n_save=n_save,
                                y0=y0, rtol=rtol, atol=atol, max_steps=max_steps, throw=throw)
    solve = solve_arguments(settings, t1=t1, t0=t0, dt=dt, solver=solver, n_save=n_save,
                            y0=y0, key=key, rtol=rtol, atol=atol, max_steps=max_steps)
    plan, args = prepare(model, adjoint=adjoint, events=events, **solve)
    check_saved_states(plan.n_save, len(model.state_names), args["y0"].dtype.itemsize)
    start = time.perf_counter()
    top_level = not any(isinstance(x, jax.core.Tracer) for x in jax.tree.leaves(args))
    solve_fn = _solve if optimize or not top_level else _solve_quickly
    ts, ys, result, stats, steps, *found = solve_fn(plan, args)
    recorded = ()  # wall time, model and settings: known only outside JAX transformations
    if _is_concrete(ys):
        jax.block_until_ready((ts, ys, result, stats, steps))  # the time of the finished run
        recorded = (time.perf_counter() - start, model,
                    settings_of(plan, args, solver_name(solve["solver"], model),
                                solve_fn is _solve))
    traj = Trajectory(ts, ys, result, steps, tuple(model.state_names), *recorded,
                      stats=stats, events=_events_of(found, plan, args, ys))
    if throw:
        traj = eqx.tree_at(lambda t: t.ys, traj, _raise_if_failed(traj, model))
    return traj


def _simulate_fields(model, t1, *, settings, key, adjoint, events, **solve) -> FieldTrajectory:
    """A field model's run (``_field_runs``), refusing what only ODE runs take."""
    given = {"settings": settings is not None, "key": key is not None,
             "adjoint": adjoint != "auto"}
    unsupported = [name for name, on in given.items() if on]
    if unsupported:
        raise ValueError(f"a field model's run does not take {', '.join(unsupported)}")
    return simulate_field_model(model, t1, events=events, **solve)


def _events_of(found: list, plan: Plan, args: dict, ys) -> Events | None:
    """A run's :class:`Events`, knowing their definitions when the run is concrete (then
    an overflow is warned about)."""
    if not found:
        return None
    if not _is_concrete(ys):
        return found[0]
    events = eqx.tree_at(lambda e: e.definitions, found[0],
                         eqx.combine(args["events"], plan.events), is_leaf=lambda x: x is None)
    text = overflow_message(events)
    if text is not None:
        warnings.warn(text, stacklevel=3)
    return events


def settings_of(plan: Plan, args: dict, solver: str,
                optimize: bool = True) -> SolveSettings | None:
    """The :class:`SolveSettings` of a concrete run (``None`` if any of them is traced)."""
    values = [args[k] for k in ("t0", "t1", "dt", "rtol", "atol", "y0") if args[k] is not None]
    if not all(map(_is_concrete, values)):
        return None
    return SolveSettings(
        solver=solver, t0=float(args["t0"]), t1=float(args["t1"]),
        dt=None if args["dt"] is None else float(args["dt"]), n_save=plan.n_save,
        rtol=float(args["rtol"]), atol=_plain(args["atol"]), max_steps=plan.max_steps,
        y0=tuple(map(float, np.asarray(args["y0"]))), key=key_to_record(args["key"]),
        precision=str(np.asarray(args["y0"]).dtype), optimize=optimize)


def _raise_if_failed(traj: Trajectory, model: Model):
    name = type(model).__name__
    if _is_concrete(traj.result):
        code = int(np.max(np.asarray(traj.result)))
        if code != Result.SUCCESS:
            raise SimulationError(f"{name}: {traj.message}", Result(code))
        return traj.ys
    return error_if_failed(name, traj.ys, traj.result)
