"""The parameter panel: a slider and a spin box per parameter, with bounds, unit and description."""

import itertools
import math

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSlider,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ..app.lab import Lab, finite_bounds
from .widgets import FloatSpinBox, SliderScale, fmt, font_scaled, hint_label, show_error

_drags = itertools.count(1)
OPEN = 1e300  # what a parameter's spin box takes: any number, checked against the range


class ElidedLabel(QLabel):
    """One line of plain text that shows as much as fits, cut with "…" where the room is
    short; the whole text stays its ``text()`` (and the row's tooltip names it)."""

    def __init__(self, text: str = "", elide=Qt.TextElideMode.ElideRight, parent=None):
        super().__init__(text, parent)
        self._elide = elide
        self.setTextFormat(Qt.TextFormat.PlainText)

    def shown_text(self) -> str:
        """The text as drawn at the label's present width."""
        return self.fontMetrics().elidedText(self.text(), self._elide,
                                             self.contentsRect().width())

    def minimumSizeHint(self) -> QSize:  # Qt override: it may shrink to a few letters
        return QSize(self.fontMetrics().horizontalAdvance("xx…"), super().minimumSizeHint().height())

    def paintEvent(self, event):  # Qt override
        painter = QPainter(self)
        painter.setFont(self.font())
        painter.setPen(self.palette().color(self.foregroundRole()))
        painter.drawText(self.contentsRect(), int(self.alignment() | Qt.AlignmentFlag.AlignVCenter),
                         self.shown_text())


