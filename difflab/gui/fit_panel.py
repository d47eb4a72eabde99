"""The fit view: observations from a CSV, the parameters to fit, a live loss curve and overlay.

The fit runs on a worker thread; after each chunk of optimizer steps the loss curve
grows and the model at the best values so far is drawn over the data. At the end the
estimates are shown with their standard errors, chi-square, reduced chi-square, the
correlation matrix and the residuals; "Apply" sets them (undoable). When the data give no
noise level the user may type one; without it the errors are scaled by the reduced
chi-square, as the panel says. The kept fits (those of a session file too) are
listed above the table; the chosen one is shown.
"""

from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

import difflab as dl

from ..app.fits import METHODS, FitRequest, FitView, read_data, run_fit
from ..app.lab import Lab
from .fit_statistics import FitStatisticsView, ResidualPlot
from .plots import configure_plot, outside_legend, state_color
from .widgets import ResultPicker, Throttle, controls_beside_plots, hint_label
from .workers import TaskWorker, while_alive


class Log10Axis(pg.AxisItem):
    """An axis over log10 values, labelled with the values themselves (ticks at any range).

    pyqtgraph's own log mode leaves the axis unlabelled when the data span less than a
    decade, as a converging loss often does.
    """

    def tickStrings(self, values, scale, spacing):  # noqa: N802 (pyqtgraph override)
        return [f"{10.0 ** v:.3g}" for v in values]


def _stderr_text(err) -> str:
    """A standard error for the table: "…" while running, "not determined" if infinite."""
    if err is None:
        return "…"
    return "not determined" if np.isinf(err) else f"{err:.3g}"


