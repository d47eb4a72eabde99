"""Adaptive and stiff solvers from diffrax, stepped under an error-controlled step size.

Every controller is wrapped in :class:`Guarded`, which fixes two things diffrax 0.7 gets
wrong on stiff problems: it chooses the first step by Hairer's algorithm (diffrax's own
falls back to 0.01 whenever the term is wrapped, which ``diffeqsolve`` always does), and
it rejects a step whose candidate state is not finite with the smallest step factor
(diffrax turns it into a NaN step size, after which every step is rejected). It also
records how far the solve got and with what step size, for the failure messages.
The implicit solvers' stages are solved by :class:`~.chord.StageChord`, whose Newton
iteration goes on while it contracts (diffrax's stops after two iterations).
"""

import abc
from typing import ClassVar

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp

from ...models import Model, SDEModel
from .._host_checks import without_host_checks
from .._result import Result, mark_diverged
from .chord import with_stage_chord
from .crossings import Watch
from .integrate import after_stop, run_stats
from .linear import with_plain_lu


class Adaptive(eqx.Module):
    """A diffrax solver under error control: ``Adaptive(diffrax.Tsit5())``.

    ``controller``: a diffrax adaptive step-size controller (``diffrax.PIDController``,
    or one wrapped in ``diffrax.ClipStepSizeController``); its ``rtol`` and ``atol`` are
    replaced by those given to ``simulate`` (traced, and recorded with the run). Default:
    a ``PIDController`` with gains ``pcoeff`` and ``icoeff``; the defaults suit smooth
    problems, and for stiff ones diffrax suggests ``pcoeff=0.3, icoeff=0.3`` (which the
    implicit solvers named in the catalog use). IMEX solvers (``diffrax.KenCarp4()``) are
    refused: a model is one vector field, not an explicit and an implicit part.
    """

    solver: diffrax.AbstractAdaptiveSolver
    pcoeff: float = eqx.field(static=True, default=0.4)
    icoeff: float = eqx.field(static=True, default=1.0)
    controller: diffrax.AbstractAdaptiveStepSizeController | None = None
    stochastic: ClassVar[bool] = False
    adaptive: ClassVar[bool] = True

    def __check_init__(self):
        if not isinstance(self.solver, diffrax.AbstractAdaptiveSolver):
            raise TypeError(
                f"{type(self.solver).__name__} has no error estimate, so it cannot adapt "
                "its step: use a fixed-step solver ('euler', 'heun', 'rk4') or an "
                "adaptive diffrax solver such as diffrax.Tsit5() or diffrax.Kvaerno5()")
        if getattr(self.solver.term_structure, "__origin__", None) is diffrax.MultiTerm:
            raise TypeError(
                f"{type(self.solver).__name__} is an IMEX solver, for a vector field split "
                "into explicit and implicit parts, which a DiffLab model is not (and run "
                "fully implicitly it fails on stiff problems): use diffrax.Kvaerno5() or "
                "another Kvaerno (docs/solvers.md)")
        if self.controller is not None:
            if not isinstance(self.controller, diffrax.AbstractAdaptiveStepSizeController):
                raise TypeError("controller must be a diffrax adaptive step-size controller "
                                f"(e.g. diffrax.PIDController), not {self.controller!r}")
            with_tolerances(self.controller, 1e-6, 1e-9)  # raises if it has none to set
            if any(map(eqx.is_array, jax.tree.leaves(self.controller))):
                raise TypeError("a controller holding arrays (step_ts, jump_ts) cannot be "
                                "compiled into a run; leave them out")

    def check(self, model_type: type[Model]) -> None:
        if issubclass(model_type, SDEModel):
            raise ValueError(
                f"{model_type.__name__} is stochastic: use solver='euler_maruyama'"
            )

    def step_controller(self, rtol, atol) -> "Guarded":
        """The step-size controller of a solve with tolerances ``rtol``, ``atol``."""
        if self.controller is None:
            inner = diffrax.PIDController(rtol=rtol, atol=atol, pcoeff=self.pcoeff,
                                          icoeff=self.icoeff)
        else:
            inner = with_tolerances(self.controller, rtol, atol)
        return Guarded(inner)

    def solve(self, model, y0, t0, t1, ts, dt0, rtol, atol, max_steps, adjoint=None,
              watch=None):
        """Solve from ``t0`` to ``t1`` saving at ``ts``: ``(ys, result code, stats)``.

        ``dt0``: the first step (``None``: Hairer's choice). ``stats``: the accepted and
        rejected steps, the time reached and the step size there (see ``integrate``).
        ``adjoint``: how diffrax differentiates the solve (default ``ForwardMode``, for
        difflab's forward sensitivities; ``RecursiveCheckpointAdjoint`` for reverse mode).
        ``watch``: the events to watch (a ``crossings.Watch``); then the run's ``Events``
        come fourth.
        """
        adjoint = diffrax.ForwardMode() if adjoint is None else adjoint
        reverse = isinstance(adjoint, diffrax.RecursiveCheckpointAdjoint)
        sol = without_host_checks(_diffeqsolve, reverse=reverse)(
            self, model, y0, t0, t1, ts, dt0, rtol, atol, max_steps, adjoint, watch)
        if watch is not None:
            return _watched_outcome(sol, ts, watch)
        _, t_reached, dt_reached = sol.controller_state
        stats = run_stats(sol.stats["num_accepted_steps"], sol.stats["num_rejected_steps"],
                          t_reached, dt_reached, jnp.inf)
        return sol.ys, from_diffrax(sol.result, sol.ys), stats


