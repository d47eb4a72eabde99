"""Events on field runs: conditions of ``(t, fields)`` whose zero crossings a field run
locates inside its steps and reports (``FieldTrajectory.events``).

The same :class:`Event` as ODE runs, with ``condition(t, fields) -> scalar`` where
``fields`` is the dict ``{name: array of the grid's shape}`` (``f["u"].max() - 0.5``).
After every step the conditions are evaluated on the grid and a step where one changed
sign (in the event's direction) is kept (its start); after the run each crossing is
located as the root in ``[0, h]`` of ``G(theta) = g(t + theta, step(theta))``,
``step(theta)`` being the run's own stepper (its weights made for a step of ``theta``)
from the step's start: the located time and fields are as accurate as one step of the
stepper (``crossings.locate``: Illinois search, then one Newton step).
"""

from collections.abc import Callable

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax.custom_batching import custom_vmap

from ._events import Event, Events, as_events, check_distinct_names
from ._resources import check_memory
from ._steppers.adaptive import Watching
from ._steppers.crossings import crossings, locate


class FieldEvents(Events):
    """The crossings a field run's events found, as :class:`Events` but with ``ys`` the
    fields at each crossing: ``{name: (C, *grid.shape)}`` (also ``fields``); unused slots
    hold NaN. ``fields_of(name)`` gives them for one event."""

    @property
    def fields(self) -> dict:
        return self.ys

    def fields_of(self, name: str) -> dict:
        """The fields at the kept crossings of event ``name``: ``{field: (n, *shape)}``."""
        chosen = np.asarray(self.which) == self.index(name)
        return {f: np.asarray(u)[chosen] for f, u in self.ys.items()}

    def ys_of(self, name: str) -> dict:
        return self.fields_of(name)

    def to_dict(self) -> dict:
        """``{"events": [{"name", "t"}, ...], "found": {name: n}, "stopped_by"}`` (the
        fields at the crossings are in ``fields``)."""
        ts, which = np.asarray(self.ts), np.asarray(self.which)
        return {"events": [{"name": self.names[k], "t": float(t)}
                           for t, k in zip(ts, which) if k >= 0],
                "found": {n: int(f) for n, f in zip(self.names, np.asarray(self.found))},
                "stopped_by": self.stopped}


def resolve_field_events(events, fields: dict, t0: float) -> tuple[Event, ...] | None:
    """``events`` (an :class:`Event` or a sequence of them) named, checked to be functions
    of ``(t, fields)`` returning a scalar and to keep fields at their crossings that fit in
    memory; ``ValueError`` or ``TypeError`` names a bad one."""
    if events is None:
        return None
    resolved = []
    for i, event in enumerate(as_events(events)):
        if isinstance(event.condition, str):
            raise ValueError(f"event {event.condition!r}: a field is not a scalar; give a "
                             f"function of (t, fields), e.g. lambda t, f: "
                             f"f[{event.condition!r}].max() - 0.5")
        resolved.append(Event(event.condition, event.direction, bool(event.terminal),
                              event.name or f"event{i}", event.max_events))
    check_distinct_names(resolved)
    for event in resolved:
        _check_scalar(event, fields, t0)
    _check_memory(resolved, fields)
    return tuple(resolved)


def _check_memory(events, fields: dict) -> None:
    """Refuse events whose kept fields would not fit in memory: ``max_events`` frames each
    of the crossing steps' starts, of the located fields and of their sorted copy."""
    kept = sum(e.max_events for e in events)
    frame = sum(8.0 * np.prod(np.shape(u), dtype=np.float64) for u in fields.values())
    check_memory(3 * kept * frame, f"keeping the fields at up to {kept} crossings of the "
                 f"events", "give the events a smaller max_events")


def _check_scalar(event: Event, fields: dict, t0: float) -> None:
    try:
        out = jax.eval_shape(event.condition, jnp.asarray(t0, float), fields)
    except KeyError as error:
        raise ValueError(f"event {event.name!r}: no field {error.args[0]!r}; the fields are "
                         f"{', '.join(fields)}") from None
    shape = getattr(out, "shape", None)
    if shape is None:
        raise ValueError(f"event {event.name!r}: the condition must return a scalar, "
                         f"not a {type(out).__name__}")
    if shape != ():
        raise ValueError(f"event {event.name!r}: the condition must return a scalar, "
                         f"not an array of shape {shape}")


