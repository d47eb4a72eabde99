"""A sweep of the Fields tab's model: a number of one field (mean, max, norm at t1) over a
parameter's range, and the final field of the point clicked on the curve.

Stop ends a sweep between two of its chunks; in the main window control comes back
within half a second even if a chunk does not (the window lets go of it, see
:mod:`.task_watch`). A finished sweep is the field session's, saved with the session and
shown again when the file is reopened."""

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from ..app.field_frames import image_rect
from ..app.field_sweeps import (
    DEFAULT_POINTS,
    OBSERVABLES,
    point_fields,
    request_of,
    sweep_request,
)
from ..app.fields import FieldSession
from .field_panels import FieldPanel
from .plots import configure_axes
from .widgets import FloatSpinBox, controls_beside_plots
from .workers import TaskWorker, error_text, while_alive

TASK = "field_sweep"


class FieldSweepWindow(QWidget):
    """Sweep a parameter of ``session``'s model; a click on a point of the curve shows
    that point's final field beside it. Signal ``picked(index)``."""

    picked = Signal(int)

    def __init__(self, session: FieldSession, host=None, parent=None):
        super().__init__(parent, Qt.WindowType.Window)
        self.session, self.host = session, host
        self.worker: TaskWorker | None = None
        self.request = self.result = None
        self.setWindowTitle("Field sweep")
        form = QFormLayout()
        self.param_box, self.field_box = QComboBox(), QComboBox()
        self.param_box.currentTextChanged.connect(self._param_chosen)
        self.low, self.high = FloatSpinBox(), FloatSpinBox()
        for box in (self.low, self.high):
            box.setRange(-1e12, 1e12)
        self.points = QSpinBox()
        self.points.setRange(2, 256)
        self.points.setValue(DEFAULT_POINTS)
        self.kind_box = QComboBox()
        self.kind_box.addItems(OBSERVABLES)
        self.sweep_button = QPushButton("Sweep")
        self.sweep_button.clicked.connect(self.sweep)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setToolTip("Stop the sweep (between two chunks of its points)")
        self.stop_button.setEnabled(False)
        self.stop_button.clicked.connect(self.stop)
        self.status = QLabel()
        self.status.setWordWrap(True)
        for label, widget in (("Parameter", self.param_box), ("from", self.low),
                              ("to", self.high), ("points", self.points),
                              ("Field", self.field_box), ("Number", self.kind_box)):
            form.addRow(label, widget)
        buttons = QHBoxLayout()
        buttons.addWidget(self.sweep_button)
        buttons.addWidget(self.stop_button)
        form.addRow(buttons)
        form.addRow(self.status)
        self.plots = pg.GraphicsLayoutWidget()
        self.curve_plot = self.plots.addPlot(row=0, col=0)
        self.curve = self.curve_plot.plot(pen=pg.mkPen(width=2))
        self.dots = pg.ScatterPlotItem(size=9, brush=pg.mkBrush(70, 130, 220))
        self.dots.sigClicked.connect(lambda _, spots, __: self.pick(spots[0].index()))
        self.curve_plot.addItem(self.dots)
        self.mark = pg.ScatterPlotItem(size=16, brush=None, pen=pg.mkPen((220, 60, 40), width=2))
        self.curve_plot.addItem(self.mark)  # the point picked
        self.panel: FieldPanel | None = None
        column = QVBoxLayout()
        column.addLayout(form)
        column.addStretch(1)
        controls_beside_plots(self, column, 220, self.plots)
        session.events.model.connect(lambda e: self.model_changed())
        session.events.sweep.connect(lambda e: self._show_kept())
        self.model_changed()
        self.resize(1000, 480)

    def model_changed(self) -> None:
        """Offer the session's model's parameters and fields; forget the last sweep."""
        session = self.session
        for box, items in ((self.param_box, list(session.specs)),
                           (self.field_box, list(session.field_names))):
            blocked = box.blockSignals(True)
            box.clear()
            box.addItems(items)
            box.blockSignals(blocked)
        self._param_chosen(self.param_box.currentText())
        self.result = None
        self._show_kept()

    def _clear(self) -> None:
        self.request = self.result = None
        for item in (self.curve, self.dots, self.mark):
            item.setData([], [])
        self._make_panel(self.session.field_names[0])

    def _show_kept(self) -> None:
        """Draw the session's sweep (one read from its file) where it is of the model and
        grid shown; nothing where it has none."""
        kept = self.session.sweep
        if (kept is not None and kept is self.result) or self.worker is not None:
            return
        self._clear()
        if kept is None or not _on_grid_of(kept, self.session):
            return
        try:
            self.show_result(request_of(kept, self.session.frames[0]), kept)
        except ValueError as error:
            self.status.setText(error_text(error))

    def _param_chosen(self, name: str) -> None:
        if name:
            lo, hi = self.session.specs[name].bounds
            self.low.setValue(lo)
            self.high.setValue(hi)

    def _make_panel(self, name: str) -> None:
        """The picture of a picked point's field (fields of two axes only)."""
        if self.panel is not None:
            self.plots.removeItem(self.panel.plot_item)
            self.panel = None
        if self.session.grid.ndim != 2:
            return
        self.panel = FieldPanel(self.plots, 1, name, None, self.session)
        self.panel.rect = QRectF(*image_rect(self.session.grid))
        self.panel.plot_item.hide()  # until a point is picked

    def sweep(self) -> None:
        """Run the sweep on a worker thread (its result replaces the last one)."""
        if self.worker is not None or self.session.grid.ndim != 2:
            self.status.setText("a sweep is under way" if self.worker else
                                "field sweeps show fields of two axes")
            return
        try:
            request = sweep_request(self.session, self.param_box.currentText(),
                                    self.low.value(), self.high.value(), self.points.value(),
                                    self.field_box.currentText(), self.kind_box.currentText())
        except ValueError as error:
            self.status.setText(error_text(error))
            return
        worker = TaskWorker(lambda emit, stop: request.run(stop, lambda *done: emit(done)),
                            TASK, self)
        worker.label = f"sweep of {self.session.model_name} over {request.param}"
        worker.item.connect(while_alive(self, lambda done: self.status.setText(
            f"sweeping {request.param}: {done[0]} of {done[1]} points…")))
        worker.failed.connect(while_alive(self, self.status.setText))
        worker.done.connect(while_alive(self, lambda ok, result: self._ended(worker, request,
                                                                             ok, result)))
        self.worker = worker
        self.status.setText(f"sweeping {request.param} over {len(request.values)} points…")
        self.sweep_button.setEnabled(False)
        self.stop_button.setEnabled(True)
        (self.host.start_worker(TASK, worker, progress=False) if self.host is not None
         else worker.start())

    def stop(self) -> None:
        """Stop the sweep under way; in the main window control comes back within half a
        second whatever its computation does."""
        if self.worker is not None and self.host is not None:
            self.host.stop_task(TASK)
        elif self.worker is not None:
            self.worker.stop()

    def _ended(self, worker: TaskWorker, request, ok: bool, result) -> None:
        if worker is not self.worker:  # one let go of, ending late
            return
        self.worker = None
        self.sweep_button.setEnabled(True)
        self.stop_button.setEnabled(False)
        if self.host is not None:
            self.host.worker_done(TASK, worker)
        elif not worker.abandoned:
            worker.wait(10_000)
            worker.deleteLater()
        if ok and result is not None:
            self.show_result(request, result)
            self.session.set_sweep(result)
        elif worker.stopping:
            self.status.setText("stopped")

    def show_result(self, request, result) -> None:
        """Draw a sweep's numbers over its parameter; the failed points are left out."""
        self.request, self.result = request, result
        x = np.asarray(request.values)
        y = np.where(np.asarray(result.result) == 0, result[request.name], np.nan)
        self.curve.setData(x, y, connect="finite")
        self.dots.setData(x, y)
        self.mark.setData([], [])
        configure_axes(self.curve_plot, request.param, request.label)
        self._make_panel(request.field)
        failed = int(np.sum(np.asarray(result.result) != 0))
        self.status.setText(f"{len(x)} points" + (f", {failed} failed" if failed else "")
                            + "; click a point to see its field")

    def pick(self, index: int) -> None:
        """Show the final field of sweep point ``index``."""
        request = self.request
        values = point_fields(self.result, index)[request.field]
        self.panel.plot_item.show()
        self.panel.plot_item.setTitle(f"{request.field} at {request.param} = "
                                      f"{request.values[index]:.4g}, t = {request.t1:g}")
        self.panel.show(values)
        self.mark.setData([request.values[index]], [self.result[request.name][index]])
        self.picked.emit(index)

    def shutdown(self) -> None:
        """Stop the sweep under way and, without a main window, wait for it."""
        worker, self.worker = self.worker, None
        if worker is not None:
            worker.stop()
        if worker is not None and self.host is None:
            worker.wait(60_000)



def _on_grid_of(result, session: FieldSession) -> bool:
    """Whether sweep ``result`` is of ``session``'s model on its grid."""
    model, grid = result.model, session.grid
    swept_on = getattr(model, "grid", None)
    return (getattr(type(model), "registry_name", None) == session.model_name
            and swept_on is not None
            and (swept_on.points, swept_on.extent) == (grid.points, grid.extent))
