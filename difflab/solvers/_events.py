"""Events: functions of time and state whose zero crossings a run locates and reports.

``Event`` says what to watch; ``Events`` is what a run found (``Trajectory.events``). The
crossings are found and located inside the integration loops (``_steppers/crossings.py``).
"""

from collections.abc import Callable, Sequence

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

DEFAULT_MAX_EVENTS = 100


class Event(eqx.Module):
    """A zero crossing of ``condition(t, y) -> scalar`` to locate during a run.

    ``condition`` may also be a state name (``Event("x")``: the state ``x`` crossing
    zero). ``direction``: ``+1`` upward crossings only (negative to non-negative), ``-1``
    downward only, ``0`` both. ``terminal``: the run stops at the first such crossing.
    ``name`` (default: the state name, else ``event<i>``) labels its crossings;
    ``max_events`` is how many crossings are kept (later ones are counted, not kept).
    A crossing starts strictly on one side: a run starting on ``condition = 0`` does not
    report its start. Array fields of a ``condition`` that is an Equinox module are traced
    (changing them does not recompile); a new ``lambda`` per call does recompile.
    """

    condition: Callable | str
    direction: int = eqx.field(static=True, default=0)
    terminal: bool = eqx.field(static=True, default=False)
    name: str | None = eqx.field(static=True, default=None)
    max_events: int = eqx.field(static=True, default=DEFAULT_MAX_EVENTS)

    def __check_init__(self):
        if not (callable(self.condition) or isinstance(self.condition, str)):
            raise TypeError("an Event's condition must be a function (t, y) -> scalar or a "
                            f"state name, not {type(self.condition).__name__}")
        if self.direction not in (-1, 0, 1) or isinstance(self.direction, bool):
            raise ValueError(f"direction must be -1, 0 or +1, got {self.direction!r}")
        if not isinstance(self.terminal, (bool, np.bool_)):
            raise TypeError(f"terminal must be True or False, got {self.terminal!r}")
        if isinstance(self.max_events, bool) or not isinstance(self.max_events, int) \
                or self.max_events < 1:
            raise ValueError(f"max_events must be a whole number >= 1, got {self.max_events!r}")
        if self.name is not None and (not isinstance(self.name, str) or not self.name):
            raise ValueError(f"an Event's name must be a non-empty string, got {self.name!r}")


class StateLevel(eqx.Module):
    """The condition ``y[index] - value``: a state crossing a level."""

    index: int = eqx.field(static=True)
    value: float = eqx.field(static=True, default=0.0)

    def __call__(self, t, y):
        return y[self.index] - self.value


def resolve_events(events, state_names: Sequence[str], t0, y0) -> tuple[Event, ...] | None:
    """``events`` (an :class:`Event` or a sequence of them) with every name given and
    every state-name condition made a :class:`StateLevel`; ``ValueError`` names a bad one."""
    if events is None:
        return None
    resolved = tuple(_resolved(e, i, tuple(state_names)) for i, e in enumerate(as_events(events)))
    check_distinct_names(resolved)
    for event in resolved:
        _check_scalar(event, t0, y0)
    return resolved


def as_events(events) -> tuple[Event, ...]:
    """``events`` (an :class:`Event` or a sequence of them) as a tuple, not empty."""
    if isinstance(events, Event):
        events = (events,)
    if not isinstance(events, Sequence) or not all(isinstance(e, Event) for e in events):
        raise TypeError("events must be an Event or a sequence of Events")
    if not events:
        raise ValueError("events is empty: give at least one Event (or events=None)")
    return tuple(events)


def check_distinct_names(events) -> None:
    """Refuse two events of one name."""
    names = [e.name for e in events]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"two events are named {twice[0]!r}; give each a different name")


def _resolved(event: Event, i: int, state_names: tuple[str, ...]) -> Event:
    condition, name = event.condition, event.name
    if isinstance(condition, str):
        if condition not in state_names:
            raise ValueError(f"event {condition!r}: no such state; the states are "
                             f"{', '.join(state_names)}")
        condition, name = StateLevel(state_names.index(condition)), name or condition
    return Event(condition, event.direction, bool(event.terminal), name or f"event{i}",
                 event.max_events)