class ParameterRow(QWidget):
    """One parameter: name and unit, description, slider over its range, spin box.

    The slider is logarithmic where the range spans two decades or more. A value typed
    outside the range, or text that is not a number, is refused with the reason under the
    row; the range button shows min and max boxes that widen (or narrow) the range. Emits
    ``edited(name, value, merge_key)``; a drag of the slider shares one merge key, so it
    undoes as one step.
    """

    edited = Signal(str, float, object)

    def __init__(self, spec, value: float, parent=None):
        super().__init__(parent)
        self.spec = spec
        self._drag_key = None
        self._value = float(value)
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setObjectName(f"slider_{spec.name}")
        self.spin = FloatSpinBox(log_steps=spec.log_scale)
        self.spin.setObjectName(f"spin_{spec.name}")
        self.spin.setRange(-OPEN, OPEN)  # out-of-range values are refused in words, not clamped
        self.spin.setMinimumWidth(font_scaled(self.spin, 86))
        self.message = QLabel()
        self.message.setObjectName(f"message_{spec.name}")
        self.message.setWordWrap(True)
        self.message.hide()
        self._build_range_editor()
        self._build()
        self.set_range(*finite_bounds(spec))
        self.set_value(value)
        self.slider.valueChanged.connect(self._slider_moved)
        self.slider.sliderPressed.connect(self._drag_started)
        self.slider.sliderReleased.connect(self._drag_ended)
        self.spin.valueChanged.connect(self._spin_changed)
        self.spin.refused.connect(self.refuse)

    def _build_range_editor(self) -> None:
        self.range_button = QToolButton()
        self.range_button.setText("↔")
        self.range_button.setObjectName(f"range_{self.spec.name}")
        self.range_button.setCheckable(True)
        self.range_button.setToolTip("Set the slider's range (min and max)")
        self.range_min, self.range_max = FloatSpinBox(), FloatSpinBox()
        self.range_box = QWidget()
        row = QHBoxLayout(self.range_box)
        row.setContentsMargins(0, 0, 0, 0)
        for label, box in (("min", self.range_min), ("max", self.range_max)):
            box.setRange(-OPEN, OPEN)
            box.editingFinished.connect(self._range_edited)
            box.refused.connect(self.refuse)
            row.addWidget(QLabel(label))
            row.addWidget(box, 1)
        self.range_box.hide()
        self.range_button.toggled.connect(self.range_box.setVisible)

    def _build(self) -> None:
        """The name (cut with "…" only where the row is too narrow for it; the tooltip
        names it whole), its unit and description (cut first), then the slider's line."""
        spec = self.spec
        self.title = ElidedLabel(spec.name)
        self.title.setObjectName(f"name_{spec.name}")
        bold = self.title.font()
        bold.setBold(True)
        self.title.setFont(bold)
        self._tip_widgets = [self.title, self.slider]
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 2, 0, 2)
        grid.setVerticalSpacing(1)
        head = QHBoxLayout()
        head.setSpacing(font_scaled(self, 8))
        head.addWidget(self.title)
        if spec.unit:
            unit = hint_label(f"[{spec.unit}]")
            self._tip_widgets.append(unit)
            head.addWidget(unit)
        if spec.doc:
            doc = ElidedLabel(spec.doc)
            doc.setStyleSheet(hint_label("").styleSheet())
            doc.setAlignment(Qt.AlignmentFlag.AlignRight)
            doc.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
            self._tip_widgets.append(doc)
            head.addWidget(doc, 1)
        else:
            head.addStretch(1)
        self.lo_label, self.hi_label = hint_label(""), hint_label("")
        grid.addLayout(head, 0, 0, 1, 5)
        grid.addWidget(self.lo_label, 1, 0)
        grid.addWidget(self.slider, 1, 1)
        grid.addWidget(self.hi_label, 1, 2)
        grid.addWidget(self.spin, 1, 3)
        grid.addWidget(self.range_button, 1, 4)
        grid.addWidget(self.range_box, 2, 0, 1, 5)
        grid.addWidget(self.message, 3, 0, 1, 5)
        grid.setColumnStretch(1, 1)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def bounds(self) -> tuple[float, float]:
        """The slider's range."""
        return self.scale.lo, self.scale.hi

    def value(self) -> float:
        return self.spin.value()

    def set_range(self, lo: float, hi: float) -> None:
        """Let the slider (and typed values) span ``[lo, hi]``; ``ValueError`` if empty."""
        lo, hi = float(lo), float(hi)
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise ValueError(f"the range of {self.name} needs min < max, got [{lo:g}, {hi:g}]")
        log = self.spec.log_scale and lo > 0
        self.scale = SliderScale(lo, hi, log)
        self.slider.setRange(0, self.scale.resolution)
        self.spin.setSingleStep((hi - lo) / 100)
        self.spin.set_log_steps(log)
        self.lo_label.setText(fmt(lo))
        self.hi_label.setText(fmt(hi) + (" (log)" if log else ""))
        for box, v in ((self.range_min, lo), (self.range_max, hi)):
            blocked = box.blockSignals(True)
            box.setValue(v)
            box.blockSignals(blocked)
        self._set_tips()
        self.set_value(self._value)

    def _set_tips(self) -> None:
        spec, (lo, hi) = self.spec, self.bounds
        tip = f"{spec.name}: {spec.doc or 'no description'}\nrange [{lo:g}, {hi:g}]"
        tip += f" {spec.unit}" if spec.unit else ""
        tip += ", log scale" if self.scale.log else ""
        for widget in (*self._tip_widgets, self.spin):
            widget.setToolTip(tip)

    def set_value(self, value: float) -> None:
        """Show ``value`` without emitting ``edited``."""
        self._value = float(value)
        for widget, v in ((self.spin, value), (self.slider, self.scale.position(value))):
            blocked = widget.blockSignals(True)
            widget.setValue(v)
            widget.blockSignals(blocked)

    def refuse(self, reason: str) -> None:
        """Keep the value shown before, and say why the new one was refused."""
        self.set_value(self._value)
        show_error(self.message, reason)
        self.spin.setToolTip(reason)

    def _clear_message(self) -> None:
        if self.message.isVisible():
            self.message.hide()
            self._set_tips()

    def _accept(self, value: float, merge_key) -> None:
        self._value = float(value)
        self._clear_message()
        self.edited.emit(self.name, float(value), merge_key)

    def _slider_moved(self, position: int) -> None:
        value = self.scale.value(position)
        blocked = self.spin.blockSignals(True)
        self.spin.setValue(value)
        self.spin.blockSignals(blocked)
        self._accept(value, self._drag_key)

    def _spin_changed(self, value: float) -> None:
        lo, hi = self.bounds
        if not lo <= value <= hi:
            self.refuse(f"{value:g} is outside the range [{lo:g}, {hi:g}] of {self.name}; "
                        "widen it with ↔")
            return
        blocked = self.slider.blockSignals(True)
        self.slider.setValue(self.scale.position(value))
        self.slider.blockSignals(blocked)
        self._accept(value, None)

    def _range_edited(self) -> None:
        try:
            self.set_range(self.range_min.value(), self.range_max.value())
        except ValueError as error:
            self.refuse(str(error))
            self.set_range(*self.bounds)
            return
        self._clear_message()

    def _drag_started(self) -> None:
        self._drag_key = ("drag", next(_drags))

    def _drag_ended(self) -> None:
        self._drag_key = None


