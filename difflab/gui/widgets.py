"""Small reusable widgets: a spin box that reads and writes any float, a slider mapping,
the picker of an analysis view's kept results."""

import math

from PySide6.QtCore import QMargins, QPoint, QRect, QSize, Qt, Signal
from PySide6.QtGui import QValidator
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLayout,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from .theme import theme_colors


class FloatSpinBox(QDoubleSpinBox):
    """A spin box showing 6 significant digits (``1e-05``, ``9.81``), any magnitude.

    With ``log_steps`` the arrows multiply by ``10 ** (1 / 20)`` (a twentieth of a decade)
    instead of adding ``singleStep``. Text that is not a number may be typed; when it is
    entered the box keeps its value and emits ``refused(reason)``.
    """

    refused = Signal(str)

    def __init__(self, parent=None, *, log_steps: bool = False):
        super().__init__(parent)
        self.setDecimals(12)
        self.setKeyboardTracking(False)
        self.setAccelerated(True)
        self._log_steps = log_steps
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)

    def set_log_steps(self, log: bool) -> None:
        self._log_steps = log

    def textFromValue(self, value: float) -> str:  # noqa: N802 (Qt override)
        return f"{value:.6g}"

    def valueFromText(self, text: str) -> float:  # noqa: N802
        try:
            return float(text)
        except ValueError:
            return self.value()

    def validate(self, text: str, pos: int):
        stripped = text.strip()
        try:
            float(stripped)
            return QValidator.State.Acceptable, text, pos
        except ValueError:
            return QValidator.State.Intermediate, text, pos  # refused when entered

    def _check_text(self) -> None:
        text = self.lineEdit().text().strip()
        try:
            float(text)
        except ValueError:
            self.refused.emit(f"{text!r} is not a number" if text else "enter a number")

    def keyPressEvent(self, event) -> None:  # noqa: N802 (Qt override)
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self._check_text()
        super().keyPressEvent(event)

    def focusOutEvent(self, event) -> None:  # noqa: N802 (Qt override)
        self._check_text()
        super().focusOutEvent(event)

    def stepBy(self, steps: int) -> None:  # noqa: N802
        if self._log_steps and self.value() > 0:
            self.setValue(self.value() * 10 ** (steps / 20))
        else:
            super().stepBy(steps)


class SliderScale:
    """Maps slider positions ``0 .. resolution`` to values in ``[lo, hi]``, linear or log."""

    def __init__(self, lo: float, hi: float, log: bool, resolution: int = 1000):
        self.lo, self.hi, self.log, self.resolution = float(lo), float(hi), log, resolution

    def value(self, position: int) -> float:
        u = position / self.resolution
        if self.log:
            return self.lo * (self.hi / self.lo) ** u
        return self.lo + (self.hi - self.lo) * u

    def position(self, value: float) -> int:
        value = min(max(value, self.lo), self.hi)
        if self.hi == self.lo:
            return 0
        if self.log:
            u = math.log(value / self.lo) / math.log(self.hi / self.lo)
        else:
            u = (value - self.lo) / (self.hi - self.lo)
        return round(u * self.resolution)


def show_error(label: QLabel, text: str) -> None:
    """Show ``text`` in ``label`` in the theme's colour for errors (the theme in use now)."""
    label.setStyleSheet(f"color: {theme_colors()['error']}; font-size: 8.5pt;")
    label.setText(text)
    label.show()


def hint_label(text: str) -> QLabel:
    """A small grey label for units, bounds and descriptions."""
    label = QLabel(text)
    label.setStyleSheet("color: palette(placeholder-text); font-size: 8.5pt;")
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


REFERENCE_LINE = 14  # pixels: the line spacing of the 9-point font sizes are given for


def font_scaled(widget: QWidget, pixels: int) -> int:
    """``pixels`` (a size chosen for a 9-point font, 14-pixel lines) in ``widget``'s font:
    larger where its font is larger, so text still fits."""
    return round(pixels * max(widget.fontMetrics().lineSpacing(), 1) / REFERENCE_LINE)


