"""One axis of a sweep: a parameter or an initial-state component, its range and spacing.

The choices are the model's parameters, then (past a separator) the initial values of its
states, labelled ``x (initial)``; an axis over one is named ``y0.x``, as
:func:`difflab.sweep` names it.
"""

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QSpinBox,
)

from ..app.lab import Lab, finite_bounds
from ..app.sweeps import Axis, initial_axis, initial_component
from .widgets import FloatSpinBox

MAX_INITIAL_STATES = 24  # a model with more states (a field) offers no initial values here
DEFAULT_VALUES = 50


def sweepable(lab: Lab) -> list[tuple[str, str]]:
    """``(label, axis name)`` of what the lab's model can sweep: its parameters, then the
    initial values of its states (when they are few)."""
    choices = [(name, name) for name in lab.specs]
    states = lab.state_names
    if len(states) <= MAX_INITIAL_STATES:
        choices += [(f"{s} (initial)", initial_axis(s)) for s in states]
    return choices


class AxisEditor(QGroupBox):
    """Parameter (or initial value), range, number of values and log spacing of one axis."""

    def __init__(self, title: str, lab: Lab, default_index: int, parent=None):
        super().__init__(title, parent)
        self.lab = lab
        self._default_index = default_index
        self.name = QComboBox()
        self.lo, self.hi = FloatSpinBox(), FloatSpinBox()
        self.n = QSpinBox()
        self.n.setRange(1, 100_000)
        self.log = QCheckBox("log")
        for box in (self.lo, self.hi):
            box.setRange(-1e300, 1e300)
        form = QFormLayout(self)
        form.setContentsMargins(6, 4, 6, 4)
        form.addRow("parameter", self.name)
        row = QHBoxLayout()
        for w in (self.lo, QLabel("to"), self.hi):
            row.addWidget(w)
        form.addRow("range", row)
        row = QHBoxLayout()
        row.addWidget(self.n)
        row.addWidget(self.log)
        form.addRow("values", row)
        self.name.currentIndexChanged.connect(lambda i: self._chosen(self.name.itemData(i)))
        self.refresh()

    def refresh(self) -> None:
        """List what the lab's model can sweep; choose the default one."""
        blocked = self.name.blockSignals(True)
        self.name.clear()
        choices = sweepable(self.lab)
        for label, name in choices:
            if initial_component(name) is not None and self.name.count() == len(self.lab.specs) > 0:
                self.name.insertSeparator(self.name.count())
            self.name.addItem(label, name)
        if choices:
            default = choices[min(self._default_index, len(choices) - 1)][1]
            self.name.setCurrentIndex(self.name.findData(default))
        self.name.blockSignals(blocked)
        self._chosen(self.name.currentData())

    def _chosen(self, name: str | None) -> None:
        """A range to start from: a parameter's bounds, or around a state's initial value."""
        state = None if name is None else initial_component(name)
        spec = self.lab.specs.get(name)
        if spec is not None:
            lo, hi = finite_bounds(spec)
            log = spec.log_scale
        elif state is not None:
            value = self.lab.initial_state[self.lab.state_names.index(state)]
            lo, hi, log = value - max(1.0, abs(value)), value + max(1.0, abs(value)), False
        else:
            return
        self.lo.setValue(lo)
        self.hi.setValue(hi)
        self.log.setChecked(log)
        self.n.setValue(self.n.value() if self.n.value() > 1 else DEFAULT_VALUES)

    def choose(self, name: str) -> None:
        """Choose the parameter or initial value (``y0.x``) named ``name``."""
        index = self.name.findData(name)
        if index < 0:
            raise ValueError(f"{self.lab.model_name} cannot sweep {name!r}")
        self.name.setCurrentIndex(index)

    def show_axis(self, axis: Axis) -> None:
        """Show ``axis``: its parameter (``ValueError`` if this model has none of that
        name), range, number of values and spacing."""
        self.choose(axis.name)
        self.lo.setValue(axis.lo)
        self.hi.setValue(axis.hi)
        self.n.setValue(axis.n)
        self.log.setChecked(axis.log)

    def axis(self) -> Axis:
        return Axis(self.name.currentData() or "", self.lo.value(), self.hi.value(),
                    self.n.value(), self.log.isChecked())