def _diffeqsolve(adaptive, model, y0, t0, t1, ts, dt0, rtol, atol, max_steps, adjoint,
                 watch):
    """diffrax's solution of ``Adaptive.solve`` (run without diffrax's host checks of its
    arguments, which DiffLab checks before tracing, so that it lowers for any backend)."""
    controller = adaptive.step_controller(rtol, atol)
    solver = with_plain_lu(with_stage_chord(adaptive.solver))  # see chord.py, linear.py
    if watch is not None:
        controller = Watched(controller, watch, model, as_stepped(solver, controller))
    return diffrax.diffeqsolve(
        diffrax.ODETerm(lambda t, y, args: model.vector_field(t, y)), solver,
        t0, t1, dt0, y0, saveat=diffrax.SaveAt(ts=ts, controller_state=True),
        stepsize_controller=controller, max_steps=max_steps, throw=False, adjoint=adjoint)


def as_stepped(solver, controller):
    """``solver`` as ``diffeqsolve`` steps it under ``controller`` with forward-mode
    derivatives: its stages in a plain ``lax`` loop (diffrax's ``ForwardMode`` does so),
    and an implicit solver's root finder on the controller's tolerances where it left
    them to the controller (they are not numbers)."""
    if isinstance(solver, diffrax.AbstractRungeKutta) and solver.scan_kind is None:
        solver = eqx.tree_at(lambda s: s.scan_kind, solver, "lax", is_leaf=lambda x: x is None)
    if isinstance(solver, diffrax.AbstractImplicitSolver):
        finder = solver.root_finder
        unset = [a for a in ("rtol", "atol", "norm") if not _is_set(getattr(finder, a))]
        solver = eqx.tree_at(lambda s: [getattr(s.root_finder, a) for a in unset], solver,
                             [getattr(controller, a) for a in unset])
    return solver


def _is_set(value) -> bool:
    return callable(value) or isinstance(value, (int, float)) or eqx.is_array(value)


def _watched_outcome(sol, ts, watch: Watch):
    """``(ys, result code, stats, Events)`` of a solve that watched events: a stop at a
    terminal event is a success, and the states saved after it are NaN."""
    (_, t_reached, dt_reached), rec = sol.controller_state
    stopped = rec.stopped_by >= 0
    alive = (ts <= rec.t_stop)[:, None]
    result = diffrax.RESULTS.where(sol.result == diffrax.RESULTS.event_occurred,
                                   diffrax.RESULTS.successful, sol.result)
    code = from_diffrax(result, jnp.where(alive, sol.ys, 0.0))
    stats = run_stats(sol.stats["num_accepted_steps"], sol.stats["num_rejected_steps"],
                      jnp.where(stopped, rec.t_stop, t_reached), dt_reached, jnp.inf)
    return after_stop(ts, sol.ys, rec), code, stats, watch.finish(rec)


def with_tolerances(controller, rtol, atol):
    """``controller`` with its tolerances replaced (through a ``ClipStepSizeController``)."""
    if isinstance(controller, diffrax.ClipStepSizeController):
        inner = with_tolerances(controller.controller, rtol, atol)
        return eqx.tree_at(lambda c: c.controller, controller, inner)
    try:
        return eqx.tree_at(lambda c: (c.rtol, c.atol), controller, (rtol, atol))
    except (TypeError, ValueError, AttributeError):
        raise TypeError(f"{type(controller).__name__} has no rtol and atol fields to set; "
                        "use diffrax.PIDController (or wrap one in "
                        "diffrax.ClipStepSizeController)") from None


class _Wrapping(diffrax.AbstractAdaptiveStepSizeController):
    """A controller around an ``inner`` one, whose tolerances and norm it uses."""

    inner: eqx.AbstractVar[diffrax.AbstractAdaptiveStepSizeController]

    @property
    def rtol(self):
        return self.inner.rtol

    @property
    def atol(self):
        return self.inner.atol

    @property
    def norm(self):
        return self.inner.norm


