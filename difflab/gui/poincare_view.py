"""The Poincaré view: the crossings of a plane ``state = value`` by the current model's
flow, computed off the GUI thread by :func:`difflab.poincare` (each crossing located on
the solver's own step by an event).

Three plots: the section itself (two states at each crossing), the return map of one
state (each crossing's value against the next one's, with the diagonal) and the event
times (the time between crossings against the time of each).
"""

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QComboBox, QFormLayout, QPushButton, QVBoxLayout, QWidget

from ..app.lab import Lab
from ..app.poincare import DIRECTIONS, SectionRequest, compute_section, return_map, summary
from .phase_plane_view import LatestTask
from .plots import SafeViewBox, configure_plot
from .widgets import FloatSpinBox, controls_beside_plots, hint_label

DOT = dict(size=6, pen=None, brush=pg.mkBrush(31, 119, 180, 200))


def _plot() -> pg.PlotWidget:
    return pg.PlotWidget(viewBox=SafeViewBox())


class PoincareView(QWidget):
    """Section controls beside the section, its return map and its event times."""

    def __init__(self, lab: Lab, window=None, parent=None):
        super().__init__(parent)
        self.lab, self.window = lab, window
        self.section = None
        self.state, self.x_state, self.y_state, self.mapped = (QComboBox() for _ in range(4))
        self.direction = QComboBox()
        self.direction.addItems(DIRECTIONS)
        self.value, self.transient, self.t1 = FloatSpinBox(), FloatSpinBox(), FloatSpinBox()
        self.value.setRange(-1e300, 1e300)
        for box, start in ((self.transient, 50.0), (self.t1, 200.0)):
            box.setRange(0.0, 1e300)
            box.setValue(start)
        self.compute_button = QPushButton("Compute section")
        self.compute_button.setObjectName("compute_section")
        self.status = hint_label("")
        self.status.setWordWrap(True)
        self.plot, self.map_plot, self.times_plot = _plot(), _plot(), _plot()
        self.points = pg.ScatterPlotItem(**DOT)
        self.map_points = pg.ScatterPlotItem(**DOT)
        self.diagonal = pg.PlotDataItem(pen=pg.mkPen("#888888", width=1, style=pg.QtCore.Qt.DashLine))
        self.times = pg.PlotDataItem(pen=pg.mkPen("#d62728", width=1), symbol="o", symbolSize=4,
                                     symbolPen=None, symbolBrush="#d62728")
        self.plot.addItem(self.points)
        self.map_plot.addItem(self.diagonal)
        self.map_plot.addItem(self.map_points)
        self.times_plot.addItem(self.times)
        self.task = LatestTask(self, "poincare", self._done, self._failed)
        self._build()
        self.compute_button.clicked.connect(self.compute)
        for box in (self.x_state, self.y_state, self.mapped):
            box.activated.connect(lambda _: self.draw())
        lab.events.model.connect(self._model_changed)
        self._model_changed(None)

    def _build(self) -> None:
        form = QFormLayout()
        form.addRow("section: state", self.state)
        form.addRow("= value", self.value)
        form.addRow("crossed", self.direction)
        form.addRow("transient", self.transient)
        form.addRow("then watch", self.t1)
        form.addRow("plot", self.x_state)
        form.addRow("against", self.y_state)
        form.addRow("return map of", self.mapped)
        column = QVBoxLayout()
        column.addLayout(form)
        column.addWidget(self.compute_button)
        column.addWidget(self.status)
        column.addStretch(1)
        configure_plot(self.map_plot, "s(k)", "s(k+1)")
        configure_plot(self.times_plot, "t of crossing", "time to the next")
        controls_beside_plots(self, column, 300, self.plot, self.map_plot, self.times_plot,
                              sizes=(400, 250, 180))

    def _model_changed(self, event) -> None:
        if event is not None and getattr(event, "catalog", False):
            return
        names = list(self.lab.state_names)
        for box, pick in ((self.state, -1), (self.x_state, 0), (self.y_state, 1),
                          (self.mapped, 0)):
            box.clear()
            box.addItems(names)
            box.setCurrentIndex(min(pick % max(len(names), 1), len(names) - 1))
        self.section = None
        self.status.setText("choose a plane and compute its crossings")
        self.draw()

    def request(self) -> SectionRequest:
        lab = self.lab
        return SectionRequest(lab.model, lab.model_name, self.state.currentText(),
                              self.value.value(), DIRECTIONS[self.direction.currentText()],
                              self.t1.value(), self.transient.value())

    def compute(self) -> None:
        """Find the crossings on a worker thread."""
        try:
            request = self.request()
        except ValueError as error:
            self.status.setText(str(error))
            return
        self.status.setText(f"computing the crossings of {request.describe()}…")
        self.task.submit(lambda stop: (request, compute_section(request)))

    def _done(self, value) -> None:
        request, section = value
        if request.model_name != self.lab.model_name:
            return
        self.section = section
        self.status.setText(summary(section))
        self.lab.log(f"Poincaré section of {request.describe()}: {summary(section)}")
        self.draw()

    def _failed(self, text: str) -> None:
        self.status.setText(f"the section failed: {text}")

    def draw(self) -> None:
        """Draw the section, its return map and its event times (empty without one)."""
        section = self.section
        names = [box.currentText() for box in (self.x_state, self.y_state, self.mapped)]
        configure_plot(self.plot, names[0], names[1])
        if section is None or not all(n in section.state_names for n in names):
            for item in (self.points, self.map_points, self.diagonal, self.times):
                item.setData([], [])
            return
        self.points.setData(section[names[0]], section[names[1]])
        now, after = return_map(section, names[2])
        self.map_points.setData(now, after)
        self.map_plot.getPlotItem().setLabels(bottom=f"{names[2]}(k)", left=f"{names[2]}(k+1)")
        finite = np.concatenate([now, after])
        finite = finite[np.isfinite(finite)]
        span = [finite.min(), finite.max()] if finite.size else []
        self.diagonal.setData(span, span)
        self.times.setData(section.ts[:-1], section.return_times)

    def export_columns(self) -> dict:
        """The crossings: their times and states."""
        if self.section is None:
            return {}
        return {"t": np.asarray(self.section.ts),
                **{n: np.asarray(self.section[n]) for n in self.section.state_names}}
