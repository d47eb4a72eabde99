"""A field run's events in its group: the kept crossings over an ``event`` dimension, the
fields at each as ``event_<field>`` over ``(event, x[, y[, z]])``, and the events'
definitions (all but their conditions) as the attributes ODE runs give them."""

import numpy as np

from ..solvers import FieldEvents
from ._netcdf import Variable
from ._run_events import ATTRS, crossing_variables, event_attributes


def event_field_name(field: str) -> str:
    return f"event_{field}"


def field_event_variables(events, dims: dict) -> tuple[dict[str, Variable], dict]:
    """``(variables, attributes)`` of a field run's :class:`FieldEvents` (empty when it has
    none); ``dims[field]`` are the dimensions of a frame of the field (``("x", "y")``)."""
    if events is None:
        return {}, {}
    clash = [n for n in dims if event_field_name(n) in dims or n in ("event", "event_time",
                                                                        "event_which")]
    if clash:
        raise ValueError(f"field {clash[0]!r} clashes with the names the run's events are "
                         f"stored under; rename it to save its events")
    variables, kept = crossing_variables(events)
    for name, u in events.fields.items():
        variables[event_field_name(name)] = Variable(
            ("event", *dims[name]), np.asarray(u)[kept],
            {"long_name": f"{name} at the crossing"})
    return variables, event_attributes(events)


def optional_event_variables(dims: dict) -> dict:
    """The reader's spec of the event variables a field run may hold."""
    return {"event_time": (("event",), "f"), "event_which": (("event",), "i"),
            **{event_field_name(n): (("event", *d), "f") for n, d in dims.items()}}


def field_events_from(stored, field_names) -> FieldEvents | None:
    """The :class:`FieldEvents` a stored field run holds (``None``: it watched none),
    padded as ``simulate`` returns them (NaN and ``-1`` after the kept crossings)."""
    attrs, v = stored.attrs, stored.variables
    if not set(ATTRS) <= set(attrs) or "event_time" not in v:
        return None
    names = attrs["event_names"]
    names = (names,) if isinstance(names, str) else tuple(map(str, names))
    ints = lambda name: tuple(int(x) for x in np.atleast_1d(attrs[name]))  # noqa: E731
    capacity = ints("event_max_events")
    size = sum(capacity)
    kept = np.asarray(v["event_time"].data, np.float64)
    ts, which = np.full(size, np.nan), np.full(size, -1, np.int32)
    ts[:len(kept)] = kept
    which[:len(kept)] = np.asarray(v["event_which"].data)
    fields = {}
    for name in field_names:
        data = np.asarray(v[event_field_name(name)].data)
        fields[name] = np.full((size, *data.shape[1:]), np.nan, dtype=data.dtype)
        fields[name][:len(kept)] = data
    return FieldEvents(ts, fields, which, np.asarray(ints("event_found"), np.int32),
                       np.int32(attrs.get("event_stopped_by", -1)), names,
                       ints("event_direction"), tuple(map(bool, ints("event_terminal"))),
                       capacity)