class Guarded(_Wrapping):
    """A controller that starts with Hairer's step, shrinks the step on a non-finite
    candidate, and records ``(its state, time reached, step size there)``."""

    inner: diffrax.AbstractAdaptiveStepSizeController

    def wrap(self, direction):
        return Guarded(self.inner.wrap(direction))

    def init(self, terms, t0, t1, y0, dt0, args, func, error_order):
        if dt0 is None:
            order = 1 if error_order is None else error_order
            dt0 = jax.lax.stop_gradient(initial_step(
                lambda t, y: func(terms, t, y, args), t0, y0, order, self.rtol, self.atol,
                self.norm))
        tnext, state = self.inner.init(terms, t0, t1, y0, dt0, args, func, error_order)
        return tnext, (state, jnp.asarray(t0, jnp.result_type(tnext)), tnext - t0)

    def adapt_step_size(self, t0, t1, y0, y1_candidate, args, y_error, error_order, state):
        finite = jnp.all(jnp.isfinite(y1_candidate)) & jnp.all(jnp.isfinite(y_error))
        y1_candidate = jnp.where(finite, y1_candidate, y0)
        y_error = jnp.where(finite, y_error, jnp.inf)  # rejected, the step cut most
        keep, next_t0, next_t1, jump, inner, result = self.inner.adapt_step_size(
            t0, t1, y0, y1_candidate, args, y_error, error_order, state[0])
        return keep, next_t0, next_t1, jump, (inner, next_t0, next_t1 - next_t0), result


class Watching(_Wrapping):
    """A controller that watches events at every accepted step, located on ``solver``'s
    own step (:meth:`step`), and ends the solve (diffrax's ``event_occurred``) at a
    terminal one. Its state: ``(the inner one's, the record)``."""

    watch: eqx.AbstractVar[object]  # start(t0, y0): the record before the first step
    solver: eqx.AbstractVar[diffrax.AbstractSolver]

    def wrap(self, direction):
        return eqx.tree_at(lambda c: c.inner, self, self.inner.wrap(direction))

    def init(self, terms, t0, t1, y0, dt0, args, func, error_order):
        tnext, state = self.inner.init(terms, t0, t1, y0, dt0, args, func, error_order)
        return tnext, (state, self.watch.start(t0, y0))

    def adapt_step_size(self, t0, t1, y0, y1_candidate, args, y_error, error_order, state):
        keep, next_t0, next_t1, jump, inner, result = self.inner.adapt_step_size(
            t0, t1, y0, y1_candidate, args, y_error, error_order, state[0])
        rec, stops = self.record(state[1], t0, y0, t1, y1_candidate, keep)
        result = diffrax.RESULTS.where(stops, diffrax.RESULTS.event_occurred, result)
        return keep, next_t0, next_t1, jump, (inner, rec), result

    @abc.abstractmethod
    def record(self, rec, t0, y0, t1, y1, accept):
        """``(the record after the step, whether a terminal event stopped it there)``."""

    def step(self, model, t0, y0, theta):
        """The solver's step of size ``theta`` from ``(t0, y0)``."""
        term = diffrax.ODETerm(lambda t, y, args: model.vector_field(t, y))
        t1 = t0 + theta
        state = self.solver.init(term, t0, t1, y0, None)
        return self.solver.step(term, t0, t1, y0, None, state, False)[0]


class Watched(Watching):
    """A :class:`Guarded` controller that also watches an ODE run's events
    (``crossings.py``). Its state: ``(Guarded's, the Record)``."""

    inner: Guarded
    watch: Watch
    model: Model
    solver: diffrax.AbstractSolver

    def record(self, rec, t0, y0, t1, y1, accept):
        new = self.watch.update(rec, self.step, self.model, t0, y0, t1, y1, accept=accept)
        return new, (new.stopped_by >= 0) & (rec.stopped_by < 0)


def initial_step(f, t0, y0, order, rtol, atol, norm):
    """The first step of Hairer, Norsett & Wanner, *Solving ODEs I*, II.4 (p. 169)."""
    scale = atol + jnp.abs(y0) * rtol
    f0 = f(t0, y0)
    d0, d1 = norm(y0 / scale), norm(f0 / scale)
    tiny = (d0 < 1e-5) | (d1 < 1e-5)
    h0 = jnp.where(tiny, 1e-6, 0.01 * d0 / jnp.where(tiny, 1.0, d1))
    d2 = norm((f(t0 + h0, y0 + h0 * f0) - f0) / scale) / h0
    dmax = jnp.maximum(d1, d2)
    flat = dmax <= 1e-15
    h1 = jnp.where(flat, jnp.maximum(1e-6, h0 * 1e-3),
                   (0.01 / jnp.where(flat, 1.0, dmax)) ** (1.0 / (order + 1)))
    h = jnp.minimum(100 * h0, h1)
    return jnp.where(jnp.isfinite(h) & (h > 0), h, 1e-6)


def from_diffrax(result, ys):
    """Map a diffrax result (and the saved states) to a :class:`Result` code, under jit."""
    R = diffrax.RESULTS
    code = jnp.select(
        [
            result == R.successful,
            result == R.max_steps_reached,
            result == R.dt_min_reached,
        ],
        [Result.SUCCESS, Result.MAX_STEPS_REACHED, Result.STEP_SIZE_TOO_SMALL],
        Result.SOLVER_FAILED,
    )
    return mark_diverged(code, ys)