class ParameterPanel(QWidget):
    """The parameters of the lab's model; edits go to the lab, the lab's changes come back."""

    def __init__(self, lab: Lab, parent=None):
        super().__init__(parent)
        self.lab = lab
        self.rows: dict[str, ParameterRow] = {}
        self._ranges: dict[tuple[str, str], tuple[float, float]] = {}
        self._shown = lab.model_name
        self.title = QLabel()
        self.title.setWordWrap(True)
        self._rows_box = QWidget()
        self._rows_layout = QVBoxLayout(self._rows_box)
        self._rows_layout.setContentsMargins(4, 4, 4, 4)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(self._rows_box)
        reset = QPushButton("Reset to defaults")
        reset.setToolTip("Set every parameter back to the model's default (undoable)")
        reset.clicked.connect(lab.reset_params)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.title)
        layout.addWidget(scroll, 1)
        layout.addWidget(reset, 0, Qt.AlignmentFlag.AlignRight)
        lab.events.model.connect(self._model_changed)
        lab.events.params.connect(self._params_changed)
        self._rebuild()

    def _model_changed(self, event) -> None:
        if not getattr(event, "catalog", False):
            self._rebuild()

    def _rebuild(self) -> None:
        for name, row in self.rows.items():  # ranges the user set come back with the model
            self._ranges[self._shown, name] = row.bounds
        self._shown = self.lab.model_name
        for row in self.rows.values():
            row.setParent(None)
            row.deleteLater()
        while self._rows_layout.count():
            self._rows_layout.takeAt(0)
        self.rows.clear()
        cls = self.lab.model_class(self.lab.model_name)
        self.title.setText(f"<b>{self.lab.model_name}</b><br><span style='color:#6b6b6b'>"
                           f"{cls.description}</span>")
        for name, spec in self.lab.specs.items():
            row = ParameterRow(spec, self.lab.params[name])
            if (self._shown, name) in self._ranges:
                row.set_range(*self._ranges[self._shown, name])
            row.edited.connect(self._edited)
            self._rows_layout.addWidget(row)
            self.rows[name] = row
        if not self.rows:
            self._rows_layout.addWidget(hint_label("This model has no scalar parameters."))
        self._rows_layout.addStretch(1)

    def _edited(self, name: str, value: float, merge_key) -> None:
        try:
            self.lab.set_param(name, value, merge_key=merge_key)
        except ValueError as error:
            self.rows[name].set_value(self.lab.params[name])
            self.rows[name].refuse(str(error))

    def _params_changed(self, event) -> None:
        for name, value in event.changed.items():
            row = self.rows.get(name)
            if row is not None and row.value() != value:
                row.set_value(value)
