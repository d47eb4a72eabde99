"""A run's events in its group: the kept crossings as variables over an ``event``
dimension, the events' definitions (all but their conditions) as attributes."""

import numpy as np

from ..solvers import Events
from ._netcdf import Variable

ATTRS = ("event_names", "event_direction", "event_terminal", "event_max_events",
         "event_found", "event_stopped_by")


def event_variables(events) -> tuple[dict[str, Variable], dict]:
    """``(variables, attributes)`` of a run's :class:`Events` (empty when it has none)."""
    if events is None:
        return {}, {}
    variables, kept = crossing_variables(events)
    variables["event_y"] = Variable(("event", "state"), np.asarray(events.ys)[kept],
                                    {"long_name": "state at the crossing"})
    return variables, event_attributes(events)


def crossing_variables(events) -> tuple[dict[str, Variable], np.ndarray]:
    """The crossings' numbers, times and events as variables over ``event``, and which of
    the padded crossings are kept."""
    which = np.asarray(events.which)
    kept = which >= 0
    variables = {
        "event": Variable(("event",), np.arange(int(kept.sum()), dtype=np.int64),
                          {"long_name": "event crossing"}),
        "event_time": Variable(("event",), np.asarray(events.ts, np.float64)[kept],
                               {"long_name": "time of the crossing"}),
        "event_which": Variable(("event",), which[kept].astype(np.int32),
                                {"long_name": "the event crossed (an index into event_names)"}),
    }
    return variables, kept


def event_attributes(events) -> dict:
    """The events' settings and counts, as attributes of the run's group."""
    return {"event_names": list(events.names),
            "event_direction": np.asarray(events.directions, np.int8),
            "event_terminal": np.asarray(events.terminal, np.int8),
            "event_max_events": np.asarray(events.capacity, np.int64),
            "event_found": np.asarray(events.found, np.int64),
            "event_stopped_by": int(np.asarray(events.stopped_by))}


def events_from(stored) -> Events | None:
    """The :class:`Events` a stored run holds (``None``: it watched none), padded as
    ``simulate`` returns them (NaN and ``-1`` after the kept crossings)."""
    attrs, v = stored.attrs, stored.variables
    if "event_names" not in attrs or "event_time" not in v:
        return None
    names = attrs["event_names"]
    names = (names,) if isinstance(names, str) else tuple(map(str, names))
    ints = lambda name: tuple(int(x) for x in np.atleast_1d(attrs[name]))  # noqa: E731
    capacity = ints("event_max_events")
    size, n_states = sum(capacity), len(stored.state_names)
    kept = np.asarray(v["event_time"].data, np.float64)
    ts = np.full(size, np.nan)
    ys = np.full((size, n_states), np.nan, dtype=np.asarray(v["event_y"].data).dtype)
    which = np.full(size, -1, np.int32)
    ts[:len(kept)], ys[:len(kept)] = kept, np.asarray(v["event_y"].data)
    which[:len(kept)] = np.asarray(v["event_which"].data)
    return Events(ts, ys, which, np.asarray(ints("event_found"), np.int32),
                  np.int32(attrs.get("event_stopped_by", -1)), names,
                  ints("event_direction"), tuple(map(bool, ints("event_terminal"))), capacity)