@custom_vmap
def batch_any(flag):
    """``flag``; under ``jax.vmap``, whether it holds for any member of the batch (the
    same for all). A ``lax.cond`` on it stays a branch in a batch, where a cond on a
    batched flag would compute both sides for every member at every step."""
    return flag


@batch_any.def_vmap
def _any_member(axis_size, in_batched, flag):
    return (jnp.any(flag) if in_batched[0] else flag), False


@custom_vmap
def batch_all(flag):
    """``flag``; under ``jax.vmap``, whether it holds for every member of the batch."""
    return flag


@batch_all.def_vmap
def _all_members(axis_size, in_batched, flag):
    return (jnp.all(flag) if in_batched[0] else flag), False


class FieldRecord(eqx.Module):
    """What a field run carries for its events: the conditions after the last step ``g``
    (K,), the crossings found per event, and for each kept crossing (K, M) the step it
    happened in (its start ``t0s``, the carry there ``starts``, its size ``hs``, the
    conditions at its ends ``g0s``, ``g1s``), located once the run is done. ``stopped``:
    a terminal event crossed, in the step starting at ``t_last``."""

    g: jax.Array
    found: jax.Array
    t0s: jax.Array
    hs: jax.Array
    g0s: jax.Array
    g1s: jax.Array
    starts: object
    stopped: jax.Array
    t_last: jax.Array