class FitPanel(QWidget):
    """Fit controls, the loss curve, data against model, the estimates table.

    Signals: ``finished(record)`` when a fit ends (converged, failed or stopped).
    """

    finished = Signal(object)

    def __init__(self, lab: Lab, window=None, parent=None):
        super().__init__(parent)
        self.lab, self.window = lab, window
        self.data = None
        self.data_path = None
        self.record = None
        self.worker: TaskWorker | None = None
        self.load_button = QPushButton("Load CSV…")
        self.data_label = hint_label("no data: load a CSV with a t column and one column per "
                                     "observed state")
        self.data_label.setWordWrap(True)
        self.params = QListWidget()
        self.params.setObjectName("fit_params")
        self.params.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.method = QComboBox()
        self.method.addItems(METHODS)
        self.max_steps = QSpinBox()
        self.max_steps.setRange(0, 100_000)
        self.max_steps.setSpecialValueText("default")
        self.sigma = QLineEdit()
        self.sigma.setObjectName("fit_sigma")
        self.sigma.setPlaceholderText("unknown: errors scaled by reduced χ²")
        self.sigma.setToolTip("The noise standard deviation of the data, when they give none")
        self.fit_button, self.stop_button = QPushButton("Fit"), QPushButton("Stop")
        self.fit_button.setObjectName("run_fit")
        self.stop_button.setEnabled(False)
        self.status = hint_label("")
        self.status.setWordWrap(True)
        self.table = QTableWidget(0, 4)
        self.table.setHorizontalHeaderLabels(["parameter", "estimate", "± s.e.", "start"])
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.apply_button = QPushButton("Apply fitted values")
        self.apply_button.setEnabled(False)
        self.picker = ResultPicker(lab, "fit")
        self.loss_plot = pg.PlotWidget(axisItems={"left": Log10Axis("left")})
        self.overlay = pg.PlotWidget()
        self.residuals = ResidualPlot()
        self.statistics = FitStatisticsView()
        self._build()
        self.redraw = Throttle(self.draw, 50, self)
        self.load_button.clicked.connect(lambda: self.load_data())
        self.fit_button.clicked.connect(self.start)
        self.stop_button.clicked.connect(self.stop)
        self.apply_button.clicked.connect(self.apply)
        lab.events.model.connect(self._model_changed)
        self.picker.chosen.connect(self.show_record)
        self._model_changed(None)

    def _build(self) -> None:
        form = QFormLayout()
        form.addRow("method", self.method)
        form.addRow("max steps", self.max_steps)
        form.addRow("noise σ", self.sigma)
        buttons = QHBoxLayout()
        buttons.addWidget(self.fit_button, 1)
        buttons.addWidget(self.stop_button)
        column = QVBoxLayout()
        column.addWidget(self.load_button)
        column.addWidget(self.data_label)
        column.addWidget(QLabel("Parameters to fit"))
        column.addWidget(self.params, 1)
        column.addLayout(form)
        column.addLayout(buttons)
        column.addWidget(self.status)
        column.addWidget(self.picker)
        column.addWidget(self.table, 1)
        column.addWidget(self.statistics)
        column.addWidget(self.apply_button)
        configure_plot(self.loss_plot, "optimizer step", "loss ½ χ² (log scale)")
        configure_plot(self.overlay, "t", "observed / model")
        outside_legend(self.overlay.getPlotItem())
        self.loss_curve = self.loss_plot.plot(pen=pg.mkPen("#d62728", width=2))
        self.data_items: dict[str, pg.PlotDataItem] = {}
        self.model_items: dict[str, pg.PlotDataItem] = {}
        controls_beside_plots(self, column, 380, self.loss_plot, self.overlay, self.residuals,
                              sizes=(220, 420, 220))

    def _model_changed(self, event) -> None:
        if event is not None and getattr(event, "catalog", False):
            return
        if self.worker is None and (self.record is None
                                    or self.record.model_name != self.lab.model_name):
            self.record = None  # the previous model's fit is not this model's
            self.apply_button.setEnabled(False)
            self.status.setText("")
            self.draw()
        self.params.clear()
        for name, spec in self.lab.specs.items():
            item = QListWidgetItem(name)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked)
            item.setToolTip(spec.doc)
            self.params.addItem(item)
        self.fit_button.setEnabled(bool(self.lab.specs) and self.data is not None)

    def chosen(self) -> tuple[str, ...]:
        return tuple(self.params.item(i).text() for i in range(self.params.count())
                     if self.params.item(i).checkState() == Qt.CheckState.Checked)

    def set_chosen(self, names) -> None:
        for i in range(self.params.count()):
            item = self.params.item(i)
            item.setCheckState(Qt.CheckState.Checked if item.text() in names
                               else Qt.CheckState.Unchecked)

    # -- data -------------------------------------------------------------------------------

    def load_data(self, path: str | None = None) -> bool:
        """Read observations from a CSV file (a dialog when ``path`` is not given)."""
        if path is None:
            path, _ = QFileDialog.getOpenFileName(self, "Load observations", "",
                                                  "CSV files (*.csv);;All files (*)")
            if not path:
                return False
        try:
            data = read_data(path)
        except (OSError, ValueError) as error:
            self.lab.log(f"cannot read observations from {path}: {error}", "error")
            return False
        self.set_data(data, path)
        return True

    def set_data(self, data, path=None) -> None:
        self.data, self.data_path = data, path
        name = Path(path).name if path else "data"
        sigma = "noise given" if data.sigma is not None else "noise unknown"
        self.sigma.setEnabled(data.sigma is None)
        if data.sigma is not None:
            self.sigma.clear()
        self.data_label.setText(f"{name}: {len(data.t)} times of {', '.join(data.states)} "
                                f"({sigma})")
        self.fit_button.setEnabled(bool(self.lab.specs))
        self.record = None
        self.draw()
        self.lab.log(f"loaded {len(data.t)} observations of {', '.join(data.states)} from {name}")

    # -- running ------------------------------------------------------------------------------

    def start(self) -> None:
        if self.worker is not None or self.data is None:
            return
        try:
            request = FitRequest(self.lab.model, self.lab.model_name, self.data, self.chosen(),
                                 self.lab.settings, self.method.currentText(),
                                 self.max_steps.value() or None, self.typed_sigma())
        except ValueError as error:
            self.lab.log(f"fit: {error}", "error")
            return
        worker = TaskWorker(lambda emit, stop: run_fit(request, emit, stop), "fit", self)
        worker.item.connect(self._progress)
        worker.failed.connect(lambda text: self.lab.log(f"fit of {request.model_name}: {text}",
                                                        "error"))
        worker.done.connect(while_alive(self, lambda ok, view: self._done(worker, view)))
        self.worker = worker
        self.record = None
        self.fit_button.setEnabled(False)
        self.stop_button.setEnabled(True)
        self.apply_button.setEnabled(False)
        self.status.setText("compiling the fit…")
        self.draw()
        if self.window is not None:
            self.window.start_worker("fit", worker, progress=False)
        else:
            worker.start()
        self.lab.log(f"fitting {', '.join(request.params)} of {request.model_name} to "
                     f"{len(request.data.t)} observations ({request.method})")

    def typed_sigma(self) -> float | None:
        """The noise level typed in (``None``: none); ValueError if it is not a number."""
        text = self.sigma.text().strip()
        if not text or not self.sigma.isEnabled():
            return None
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"the noise sigma must be a number, not {text!r}") from None

    def stop(self) -> None:
        if self.worker is not None:
            self.worker.stop()

    def _progress(self, record) -> None:
        self.record = record
        self.redraw()

    def _done(self, worker: TaskWorker, record) -> None:
        self.worker = None
        self.fit_button.setEnabled(True)
        self.stop_button.setEnabled(False)
        if self.window is not None:
            self.window.worker_done("fit", worker)
        else:
            worker.wait()
        if record is None:
            self.status.setText("the fit failed (see the log)")
            return
        self.record = record
        self.redraw.flush()
        self.draw()
        name = self.lab.add_result("fit", record.fit)
        self.apply_button.setEnabled(bool(record.best))
        self.lab.log(f"{name}: {record.statistics()}; " + ", ".join(
            f"{n} = {v:.6g} ± {e:.2g}" if e is not None else f"{n} = {v:.6g}"
            for n, v, e, _ in record.estimates()), "info" if record.good else "warning")
        self.finished.emit(record.fit)

    def apply(self) -> None:
        """Set the model's parameters to the fitted values (undoable)."""
        if self.record is None or not self.record.best:
            return
        if self.record.model_name != self.lab.model_name:
            self.lab.select_model(self.record.model_name)
        self.lab.set_params(self.record.best, text="Apply fitted values")

    def show_record(self, fit) -> None:
        """Show a kept fit (one read from a session file, say; ``None``: none); its model
        curve is computed off-thread."""
        if self.worker is not None or (self.record is not None and fit is self.record.fit):
            return
        record = None if fit is None else FitView.of(fit, self.lab.name_of(fit.start_model))
        self.record = record
        self.apply_button.setEnabled(record is not None and bool(record.best))
        if record is None:
            self.status.setText("")
            self.draw()
            return
        self.data = record.data
        self.data_label.setText(f"{len(self.data.t)} observations of "
                                f"{', '.join(self.data.states)} (kept with the fit)")
        self._show_settings(record)
        self.draw()
        if record.curve is None and record.best and isinstance(record.model, dl.Model):
            worker = TaskWorker(lambda emit, stop: record.complete(), "fit_curve", self)
            worker.done.connect(while_alive(self, lambda ok, _: self._curve_ready(worker, record)))
            if self.window is not None:
                self.window.start_worker("fit_curve", worker, progress=False)
            else:
                worker.start()

    def _show_settings(self, record) -> None:
        """The controls as the fit shown was made: its parameters, method, step limit and
        noise level (those of another model's fit are left as they are)."""
        fit = record.fit
        if fit is None or record.model_name != self.lab.model_name:
            return
        self.set_chosen(fit.names)
        if fit.method in METHODS:
            self.method.setCurrentText(fit.method)
        self.max_steps.setValue(int(fit.max_steps or 0))
        sigma = fit.data.sigma
        self.sigma.setEnabled(sigma is None)  # the fit's data carry their noise level
        level = np.unique(np.asarray(sigma, dtype=float)) if sigma is not None else ()
        self.sigma.setText(f"{level[0]:.6g}" if len(level) == 1 else "")
        self.fit_button.setEnabled(bool(self.lab.specs))

    def _curve_ready(self, worker, record) -> None:
        if self.window is not None:
            self.window.worker_done("fit_curve", worker)
        else:
            worker.wait()
        if record is self.record:
            self.draw()

    # -- drawing -----------------------------------------------------------------------------

    def draw(self) -> None:
        record = self.record
        losses = np.asarray(record.losses if record is not None else [], dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            logs = np.where(losses > 0, np.log10(losses), np.nan)
        self.loss_curve.setData(np.arange(1, len(losses) + 1), logs, connect="finite")
        self._draw_overlay()
        self._fill_table()
        stats = record.stats if record is not None and self.worker is None else None
        self.statistics.show_statistics(stats)
        self.residuals.show_statistics(stats, self.lab.state_names)
        if record is not None and self.worker is not None and len(losses):
            self.status.setText(f"step {len(losses)}: loss {losses[-1]:.6g}")
        elif record is not None and record.fit is not None:
            self.status.setText(record.statistics())

    def _draw_overlay(self) -> None:
        data = self.data
        names = self.lab.state_names
        curve = self.record.curve if self.record is not None else None
        shown = set(data.states) if data is not None else set()
        for key in [k for k in self.data_items if k not in shown]:
            self.overlay.removeItem(self.data_items.pop(key))
        for key in [k for k in self.model_items if k not in shown or curve is None]:
            self.overlay.removeItem(self.model_items.pop(key))
        if data is None:
            return
        for j, state in enumerate(data.states):
            color = state_color(names.index(state) if state in names else j, len(names))
            item = self.data_items.get(state)
            if item is None:
                item = self.overlay.plot(pen=None, symbol="o", symbolSize=6, symbolPen=None,
                                         symbolBrush=color, name=f"{state} (data)")
                self.data_items[state] = item
            item.setData(data.t, data.y[:, j])
            if curve is not None and state in self.record.state_names:
                line = self.model_items.get(state)
                if line is None:
                    line = self.overlay.plot(pen=pg.mkPen(color, width=2), name=f"{state} (model)")
                    self.model_items[state] = line
                k = self.record.state_names.index(state)
                line.setData(curve[0], curve[1][:, k])

    def _fill_table(self) -> None:
        rows = self.record.estimates() if self.record is not None else []
        self.table.setRowCount(len(rows))
        header = self.table.horizontalHeader().height()
        self.table.setMinimumHeight(min(header + 26 * max(len(rows), 1) + 4, 240))
        for i, (name, value, err, start) in enumerate(rows):
            cells = [name, f"{value:.6g}", _stderr_text(err), f"{start:.4g}"]
            for j, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if j:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(i, j, item)

    def export_columns(self) -> dict:
        if self.record is None or not self.record.losses:
            return {}
        params = np.asarray(self.record.parameters, dtype=float)
        columns = {"step": np.arange(1, len(self.record.losses) + 1),
                   "loss": np.asarray(self.record.losses)}
        columns.update({n: params[:, k] for k, n in enumerate(self.record.names)})
        return columns
