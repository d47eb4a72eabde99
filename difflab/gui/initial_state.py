"""The initial-state panel: where runs start, one box per state (a text field of values
for models with many states); a change re-solves from there."""

from PySide6.QtWidgets import QFormLayout, QLineEdit, QPushButton, QVBoxLayout, QWidget

from ..app.lab import Lab
from .widgets import FloatSpinBox, hint_label

MAX_BOXES = 12  # more states than this are edited as one line of numbers


class InitialStatePanel(QWidget):
    """The lab's initial state; edits go to ``Lab.set_settings(y0=...)`` (``set_initial``)."""

    def __init__(self, lab: Lab, parent=None):
        super().__init__(parent)
        self.lab = lab
        self.boxes: dict[str, FloatSpinBox] = {}
        self.text = QLineEdit()
        self.text.setObjectName("initial_text")
        self.text.setToolTip("the initial state: numbers separated by commas or spaces, one "
                             "per state, then Enter")
        self.text.returnPressed.connect(self._text_entered)
        self.message = hint_label("")
        self.message.setWordWrap(True)
        self.own = QPushButton("Model's own")
        self.own.setToolTip("Start from the model's own initial state")
        self.own.clicked.connect(lambda: self.lab.set_settings(y0=None))
        self._form_box = QWidget()
        self._form = QFormLayout(self._form_box)
        self._form.setContentsMargins(0, 0, 0, 0)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self._form_box)
        layout.addWidget(self.text)
        layout.addWidget(self.message)
        layout.addWidget(self.own)
        layout.addStretch(1)
        lab.events.model.connect(self._model_changed)
        lab.events.settings.connect(lambda e: self.show_state())
        lab.events.params.connect(lambda e: self.show_state())  # the model's own may move
        self._rebuild()

    def _model_changed(self, event) -> None:
        if not getattr(event, "catalog", False):
            self._rebuild()

    def _rebuild(self) -> None:
        while self._form.rowCount():
            self._form.removeRow(0)
        self.boxes.clear()
        names = self.lab.state_names
        if len(names) <= MAX_BOXES:
            for name in names:
                box = FloatSpinBox()
                box.setObjectName(f"y0_{name}")
                box.setRange(-1e300, 1e300)
                box.valueChanged.connect(lambda v, n=name: self._edited(n, v))
                box.refused.connect(self.message.setText)
                self._form.addRow(name, box)
                self.boxes[name] = box
        self.text.setVisible(len(names) > MAX_BOXES)
        self.show_state()

    def show_state(self) -> None:
        """Show the state runs start from (the settings' ``y0``, else the model's own)."""
        state = self.lab.initial_state
        for box, value in zip(self.boxes.values(), state):
            blocked = box.blockSignals(True)
            box.setValue(value)
            box.blockSignals(blocked)
        self.text.setText(", ".join(f"{v:.6g}" for v in state))
        own = self.lab.settings.y0 is None
        self.own.setEnabled(not own)
        self.message.setText("the model's own" if own else "set here")

    def _edited(self, name: str, value: float) -> None:
        self.lab.set_initial(name, value)

    def _text_entered(self) -> None:
        names = self.lab.state_names
        cells = self.text.text().replace(",", " ").split()
        try:
            values = tuple(float(c) for c in cells)
            if len(values) != len(names):
                raise ValueError(f"{len(values)} numbers for {len(names)} states")
            self.lab.set_settings(y0=values)
        except ValueError as error:
            self.message.setText(f"refused: {error}")