class FieldWatch(eqx.Module):
    """A field run's events (resolved) as its loop sees them; ``to_grid`` takes the
    stepper's carry (Fourier coefficients for exponential steppers) to the fields.

    The loop only finds the steps where conditions change sign and keeps each such step's
    start; :meth:`finish` locates the crossings inside them after the run, so that a
    batch (``jax.vmap``) locates its members' crossings together, not one member's at a
    time at every step where some member crossed."""

    events: tuple[Event, ...]
    to_grid: Callable = eqx.field(static=True)

    @property
    def capacity(self) -> tuple[int, ...]:
        return tuple(e.max_events for e in self.events)

    def values(self, t, u):
        """Every condition at ``(t, carry u)``, (K,)."""
        fields = self.to_grid(u)
        dtype = jnp.result_type(float)
        return jnp.stack([jnp.asarray(e.condition(t, fields), dtype) for e in self.events])

    def start(self, t0, u0) -> FieldRecord:
        k, m = len(self.events), max(self.capacity)
        dtype = jnp.result_type(float)
        slots = jnp.zeros((k, m), dtype)
        starts = jax.tree.map(lambda x: jnp.zeros((k, m, *x.shape), x.dtype), u0)
        return FieldRecord(self.values(t0, u0), jnp.zeros(k, jnp.int32), slots, slots, slots,
                           slots, starts, jnp.asarray(False), jnp.asarray(jnp.inf, dtype))

    def update(self, rec: FieldRecord, t0, u0, t1, u1, accept=True) -> FieldRecord:
        """``rec`` after the step from ``(t0, u0)`` to ``(t1, u1)`` (counted if
        ``accept``): each event that crossed keeps the step, written one slot at a time
        (no copy of the kept starts)."""
        g1 = self.values(t1, u1)
        crossed = crossings(rec.g, g1, [e.direction for e in self.events])
        crossed = crossed & accept & ~rec.stopped
        slot = jnp.minimum(rec.found, rec.t0s.shape[1] - 1)
        write = crossed & (rec.found < jnp.array(self.capacity))

        def put(stored, per_event):
            per_event = jnp.broadcast_to(jnp.asarray(per_event, stored.dtype), write.shape)
            for k in range(len(self.events)):
                stored = _put_frame(stored, per_event[k], slot, write, k)
            return stored

        t0 = jnp.asarray(t0, rec.t0s.dtype)
        terminal = jnp.any(crossed & jnp.array([e.terminal for e in self.events]))
        return FieldRecord(
            jnp.where(accept, g1, rec.g), rec.found + crossed.astype(jnp.int32),
            put(rec.t0s, t0), put(rec.hs, t1 - t0), put(rec.g0s, rec.g), put(rec.g1s, g1),
            jax.tree.map(lambda b, x: _put_frames(b, x, slot, write), rec.starts, u0),
            rec.stopped | terminal, jnp.where(terminal, t0, rec.t_last))

    def finish(self, rec: FieldRecord, step, model) -> tuple[FieldEvents, jax.Array]:
        """The kept crossings located (``step(model, t0, u0, theta)``: the stepper's step
        of size ``theta``) and in time order, as :class:`FieldEvents`, and the time a
        terminal event stopped the run (``inf``: none did)."""
        k, m = rec.t0s.shape
        capacity = jnp.array(self.capacity)
        kept = jnp.arange(m)[None, :] < jnp.minimum(rec.found, capacity)[:, None]
        times, fields = self._located(rec, kept, step, model)
        # a terminal crossing ends the run: the later crossings of its step are dropped
        final = kept & (rec.t0s == rec.t_last)
        ends = final & jnp.array([e.terminal for e in self.events])[:, None]
        first = jnp.min(jnp.where(ends, times, jnp.inf), axis=1)
        t_stop = jnp.min(first)
        stopped_by = jnp.where(rec.stopped, jnp.argmin(first), -1).astype(jnp.int32)
        late = final & (times > t_stop)
        kept, found = kept & ~late, rec.found - late.sum(axis=1).astype(jnp.int32)
        order = jnp.argsort(jnp.where(kept, times, jnp.inf).reshape(-1))[:sum(self.capacity)]
        valid = kept.reshape(-1)[order]

        def sorted_(u):
            u = u.reshape(k * m, *u.shape[2:])[order]
            return jnp.where(valid.reshape(-1, *([1] * (u.ndim - 1))), u, jnp.nan)

        e = self.events
        events = FieldEvents(
            sorted_(times), {n: sorted_(u) for n, u in fields.items()},
            jnp.where(valid, order // m, -1).astype(jnp.int32), found, stopped_by,
            tuple(x.name for x in e), tuple(x.direction for x in e),
            tuple(bool(x.terminal) for x in e), self.capacity)
        return events, t_stop

    def _located(self, rec: FieldRecord, kept, step, model):
        """``(times (K, M), {field: (K, M, *shape)})`` of the kept crossings, each located
        inside its step; a slot no batch member uses is skipped."""
        k, m = rec.t0s.shape
        slot_start = jax.tree.map(lambda b: b[0, 0], rec.starts)
        shapes = jax.eval_shape(self.to_grid, slot_start)

        def one(i):
            e, j = i // m, i % m
            used = kept[e, j]

            def go():  # a member that does not use the slot searches nothing (width 0)
                u0 = jax.tree.map(lambda b: b[e, j], rec.starts)
                t, u = locate(lambda t, u: self.values(t, u)[e], step, model, rec.t0s[e, j],
                              u0, jnp.where(used, rec.hs[e, j], 0.0),
                              jnp.where(used, rec.g0s[e, j], -1.0),
                              jnp.where(used, rec.g1s[e, j], 1.0))
                return jnp.where(used, t, jnp.nan).astype(rec.t0s.dtype), self.to_grid(u)

            def skip():
                return (jnp.asarray(jnp.nan, rec.t0s.dtype),
                        jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype), shapes))

            return jax.lax.cond(batch_any(used), go, skip)

        times, fields = jax.lax.map(one, jnp.arange(k * m))
        return times.reshape(k, m), {n: u.reshape(k, m, *u.shape[1:])
                                     for n, u in fields.items()}


def _put_frame(stored, value, slot, write, k: int):
    """``stored`` (K, M, ...) with ``value`` written in place at ``[k, slot[k]]`` if
    ``write[k]``."""
    return stored.at[k, slot[k]].set(jnp.where(write[k], value, stored[k, slot[k]]))


def _put_frames(stored, frame, slot, write):
    """``stored`` with ``frame`` written at ``[k, slot[k]]`` for every ``k`` that writes."""
    for k in range(stored.shape[0]):
        stored = _put_frame(stored, frame, slot, write, k)
    return stored


class WatchedFields(Watching):
    """A diffrax step controller that watches a field run's events at every accepted
    step. Its state: ``(the inner one's, FieldRecord)``."""

    inner: diffrax.AbstractAdaptiveStepSizeController
    watch: FieldWatch
    solver: diffrax.AbstractSolver

    def record(self, rec, t0, y0, t1, y1, accept):
        new = self.watch.update(rec, t0, y0, t1, y1, accept=accept)
        return new, new.stopped & ~rec.stopped
