"""Qt-free events: the application state announces its changes, views subscribe to them.

A small observer pattern in the spirit of napari's ``EmitterGroup``::

    lab.events.params.connect(lambda event: print(event.name, event.value))
    lab.set_param("g", 3.7)   # -> prints "g 3.7"

The GUI connects its widgets to these events; tests and scripts connect plain functions.
Callbacks run synchronously, in the thread that changed the state (the GUI thread in
the app); a callback that raises is reported through ``error_handler`` and does not
stop the others.
"""

import traceback
from collections.abc import Callable
from types import SimpleNamespace


class Event(SimpleNamespace):
    """What happened: ``event.type`` is the emitter's name, the rest are its fields."""


class EventEmitter:
    """Calls every connected callback with an :class:`Event` on :meth:`emit`."""

    def __init__(self, name: str, error_handler: Callable[[str], None] | None = None):
        self.name = name
        self._callbacks: list[Callable] = []
        self._blocked = 0
        self._error_handler = error_handler

    def connect(self, callback: Callable) -> Callable:
        """Call ``callback(event)`` on every emit; returns ``callback`` (usable as a decorator)."""
        if callback not in self._callbacks:
            self._callbacks.append(callback)
        return callback

    def disconnect(self, callback: Callable | None = None) -> None:
        """Stop calling ``callback`` (all callbacks when ``None``)."""
        if callback is None:
            self._callbacks.clear()
        elif callback in self._callbacks:
            self._callbacks.remove(callback)

    def emit(self, **fields) -> Event:
        event = Event(type=self.name, **fields)
        if self._blocked:
            return event
        for callback in list(self._callbacks):
            try:
                callback(event)
            except Exception:  # noqa: BLE001 (one bad observer must not break the others)
                if self._error_handler is None:
                    raise
                self._error_handler(f"error in a {self.name!r} observer:\n{traceback.format_exc()}")
        return event

    def blocker(self):
        """A context manager that mutes this emitter while it is open."""
        emitter = self

        class _Blocker:
            def __enter__(self):
                emitter._blocked += 1

            def __exit__(self, *exc):
                emitter._blocked -= 1

        return _Blocker()


class EmitterGroup:
    """Named emitters as attributes: ``group.params``, ``group.runs``, ..."""

    def __init__(self, names, error_handler: Callable[[str], None] | None = None):
        self._names = tuple(names)
        for name in self._names:
            setattr(self, name, EventEmitter(name, error_handler))

    def __iter__(self):
        return (getattr(self, name) for name in self._names)

    def disconnect_all(self) -> None:
        for emitter in self:
            emitter.disconnect()
