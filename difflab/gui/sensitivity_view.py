"""The sensitivity view: how each state of the current run responds to each parameter.

"Compute" runs :func:`difflab.sensitivity` on a worker thread for the current model,
values and run settings; the plot shows ``d y / d p`` (or ``d log y / d log p``) of the
chosen state against time, one curve per parameter.
"""

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFormLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ..app.lab import Lab
from ..app.sensitivities import SensitivityRequest, run_sensitivity
from .plots import PALETTE, configure_plot, plot_widget
from .widgets import ResultPicker, controls_beside_plots, hint_label
from .workers import TaskWorker, while_alive


class SensitivityView(QWidget):
    """Controls and the plot of the sensitivities of the current run.

    Signals: ``finished(record)`` when a computation ends.
    """

    finished = Signal(object)

    def __init__(self, lab: Lab, window=None, parent=None):
        super().__init__(parent)
        self.lab, self.window = lab, window
        self.record = None
        self.worker: TaskWorker | None = None
        self._error = ""
        self.params = QListWidget()
        self.params.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.state = QComboBox()
        self.state.setObjectName("sensitivity_state")
        self.normalized = QCheckBox("normalised: d log y / d log p")
        self.compute_button = QPushButton("Compute for the current run")
        self.compute_button.setObjectName("compute_sensitivity")
        self.status = hint_label("forward-mode sensitivities, computed in the same solve as "
                                 "the run (t1, dt, solver from the run settings)")
        self.status.setWordWrap(True)
        self.picker = ResultPicker(lab, "sensitivity")
        self.plot = plot_widget()
        self.curves: dict[str, pg.PlotDataItem] = {}
        self._build()
        self.compute_button.clicked.connect(self.compute)
        self.state.currentTextChanged.connect(lambda _: self.draw())
        self.normalized.toggled.connect(lambda _: self.draw())
        lab.events.model.connect(self._model_changed)
        self.picker.chosen.connect(self.show_record)
        self._model_changed(None)

    def _build(self) -> None:
        form = QFormLayout()
        form.addRow("state", self.state)
        column = QVBoxLayout()
        column.addWidget(QLabel("Parameters"))
        column.addWidget(self.params, 1)
        column.addLayout(form)
        column.addWidget(self.normalized)
        column.addWidget(self.compute_button)
        column.addWidget(self.status)
        column.addWidget(self.picker)
        column.addStretch(1)
        configure_plot(self.plot, "t", "sensitivity")
        self.plot.getPlotItem().addLegend(offset=(-10, 10), labelTextColor="#222")
        controls_beside_plots(self, column, 300, self.plot)

    def _model_changed(self, event) -> None:
        if event is not None and getattr(event, "catalog", False):
            return
        self.params.clear()
        for name in self.lab.specs:
            item = QListWidgetItem(name)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked)
            self.params.addItem(item)
        blocked = self.state.blockSignals(True)
        self.state.clear()
        self.state.addItems(self.lab.state_names)
        self.state.blockSignals(blocked)
        self.compute_button.setEnabled(bool(self.lab.specs))
        if not self.lab.specs:
            self.status.setText(f"{self.lab.model_name} has no parameters to differentiate by")
        self.record = None
        self.draw()

    def chosen(self) -> tuple[str, ...]:
        return tuple(self.params.item(i).text() for i in range(self.params.count())
                     if self.params.item(i).checkState() == Qt.CheckState.Checked)

    def compute(self) -> None:
        """Compute the sensitivities of the current run on a worker thread."""
        if self.worker is not None:
            return
        try:
            request = SensitivityRequest(self.lab.model, self.lab.model_name, self.lab.settings,
                                         self.chosen())
        except ValueError as error:
            self.lab.log(f"sensitivity: {error}", "error")
            self.status.setText(str(error))
            return
        self._error = ""
        worker = TaskWorker(lambda emit, stop: run_sensitivity(request), "sensitivity", self)
        worker.failed.connect(while_alive(self, lambda text: self._failed(request, text)))
        worker.done.connect(while_alive(self, lambda ok, record: self._done(worker, record)))
        self.worker = worker
        self.compute_button.setEnabled(False)
        self.status.setText(f"computing d y / d p for {', '.join(request.params)}…")
        if self.window is not None:
            self.window.start_worker("sensitivity", worker, progress=False)
        else:
            worker.start()

    def _done(self, worker: TaskWorker, record) -> None:
        self.worker = None
        self.compute_button.setEnabled(True)
        if self.window is not None:
            self.window.worker_done("sensitivity", worker)
        else:
            worker.wait()
        if record is None:
            self.status.setText(f"the sensitivities failed: {self._error or 'stopped'}. Try "
                                "a shorter t1, a smaller dt or a stiff solver in the run "
                                "settings, or fewer parameters.")
            return
        self.record = record
        name = self.lab.add_result("sensitivity", record)
        text = (f"{name}: d y / d p of {self.lab.name_of(record.model)} for "
                f"{', '.join(record.parameters)} "
                f"at {len(record.ts)} times")
        self.status.setText(text)
        self.lab.log(text)
        self.draw()
        self.finished.emit(record)

    def _failed(self, request, text: str) -> None:
        self._error = text
        self.lab.log(f"sensitivity of {request.model_name} failed: {text}", "error")

    def show_record(self, record) -> None:
        """Draw a kept sensitivity (one read from a session file, say; ``None``: none)."""
        if self.worker is None and record is not self.record:
            self.record = record
            self.draw()

    def draw(self) -> None:
        record = self.record
        state = self.state.currentText()
        wanted = record.parameters if record is not None and state in record.state_names else ()
        for name in [n for n in self.curves if n not in wanted]:
            self.plot.removeItem(self.curves.pop(name))
        normalized = self.normalized.isChecked()
        self.plot.getPlotItem().setLabel(
            "left", f"d log {state} / d log p" if normalized else f"d {state} / d p")
        for k, name in enumerate(wanted):
            curve = self.curves.get(name)
            if curve is None:
                curve = self.plot.plot(pen=pg.mkPen(PALETTE[k % len(PALETTE)], width=2),
                                       name=name)
                self.curves[name] = curve
            curve.setData(record.ts, record.curve(state, name, normalized=normalized),
                          connect="finite")
        self.plot.getPlotItem().enableAutoRange()
        self._say_if_blank(wanted, state, normalized)

    def _say_if_blank(self, wanted, state: str, normalized: bool) -> None:
        """Say why nothing is drawn when no curve has a finite value."""
        if not wanted or any(np.isfinite(np.asarray(c.yData, dtype=float)).any()
                             for c in self.curves.values() if c.yData is not None):
            return
        why = (f"{state} is zero, so its log has no sensitivity: uncheck normalised"
               if normalized else "the run left the finite numbers: try a shorter t1")
        self.status.setText(f"nothing to draw: every sensitivity of {state} is NaN or "
                            f"infinite ({why})")

    def export_columns(self) -> dict:
        if self.record is None:
            return {}
        state = self.state.currentText()
        columns = {"t": self.record.ts}
        for name in self.record.parameters:
            columns[f"d{state}/d{name}"] = self.record.curve(state, name)
        return columns