def lines_tall(widget, lines: int) -> int:
    """The height a text box (``QPlainTextEdit``) needs to show ``lines`` lines of its own
    font: the lines, the document's margins and the frame."""
    margin = widget.document().documentMargin() if hasattr(widget, "document") else 0
    frame = widget.frameWidth() if hasattr(widget, "frameWidth") else 0
    return math.ceil(lines * widget.fontMetrics().lineSpacing() + 2 * (margin + frame))


class FlowLayout(QLayout):
    """Widgets in a row that wraps onto more rows where the room is narrower than they
    are (Qt's flow layout example): a toolbar that never sets the window's width."""

    def __init__(self, parent=None, spacing: int = 6):
        super().__init__(parent)
        self._items: list = []
        self._spacing = spacing

    def addItem(self, item) -> None:  # noqa: N802 (Qt override)
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int):  # noqa: N802
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int):  # noqa: N802
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self):  # noqa: N802
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:  # noqa: N802
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802
        return self._place(QRect(0, 0, width, 0), move=False)

    def setGeometry(self, rect) -> None:  # noqa: N802
        super().setGeometry(rect)
        self._place(rect, move=True)

    def sizeHint(self):  # noqa: N802
        """All in one row."""
        hints = [item.sizeHint() for item in self._items]
        width = sum(h.width() for h in hints) + self._spacing * max(len(hints) - 1, 0)
        return QSize(width, max((h.height() for h in hints), default=0)).grownBy(
            self.contentsMargins())

    def minimumSize(self):  # noqa: N802
        size = QSize()
        for item in self._items:
            size = size.expandedTo(item.minimumSize())
        margins = self.contentsMargins()
        return size.grownBy(margins)

    @staticmethod
    def _size(item, room: int, width: int) -> QSize:
        """The size of ``item`` with ``room`` left in its row of ``width``: its preferred
        size (no wider than the row); a wrapped label takes the room left and the height
        it then needs."""
        size = item.sizeHint()
        least = item.minimumSize().width()
        if item.hasHeightForWidth() and room >= least:
            size.setWidth(room)
        else:
            size.setWidth(max(min(size.width(), width), least))
        if item.hasHeightForWidth():
            size.setHeight(item.heightForWidth(size.width()))
        return size

    def _place(self, rect, move: bool) -> int:
        """Lay the items out in rows within ``rect``; returns the height they take."""
        margins = self.contentsMargins()
        area = rect.marginsRemoved(margins)
        x, y, row = area.x(), area.y(), 0
        for item in self._items:
            size = self._size(item, area.right() + 1 - x, area.width())
            if x + size.width() > area.right() + 1 and row > 0:
                x, y, row = area.x(), y + row + self._spacing, 0
                size = self._size(item, area.width(), area.width())
            if move:
                item.setGeometry(QRect(QPoint(x, y), size))
            x += size.width() + self._spacing
            row = max(row, size.height())
        return y + row - rect.y() + margins.bottom()


# Pixels, whatever the font: a column of controls and the plots beside it shrink to no
# less, and together they fit in the least width of the window's views (320).
COLUMN_LEAST, PLOTS_LEAST = 150, 120


class Scrolled(QScrollArea):
    """A scroll area that asks for room for its content and the vertical scroll bar, so
    that the bar, where it shows, never pushes the content under a horizontal one."""

    def sizeHint(self):  # noqa: N802 (Qt override)
        hint = super().sizeHint()
        return hint.grownBy(QMargins(0, 0, self.verticalScrollBar().sizeHint().width(), 0))


def scrolling(content: QWidget, horizontal: bool = True) -> QScrollArea:
    """``content`` in a frameless scroll area: shown whole where there is room, scrolled
    where there is not, so its minimum size never sets the window's (which must fit its
    screen whatever the font). ``horizontal``: scroll sideways too, else never."""
    scroll = Scrolled()
    scroll.setWidget(content)
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QFrame.Shape.NoFrame)
    if not horizontal:
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    return scroll