def _check_scalar(event: Event, t0, y0) -> None:
    shape = jax.eval_shape(event.condition, jnp.asarray(t0, y0.dtype), y0).shape
    if shape != ():
        raise ValueError(f"event {event.name!r}: the condition must return a scalar, "
                         f"not an array of shape {shape}")


class Events(eqx.Module):
    """The crossings a run's events found, in time order.

    ``ts`` (C,) and ``ys`` (C, n_states) are their times and states, ``which`` (C,) the
    index of the event in ``names`` (C is the sum of the events' ``max_events``; unused
    slots hold NaN and ``-1``). ``found`` (one per event) counts every crossing, also
    those past ``max_events`` that were not kept; ``stopped_by`` is the index of the
    terminal event that stopped the run (``-1``: none). ``directions``, ``terminal`` and
    ``capacity`` restate the events; ``definitions`` are the :class:`Event` objects
    (``None`` under a JAX transformation or when read from a file).
    """

    ts: jax.Array
    ys: jax.Array
    which: jax.Array
    found: jax.Array
    stopped_by: jax.Array
    names: tuple[str, ...] = eqx.field(static=True)
    directions: tuple[int, ...] = eqx.field(static=True)
    terminal: tuple[bool, ...] = eqx.field(static=True)
    capacity: tuple[int, ...] = eqx.field(static=True)
    definitions: tuple[Event, ...] | None = None

    @property
    def count(self) -> int:
        """How many crossings were kept."""
        return int(np.sum(np.asarray(self.which) >= 0))

    def index(self, name: str) -> int:
        """The position of the event ``name``; ``KeyError`` names the events."""
        if name not in self.names:
            raise KeyError(f"no event {name!r}; the events are {', '.join(self.names)}")
        return self.names.index(name)

    def ts_of(self, name: str) -> np.ndarray:
        """The times of the kept crossings of event ``name``."""
        return np.asarray(self.ts)[np.asarray(self.which) == self.index(name)]

    def ys_of(self, name: str) -> np.ndarray:
        """The states at the kept crossings of event ``name``."""
        return np.asarray(self.ys)[np.asarray(self.which) == self.index(name)]

    @property
    def stopped(self) -> str | None:
        """The name of the terminal event that stopped the run, ``None`` if none did."""
        k = int(np.asarray(self.stopped_by))
        return None if k < 0 else self.names[k]

    @property
    def t_stop(self) -> float | None:
        """The time of the crossing that stopped the run (the last kept), ``None`` if none did."""
        if self.stopped is None:
            return None
        return float(np.nanmax(np.asarray(self.ts)))

    @property
    def overflowed(self) -> tuple[str, ...]:
        """The events that crossed more often than their ``max_events`` (not all kept)."""
        found = np.asarray(self.found)
        return tuple(n for n, f, c in zip(self.names, found, self.capacity) if f > c)

    def to_dict(self) -> dict:
        """``{"events": [{"name", "t", "y"}, ...], "found": {name: n}, "stopped_by"}``"""
        ts, ys, which = (np.asarray(a) for a in (self.ts, self.ys, self.which))
        return {"events": [{"name": self.names[k], "t": float(t), "y": [float(v) for v in y]}
                           for t, y, k in zip(ts, ys, which) if k >= 0],
                "found": {n: int(f) for n, f in zip(self.names, np.asarray(self.found))},
                "stopped_by": self.stopped}


def overflow_message(events: Events) -> str | None:
    """Words for events that crossed more often than they could keep (``None``: none did)."""
    over = events.overflowed
    if not over:
        return None
    found = np.asarray(events.found)
    parts = [f"{n!r} crossed {int(found[events.index(n)])} times but keeps "
             f"{events.capacity[events.index(n)]}" for n in over]
    return f"event {'; '.join(parts)}: raise its max_events to keep them all"
