"""The parameter panel: a slider and a spin box per parameter, with bounds, unit and description."""

import itertools

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSlider,
    QVBoxLayout,
    QWidget,
)

from ..app.lab import Lab, finite_bounds
from .widgets import FloatSpinBox, SliderScale, fmt, hint_label

_drags = itertools.count(1)


class ParameterRow(QWidget):
    """One parameter: name and unit, description, slider between its bounds, spin box.

    The slider is logarithmic where the bounds span two decades or more. Emits
    ``edited(name, value, merge_key)``; a drag of the slider shares one merge key, so it
    undoes as one step.
    """

    edited = Signal(str, float, object)

    def __init__(self, spec, value: float, parent=None):
        super().__init__(parent)
        self.spec = spec
        lo, hi = finite_bounds(spec)
        self.scale = SliderScale(lo, hi, spec.log_scale)
        self._drag_key = None
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setRange(0, self.scale.resolution)
        self.slider.setObjectName(f"slider_{spec.name}")
        self.spin = FloatSpinBox(log_steps=spec.log_scale)
        self.spin.setObjectName(f"spin_{spec.name}")
        self.spin.setRange(lo, hi)
        self.spin.setSingleStep((hi - lo) / 100 if hi > lo else 0.1)
        self.spin.setMinimumWidth(86)
        self._build(lo, hi)
        self.set_value(value)
        self.slider.valueChanged.connect(self._slider_moved)
        self.slider.sliderPressed.connect(self._drag_started)
        self.slider.sliderReleased.connect(self._drag_ended)
        self.spin.valueChanged.connect(self._spin_changed)

    def _build(self, lo: float, hi: float) -> None:
        spec = self.spec
        title = QLabel(f"<b>{spec.name}</b>" + (f" <span style='color:#6b6b6b'>[{spec.unit}]</span>"
                                                  if spec.unit else ""))
        scale = "log scale" if spec.log_scale else ""
        tip = f"{spec.name}: {spec.doc or 'no description'}\nbounds [{lo:g}, {hi:g}]"
        tip += f" {spec.unit}" if spec.unit else ""
        tip += f", {scale}" if scale else ""
        for widget in (title, self.slider, self.spin):
            widget.setToolTip(tip)
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 2, 0, 2)
        grid.setVerticalSpacing(1)
        head = QHBoxLayout()
        head.addWidget(title)
        head.addStretch(1)
        if spec.doc:
            doc = hint_label(spec.doc)
            doc.setToolTip(tip)
            head.addWidget(doc)
        grid.addLayout(head, 0, 0, 1, 4)
        grid.addWidget(hint_label(fmt(lo)), 1, 0)
        grid.addWidget(self.slider, 1, 1)
        grid.addWidget(hint_label(fmt(hi) + (" (log)" if spec.log_scale else "")), 1, 2)
        grid.addWidget(self.spin, 1, 3)
        grid.setColumnStretch(1, 1)

    @property
    def name(self) -> str:
        return self.spec.name

    def value(self) -> float:
        return self.spin.value()

    def set_value(self, value: float) -> None:
        """Show ``value`` without emitting ``edited``."""
        for widget, v in ((self.spin, value), (self.slider, self.scale.position(value))):
            blocked = widget.blockSignals(True)
            widget.setValue(v)
            widget.blockSignals(blocked)

    def _slider_moved(self, position: int) -> None:
        value = self.scale.value(position)
        blocked = self.spin.blockSignals(True)
        self.spin.setValue(value)
        self.spin.blockSignals(blocked)
        self.edited.emit(self.name, float(value), self._drag_key)

    def _spin_changed(self, value: float) -> None:
        blocked = self.slider.blockSignals(True)
        self.slider.setValue(self.scale.position(value))
        self.slider.blockSignals(blocked)
        self.edited.emit(self.name, float(value), None)

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
            self.lab.log(str(error), "error")
            self.rows[name].set_value(self.lab.params[name])

    def _params_changed(self, event) -> None:
        for name, value in event.changed.items():
            row = self.rows.get(name)
            if row is not None and row.value() != value:
                row.set_value(value)
