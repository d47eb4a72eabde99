"""A Qt-free undo stack of commands, with merging of slider drags into one step."""

import dataclasses
from collections.abc import Callable


@dataclasses.dataclass
class Command:
    """One undoable change: ``apply(state)`` sets it, ``revert(state)`` takes it back.

    ``merge_key``: consecutive commands with the same non-``None`` key become one step
    (a slider drag), keeping the first command's "before" and the last one's "after".
    """

    text: str
    before: dict
    after: dict
    apply: Callable[[dict], None]
    merge_key: object = None

    def redo(self) -> None:
        self.apply(self.after)

    def undo(self) -> None:
        self.apply(self.before)


class UndoStack:
    """Commands done (undoable) and undone (redoable); ``changed`` is called on every move."""

    def __init__(self, limit: int = 500, changed: Callable[[], None] | None = None):
        self._done: list[Command] = []
        self._undone: list[Command] = []
        self._limit = limit
        self._changed = changed or (lambda: None)

    def push(self, command: Command) -> None:
        """Record a command that has just been applied."""
        top = self._done[-1] if self._done else None
        if top is not None and command.merge_key is not None and top.merge_key == command.merge_key:
            top.after = command.after
            top.text = command.text
        else:
            self._done.append(command)
            del self._done[: -self._limit]
        self._undone.clear()
        self._changed()

    def undo(self) -> str | None:
        """Take back the last command; returns its text (``None`` when nothing to undo)."""
        if not self._done:
            return None
        command = self._done.pop()
        command.undo()
        self._undone.append(command)
        self._changed()
        return command.text

    def redo(self) -> str | None:
        """Apply again the last command undone; returns its text."""
        if not self._undone:
            return None
        command = self._undone.pop()
        command.redo()
        self._done.append(command)
        self._changed()
        return command.text

    def clear(self) -> None:
        self._done.clear()
        self._undone.clear()
        self._changed()

    @property
    def can_undo(self) -> bool:
        return bool(self._done)

    @property
    def can_redo(self) -> bool:
        return bool(self._undone)

    @property
    def undo_text(self) -> str:
        return self._done[-1].text if self._done else ""

    @property
    def redo_text(self) -> str:
        return self._undone[-1].text if self._undone else ""

    def __len__(self) -> int:
        return len(self._done)
