"""Poincare sections: a run's crossings of a section, after a transient, built on events.

The run is ``simulate`` with one non-terminal :class:`Event` (the section), so each
crossing is located on the solver's own step (as accurate as a step), not interpolated
between saved points.
"""

import json

import equinox as eqx
import numpy as np

from .._datasets import to_dataset
from .._events import Event, StateLevel
from .._simulate import simulate

DEFAULT_MAX_CROSSINGS = 1000


class Poincare(eqx.Module):
    """The crossings of a ``section`` of ``model``'s flow over ``t1`` time units after a
    ``transient``: their times ``ts`` (k,) and states ``ys`` (k, n_states), in order.
    ``found`` counts every crossing (more than k when ``max_crossings`` ran out);
    ``section`` describes it (``"x = 0"``, or the Event's name), ``direction`` the
    crossings kept (+1 upward, -1 downward, 0 both)."""

    ts: np.ndarray
    ys: np.ndarray
    found: int
    t1: float
    transient: float
    section: str = eqx.field(static=True)
    direction: int = eqx.field(static=True)
    state_names: tuple[str, ...] = eqx.field(static=True)
    model: object = None

    def __getitem__(self, name: str) -> np.ndarray:
        """The column of state ``name`` at the crossings."""
        if name not in self.state_names:
            raise KeyError(f"no state {name!r}; the states are {', '.join(self.state_names)}")
        return self.ys[:, self.state_names.index(name)]

    @property
    def return_times(self) -> np.ndarray:
        """The times between successive crossings (k - 1,)."""
        return np.diff(self.ts)

    def to_dict(self) -> dict:
        """``{"section", "direction", "found", "times": [...], "states": {name: [...]}}``"""
        return {"section": self.section, "direction": self.direction, "found": self.found,
                "times": [float(t) for t in self.ts],
                "states": {n: [float(v) for v in self[n]] for n in self.state_names}}

    def to_json(self) -> str:
        """:meth:`to_dict` as a JSON string."""
        return json.dumps(self.to_dict())

    def to_xarray(self):
        """This result as an ``xarray.Dataset``: the variables, coordinates and attributes
        of its group in a session file (``docs/hdf5-schema.md``)."""
        return to_dataset(self)


def section_event(model, section, value: float, direction: int, max_crossings: int) -> Event:
    """The event of a section: an :class:`Event` as it is, or ``state = value``."""
    if isinstance(section, Event):
        return section if not section.terminal else Event(
            section.condition, section.direction, False, section.name, section.max_events)
    if not isinstance(section, str):
        raise TypeError(f"section must be a state name or an Event, not {section!r}")
    if section not in model.state_names:
        raise ValueError(f"section {section!r}: no such state; the states are "
                         f"{', '.join(model.state_names)}")
    level = StateLevel(model.state_names.index(section), float(value))
    return Event(level, direction, False, f"{section} = {float(value):g}", int(max_crossings))


def poincare(model, section, t1: float, *, transient: float = 0.0, value: float = 0.0,
             direction: int = 1, max_crossings: int = DEFAULT_MAX_CROSSINGS, t0: float = 0.0,
             y0=None, solver="tsit5", dt=None, rtol: float = 1e-9, atol: float = 1e-12,
             max_steps: int | None = None) -> Poincare:
    """The crossings of ``section`` by ``model``'s flow from ``y0`` (default its initial
    state): ``transient`` time units dropped, then ``t1`` watched.

    ``section``: a state name (the plane ``state = value``, crossed in ``direction``: +1
    upward, -1 downward, 0 both; at most ``max_crossings`` kept) or an :class:`Event`,
    used as it is (never terminal). ``solver``, ``dt``, ``rtol``, ``atol``, ``max_steps``
    are ``simulate``'s (default: tsit5 at rtol 1e-9, atol 1e-12).
    """
    t0, t1, transient = float(t0), float(t1), float(transient)
    if not (np.isfinite(t1) and t1 > 0):
        raise ValueError(f"t1 must be a positive number, got {t1}")
    if not (np.isfinite(transient) and transient >= 0):
        raise ValueError(f"transient must be a number >= 0, got {transient}")
    event = section_event(model, section, value, direction, max_crossings)
    solve = dict(solver=solver, dt=dt, rtol=rtol, atol=atol, max_steps=max_steps, n_save=2)
    start = y0
    if transient > 0:
        start = simulate(model, t0 + transient, t0=t0, y0=y0, **solve).ys[-1]
    run = simulate(model, t0 + transient + t1, t0=t0 + transient, y0=start, events=event,
                   **solve)
    found = run.events
    count = found.count
    return Poincare(np.asarray(found.ts)[:count], np.asarray(found.ys)[:count],
                    int(np.asarray(found.found)[0]), t1, transient, found.names[0],
                    event.direction, tuple(model.state_names), model)
