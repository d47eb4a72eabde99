"""The sweep view: one or two parameters (or initial values) over ranges, an observable,
a plot that fills in.

A 1-parameter sweep draws a line (an orbit diagram, small dots, for an observable keeping
several values per point such as ``maxima``), a 2-parameter sweep a heatmap (a chaos map
of ``lyapunov`` on a diverging colour map centred at 0), chunk by chunk as the worker
hands them over; clicking a point sets the parameters (and the initial state of a sweep
over initial values) to it, undoably, and the live solver draws its trajectory in the
preview beside the sweep. The kept sweeps (those of a session file too) are listed under
the controls; the chosen one is drawn.
"""

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ..app.lab import Lab
from ..app.sweeps import (
    REDUCTIONS,
    SweepRequest,
    SweepView,
    axis_title,
    drawable,
    run_sweep,
)
from .plots import configure_plot, state_color
from .sweep_axes import AxisEditor, sweepable
from .sweep_plot import SweepPlot
from .widgets import (
    FloatSpinBox,
    ResultPicker,
    Throttle,
    controls_beside_plots,
    hint_label,
)
from .workers import TaskWorker, while_alive

REDRAW_MS = 100  # a heatmap redraw costs tens of ms on a busy machine: ten a second at most


class SweepPanel(QWidget):
    """Sweep controls, the sweep plot and a preview of the clicked point's trajectory.

    Signals: ``finished(data)`` when a sweep ends (completed or stopped).
    """

    finished = Signal(object)

    def __init__(self, lab: Lab, window=None, parent=None):
        super().__init__(parent)
        self.lab, self.window = lab, window
        self.data = None
        self.worker: TaskWorker | None = None
        self.axis1 = AxisEditor("Parameter 1", lab, 0)
        self.axis2 = AxisEditor("Parameter 2", lab, 1)
        self.two_d = QCheckBox("sweep a second one (heatmap)")
        self.reduction, self.state = QComboBox(), QComboBox()
        self.reduction.addItems(REDUCTIONS)
        self.reduction.setCurrentText("max")
        self.after = FloatSpinBox()
        self.after.setRange(0.0, 1e300)
        self.after.setSpecialValueText("start")  # 0: every saved time counts
        self.after.setToolTip("only the saved times from this one on count (the transient)")
        self.run_button, self.stop_button = QPushButton("Run sweep"), QPushButton("Stop")
        self.run_button.setObjectName("run_sweep")
        self.stop_button.setEnabled(False)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.summary = hint_label("")
        self.summary.setWordWrap(True)
        self.picker = ResultPicker(lab, "sweep")
        self.shown = QComboBox()  # which observable of a kept sweep is drawn
        self.shown.setObjectName("sweep_observable_shown")
        self.plot = SweepPlot(self._unit)
        self.curve, self.image, self.colorbar = self.plot.curve, self.plot.image, self.plot.colorbar
        self.orbit, self.marker = self.plot.orbit, self.plot.marker
        self.preview = pg.PlotWidget()
        self._build()
        self.redraw = Throttle(self.draw, REDRAW_MS, self)
        self.two_d.toggled.connect(self.axis2.setEnabled)
        self.two_d.setChecked(len(lab.specs) > 1)
        self.axis2.setEnabled(self.two_d.isChecked())
        self.reduction.currentTextChanged.connect(self._reduction_chosen)
        self.run_button.clicked.connect(self.start)
        self.stop_button.clicked.connect(self.stop)
        self.plot.scene().sigMouseClicked.connect(self._clicked)
        lab.events.model.connect(self._model_changed)
        self.redraw_preview = Throttle(self._draw_preview, REDRAW_MS, self)
        lab.events.current.connect(lambda e: self.redraw_preview())
        self.picker.chosen.connect(self.show_data)
        self.shown.activated.connect(lambda i: self.show_data(self._shown_result(),
                                                              self.shown.itemData(i)))
        self._model_changed(None)

    def _build(self) -> None:
        observable = QHBoxLayout()
        observable.addWidget(self.reduction)
        observable.addWidget(QLabel("of"))
        observable.addWidget(self.state, 1)
        transient = QHBoxLayout()
        transient.addWidget(QLabel("after t ="))
        transient.addWidget(self.after, 1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.run_button, 1)
        buttons.addWidget(self.stop_button)
        column = QVBoxLayout()
        column.addWidget(self.axis1)
        column.addWidget(self.two_d)
        column.addWidget(self.axis2)
        column.addWidget(QLabel("Observable"))
        column.addLayout(observable)
        column.addLayout(transient)
        hint = hint_label("t1, dt and solver come from the run settings; maxima draws an "
                          "orbit diagram, lyapunov a chaos map")
        hint.setWordWrap(True)
        column.addWidget(hint)
        column.addLayout(buttons)
        column.addWidget(self.progress)
        column.addWidget(self.summary)
        column.addWidget(self.picker)
        shown = QHBoxLayout()
        self.shown_label = QLabel("show")
        shown.addWidget(self.shown_label)
        shown.addWidget(self.shown, 1)
        column.addLayout(shown)
        self._list_observables(None)
        column.addStretch(1)
        configure_plot(self.preview, "t", "state")
        self.preview.getPlotItem().setDownsampling(auto=True, mode="peak")
        self.preview.getPlotItem().setClipToView(True)
        self._ask_for_a_point()
        self.preview_curves: list[pg.PlotDataItem] = []
        controls_beside_plots(self, column, 330, self.plot, self.preview, sizes=(600, 220))

    def _model_changed(self, event) -> None:
        if event is not None and getattr(event, "catalog", False):
            return
        self.axis1.refresh()
        self.axis2.refresh()
        enough = len(sweepable(self.lab)) > 1
        self.two_d.setEnabled(enough)
        self.two_d.setChecked(self.two_d.isChecked() and enough)
        self.run_button.setEnabled(bool(sweepable(self.lab)))
        self.state.clear()
        self.state.addItems(self.lab.state_names)
        self._draw_preview()

    def _reduction_chosen(self, reduction: str) -> None:
        """The Lyapunov exponent has no state and no transient of its own (the run is one)."""
        for widget in (self.state, self.after):
            widget.setEnabled(reduction != "lyapunov")

    # -- running --------------------------------------------------------------------------

    def request(self) -> SweepRequest:
        axes = (self.axis1.axis(), self.axis2.axis()) if self.two_d.isChecked() else (self.axis1.axis(),)
        return SweepRequest(self.lab.model, self.lab.model_name, axes,
                            self.reduction.currentText(), self.state.currentText(),
                            self.lab.settings, after=self.after.value() or None)

    def start(self) -> None:
        """Start a sweep of the chosen axes on a worker thread."""
        if self.worker is not None:
            return
        try:
            request = self.request()
        except ValueError as error:
            self.lab.log(f"sweep: {error}", "error")
            self.summary.setText(str(error))
            return
        self.data, self._error = None, ""
        self._ask_for_a_point()
        self.plot.prepare(request)
        worker = TaskWorker(lambda emit, stop: run_sweep(
            request, lambda data, chunk: emit((data, chunk)), stop), "sweep", self)
        worker.label = f"sweep of {request.model_name}"
        worker.item.connect(while_alive(self, lambda item: worker is self.worker and self._chunk(item)))
        worker.failed.connect(while_alive(self, lambda text: self._failed(request, text)))
        worker.done.connect(while_alive(self, lambda ok, data: self._done(worker, ok, data)))
        self.worker = worker
        self.run_button.setEnabled(False)
        self.stop_button.setEnabled(True)
        self.progress.reset()
        self.summary.setText(f"{request.n_points} points: compiling…")
        if self.window is not None:
            self.window.start_worker("sweep", worker, progress=False)
        else:
            worker.start()
        names = " x ".join(f"{axis_title(a.name)} ({a.n})" for a in request.axes)
        self.lab.log(f"sweep of {request.model_name} over {names}: {request.n_points} points, "
                     f"observable {request.spec}")

    def stop(self) -> None:
        """Stop the sweep; control comes back within a second even if its computation
        does not (the window lets go of it)."""
        if self.worker is not None and self.window is not None:
            self.window.stop_task("sweep")
        elif self.worker is not None:
            self.worker.stop()

    def _chunk(self, item) -> None:
        data, chunk = item
        self.data = data
        failed = data.failures(chunk.start, chunk.stop)
        if failed:
            self.lab.log(f"{len(failed)} point(s) of the sweep failed; the first: "
                         f"{data.describe_failure(failed[0])}", "warning")
        self.redraw()

    def _done(self, worker: TaskWorker, ok: bool, data) -> None:
        if worker is not self.worker:  # a sweep let go of, ending late: dropped
            return
        if worker.abandoned and self.data is not None:  # keep what it had computed
            data = self.data.copy()
        self.worker = None
        self.run_button.setEnabled(True)
        self.stop_button.setEnabled(False)
        if self.window is not None:
            self.window.worker_done("sweep", worker)
        elif not worker.abandoned:
            worker.wait()
        if data is None:
            self.summary.setText(f"the sweep failed: {getattr(self, '_error', '') or 'stopped'}. "
                                 "Try fewer points, a narrower range, a shorter t1 or a stiff "
                                 "solver in the run settings.")
            return
        self.data = data
        self.redraw.flush()
        self.draw()
        self.progress.setValue(int(1000 * data.done / len(data.result)))
        name = self.lab.add_result("sweep", data.result)
        failed = len(data.failures())
        stats = data.result.stats
        rate = (f", {stats['points_per_second']:,.0f} points/s after "
                f"{stats['compile_time']:.1f} s compiling") if stats.get("computed") else ""
        text = (f"{name}: {data.done} of {len(data.result)} points{rate}"
                + (f", {failed} failed" if failed else "") + ("" if ok else " (stopped)"))
        self.summary.setText(text + _notes(data.result))
        self.lab.log(f"sweep {text}")
        self._log_notes(name, data.result)
        self.finished.emit(data.result)

    def _failed(self, request, text: str) -> None:
        self._error = text
        self.lab.log(f"sweep of {request.model_name} failed: {text}", "error")

    def show_data(self, result, observable: str | None = None) -> None:
        """Draw a kept sweep (one read from a session file, say), its ``observable`` (by
        name; by default its first), under the settings that made it; ``None`` clears
        the plot."""
        if self.worker is not None or (self.data is not None and result is self.data.result
                                       and observable in (None, self.data.observable)):
            return
        try:
            data = None if result is None else SweepView.of(
                result, self.lab.name_of(result.model), observable)
        except ValueError as error:
            self.lab.log(f"this sweep cannot be drawn: {error}", "warning")
            data = None
        self.data = data
        self._ask_for_a_point()  # the preview's point was of the sweep shown before
        self._list_observables(data)
        if data is None:
            self.plot.clear_sweep()
            self.summary.setText("")
            return
        self._show_settings(data)
        self.plot.prepare(data)
        self.draw()
        failed = len(data.failures())
        self.summary.setText(f"{data.model_name}, {data.spec}: {data.done} of "
                             f"{len(data.result)} points" + (f", {failed} failed" if failed else "")
                             + _notes(data.result))
        self._log_notes(data.result.name or data.model_name, data.result)

    def _log_notes(self, name: str, result) -> None:
        """Say in the log why an observable has no value at points that solved."""
        for line in _notes(result).splitlines()[1:]:
            self.lab.log(f"sweep {name}, {line}", "warning")

    def _shown_result(self):
        return None if self.data is None else self.data.result

    def _list_observables(self, data) -> None:
        """The observables of the sweep shown, in the "show" box (hidden for one)."""
        self.shown.clear()
        choices = {} if data is None else drawable(data.result, len(data.axes))
        for name, spec in choices.items():
            self.shown.addItem(spec if name in spec else f"{name}: {spec}", name)
        if data is not None:
            self.shown.setCurrentIndex(max(0, self.shown.findData(data.observable)))
        for widget in (self.shown, self.shown_label):
            widget.setVisible(len(choices) > 1)

    def _show_settings(self, data) -> None:
        """The controls as the sweep shown was made: its axes, observable and transient
        (those of another model are left as they are)."""
        if data.model_name != self.lab.model_name:
            return
        try:
            self.two_d.setChecked(len(data.axes) == 2)
            for editor, axis in zip((self.axis1, self.axis2), data.axes):
                editor.show_axis(axis)
        except ValueError:  # an axis this model cannot sweep here
            return
        if data.reduction in REDUCTIONS:
            self.reduction.setCurrentText(data.reduction)
        if data.state in self.lab.state_names:
            self.state.setCurrentText(data.state)
        self.after.setValue(data.after or 0.0)

    # -- drawing --------------------------------------------------------------------------

    def _unit(self, name: str) -> str:
        spec = self.lab.specs.get(name)
        return spec.unit if spec is not None else ""

    def draw(self) -> None:
        data = self.data
        if data is None:
            return
        if self.worker is not None:
            self.progress.setValue(int(1000 * data.done / len(data.result)))
            self.summary.setText(f"{data.done} / {len(data.result)} points")
        self.plot.draw(data, live=self.worker is not None)

    def _clicked(self, event) -> None:
        data = self.data
        vb = self.plot.getPlotItem().vb
        if data is None or not vb.sceneBoundingRect().contains(event.scenePos()):
            return
        pos = vb.mapSceneToView(event.scenePos())
        coords = (pos.x(),) if len(data.axes) == 1 else (pos.x(), pos.y())
        self.select_point(data.nearest(*coords))

    def _ask_for_a_point(self) -> None:
        self.preview.getPlotItem().setTitle("click a point of the sweep to simulate it",
                                            color="#444", size="9pt")

    def select_point(self, index: int) -> None:
        """Simulate sweep point ``index``: set the parameters (and initial state) to it,
        as one undoable step."""
        data = self.data
        if data.model_name != self.lab.model_name:
            self.lab.select_model(data.model_name)
        self.lab.set_settings(**data.run_settings())  # as the sweep simulated it
        self.lab.set_point(data.parameters(index), data.initial_state(index),
                           text="Simulate sweep point " + data.describe(index))
        shown = self.plot.mark(data, index)
        self.preview.getPlotItem().setTitle(f"{data.describe(index)}: {data.spec} = {shown}",
                                            color="#444", size="9pt")

    def showEvent(self, event) -> None:  # noqa: N802 (Qt override)
        super().showEvent(event)
        self._draw_preview()

    def _draw_preview(self) -> None:
        if not self.isVisible():  # drawn when the sweep view is shown
            return
        run = self.lab.current
        states = self.lab.layout.time_states
        for curve in self.preview_curves[len(states):]:
            curve.setData([], [])
        if run is None:
            return
        while len(self.preview_curves) < len(states):
            curve = pg.PlotDataItem()
            self.preview.addItem(curve)
            self.preview_curves.append(curve)
        for curve, state in zip(self.preview_curves, states):
            if state in run.state_names:
                j = run.state_names.index(state)
                names = self.lab.state_names
                curve.setPen(pg.mkPen(state_color(names.index(state), len(names)), width=1.5))
                curve.setData(run.ts, run.ys[:, j])

    def export_columns(self) -> dict:
        if self.data is None:
            return {}
        data = self.data
        columns = {a.name: np.asarray(data.result.space[a.name]) for a in data.axes}
        values = data.values
        if values.ndim == 2:  # an orbit diagram: one column per value of a point
            columns.update({f"{data.observable}_{j}": values[:, j] for j in range(values.shape[1])})
        else:
            columns[data.observable] = values
        columns["result"] = np.asarray(data.result.result)
        return columns


def _notes(result) -> str:
    """The sweep's notes on observables with no value at points that solved, one a line."""
    try:
        notes = result.notes
    except (KeyError, ValueError, TypeError):  # an observable the notes cannot read
        return ""
    return "".join(f"\n{name}: {why}" for name, why in notes.items())