def controls_beside_plots(panel: QWidget, controls: QVBoxLayout, width: int, *plots,
                          sizes=()) -> None:
    """Lay ``panel`` out: ``controls``, a column at most ``width`` wide (pixels at a 9-point
    font: :func:`font_scaled`), left of ``plots`` (several are stacked in a vertical
    splitter, ``sizes`` apart). The column is as wide as its controls where there is room;
    it scrolls where it is taller or wider than the room left (a model with many states, a
    large font), so it never makes the window larger than its screen."""
    column = QWidget()
    controls.setContentsMargins(6, 6, 6, 6)
    column.setLayout(controls)
    scroll = scrolling(column)
    bar = scroll.verticalScrollBar().sizeHint().width()
    widest = font_scaled(column, width) + bar
    scroll.setMinimumWidth(min(column.minimumSizeHint().width() + bar, widest, COLUMN_LEAST))
    scroll.setMaximumWidth(widest)
    view = plots[0]
    if len(plots) > 1:
        view = QSplitter(Qt.Orientation.Vertical)
        for plot in plots:
            view.addWidget(plot)
        view.setSizes(list(sizes))
    view.setMinimumWidth(PLOTS_LEAST)
    layout = QHBoxLayout(panel)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.addWidget(scroll)
    layout.addWidget(view, 1)


def fmt(value: float) -> str:
    return f"{value:.4g}"


class ResultPicker(QWidget):
    """The kept results of one kind (``"sweep"``, ...): which one a view shows, and Delete
    (undoable; a save removes it from the file).

    Signals: ``chosen(result)``: the result to show, ``None`` when none is left.
    """

    chosen = Signal(object)

    def __init__(self, lab, kind: str, parent=None):
        super().__init__(parent)
        self.lab, self.kind = lab, kind
        self.names = QComboBox()
        self.names.setObjectName(f"{kind}_results")
        self.delete_button = QPushButton("Delete")
        self.delete_button.setObjectName(f"delete_{kind}")
        self.delete_button.setToolTip(f"Delete this {kind}; Undo brings it back")
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(QLabel("shown"))
        row.addWidget(self.names, 1)
        row.addWidget(self.delete_button)
        self.names.activated.connect(lambda _: self.chosen.emit(self.current()))
        self.delete_button.clicked.connect(self.delete)
        lab.events.results.connect(self._results_changed)
        self._results_changed(None)

    def current(self):
        """The result shown (``None`` when there is none)."""
        return self.lab.results[self.kind].get(self.names.currentText())

    def delete(self) -> None:
        if self.current() is not None:
            self.lab.delete(self.kind, self.names.currentText())

    def _results_changed(self, event) -> None:
        if event is not None and event.kind not in (None, self.kind):
            return
        store, shown = self.lab.results[self.kind], self.names.currentText()
        added = event.name if event is not None and event.name in store else None
        pick = added or (shown if shown in store else next(reversed(store), ""))
        blocked = self.names.blockSignals(True)
        self.names.clear()
        self.names.addItems(list(store))
        self.names.setCurrentText(pick)
        self.names.blockSignals(blocked)
        self.delete_button.setEnabled(bool(store))
        if pick != shown or added:
            self.chosen.emit(store.get(pick))


class Throttle:
    """Calls ``fn`` at once when idle, then at most once per ``interval_ms`` (the last call wins).

    A plot fed by a stream redraws as fast as it can but never more than a frame's worth;
    a single change (a slider step) is drawn without waiting.
    """

    def __init__(self, fn, interval_ms: int = 16, parent=None):
        from PySide6.QtCore import QTimer

        self._fn = fn
        self._pending = False
        self._timer = QTimer(parent)
        self._timer.setSingleShot(True)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._fire)

    def __call__(self) -> None:
        if self._timer.isActive():
            self._pending = True
            return
        self._fn()
        self._timer.start()

    def _fire(self) -> None:
        if self._pending:
            self._pending = False
            self._fn()
            self._timer.start()

    def flush(self) -> None:
        """Run a pending call now."""
        if self._pending:
            self._pending = False
            self._fn()
