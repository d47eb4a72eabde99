"""The phase plane view: nullclines, direction field, equilibria and orbits of two states.

The plane (:mod:`difflab.app.phase_plane`) is computed on a worker thread for the current
model and values, again whenever a parameter, the axes, the box or a held state changes.
A click in the plot (or the point typed in the two boxes and "Run from point") simulates
from that point forward (solid) and backward in time (dashed) for the run's ``t1``.
"""

from collections.abc import Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ..app.lab import Lab
from ..app.phase_plane import (
    PhasePlaneRequest,
    compute_plane,
    default_box,
    orbit_from,
    stability_group,
)
from .plots import configure_plot, plot_widget
from .widgets import FloatSpinBox, controls_beside_plots, hint_label
from .workers import TaskWorker, while_alive

NULLCLINE_COLORS = ("#d62728", "#1f77b4")
ORBIT_COLOR = "#2ca02c"
# stability group -> (legend text, symbol, filled)
MARKERS = {"stable": ("stable", "o", True), "unstable": ("unstable", "o", False),
           "saddle": ("saddle", "x", True), "other": ("centre / other", "d", False)}


def float_box(value: float = 0.0) -> FloatSpinBox:
    box = FloatSpinBox()
    box.setRange(-1e300, 1e300)
    box.setValue(value)
    return box


class LatestTask:
    """Runs one task at a time on a :class:`TaskWorker`; a task submitted while one runs
    replaces any other waiting one and starts when it ends (only the newest matters).
    A failure is logged and given to ``failed(text)`` (the panel says it in words)."""

    def __init__(self, owner: QWidget, name: str, done: Callable[[object], None],
                 failed: Callable[[str], None] | None = None):
        self.owner, self.name, self._done = owner, name, done
        self._failed = failed
        self.worker: TaskWorker | None = None
        self._pending = None

    @property
    def busy(self) -> bool:
        return self.worker is not None or self._pending is not None

    def submit(self, task: Callable[[Callable[[], bool]], object]) -> None:
        if self.worker is not None:
            self._pending = task
            self.worker.stop()
            return
        worker = TaskWorker(lambda emit, stop: task(stop), self.name, self.owner)
        worker.failed.connect(while_alive(self.owner, self._report))
        worker.done.connect(while_alive(self.owner, lambda ok, value: self._finished(worker, ok, value)))
        self.worker = worker
        window = getattr(self.owner, "window", None)
        if window is not None:
            window.start_worker(self.name, worker, progress=False)
        else:
            worker.start()

    def _report(self, text: str) -> None:
        self.owner.lab.log(f"{self.name} failed: {text}", "error")
        if self._failed is not None:
            self._failed(text)

    def _finished(self, worker: TaskWorker, ok: bool, value) -> None:
        self.worker = None
        window = getattr(self.owner, "window", None)
        if window is not None:
            window.worker_done(self.name, worker)
        else:
            worker.wait()
        pending, self._pending = self._pending, None
        if pending is not None:
            self.submit(pending)
        elif ok and value is not None:
            self._done(value)


class PhasePlaneView(QWidget):
    """Controls and the plot of the phase plane of two states of the current model.

    Signals: ``finished(plane)`` when a plane is drawn, ``orbit_drawn(orbit)`` when an
    orbit is.
    """

    finished = Signal(object)
    orbit_drawn = Signal(object)

    def __init__(self, lab: Lab, window=None, parent=None):
        super().__init__(parent)
        self.lab, self.window = lab, window
        self.plane = self.orbit = None
        self.point: tuple[float, float] | None = None
        self._stale, self._fit_next_run = True, True
        self.task = LatestTask(self, "phase plane", self._plane_done, self._failed)
        self.orbit_task = LatestTask(self, "phase orbit", self._orbit_done, self._failed)
        self.x_axis, self.y_axis = QComboBox(), QComboBox()
        self.x_axis.setObjectName("phase_plane_x")
        self.y_axis.setObjectName("phase_plane_y")
        self.x_range = (float_box(-1.0), float_box(1.0))
        self.y_range = (float_box(-1.0), float_box(1.0))
        self.fit_button = QPushButton("Fit the box to the run")
        self.held_form, self.held = QFormLayout(), {}
        self.held_label = QLabel("Other states held at")
        self.start_x, self.start_y = float_box(), float_box()
        self.orbit_button = QPushButton("Run from point")
        self.clear_button = QPushButton("Clear orbit")
        self.status = hint_label("click the plane to run from a point, forward (solid) and "
                                 "backward (dashed) in time")
        self.status.setWordWrap(True)
        self.plot = plot_widget()
        self._build()
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(150)
        self._timer.timeout.connect(self.compute)
        for box in (*self.x_range, *self.y_range):
            box.valueChanged.connect(lambda _: self.schedule())
        self.x_axis.currentTextChanged.connect(self._axes_chosen)
        self.y_axis.currentTextChanged.connect(self._axes_chosen)
        self.fit_button.clicked.connect(self.fit_box)
        self.orbit_button.clicked.connect(
            lambda: self.run_orbit(self.start_x.value(), self.start_y.value()))
        self.clear_button.clicked.connect(self.clear_orbit)
        self.plot.scene().sigMouseClicked.connect(self._clicked)
        lab.events.model.connect(self._model_changed)
        lab.events.params.connect(lambda event: self.schedule())
        lab.events.current.connect(self._run_arrived)
        self._model_changed(None)

    # -- layout -----------------------------------------------------------------------

    def _build(self) -> None:
        form = QFormLayout()
        form.addRow("x axis", self.x_axis)
        form.addRow("y axis", self.y_axis)
        ranges = QGridLayout()
        for row, (name, (lo, hi)) in enumerate((("x", self.x_range), ("y", self.y_range))):
            ranges.addWidget(QLabel(f"{name} from"), row, 0)
            ranges.addWidget(lo, row, 1)
            ranges.addWidget(QLabel("to"), row, 2)
            ranges.addWidget(hi, row, 3)
        start = QHBoxLayout()
        start.addWidget(self.start_x)
        start.addWidget(self.start_y)
        column = QVBoxLayout()
        column.addLayout(form)
        column.addLayout(ranges)
        column.addWidget(self.fit_button)
        column.addWidget(self.held_label)
        column.addLayout(self.held_form)
        column.addWidget(QLabel("Orbit from (x, y)"))
        column.addLayout(start)
        column.addWidget(self.orbit_button)
        column.addWidget(self.clear_button)
        column.addWidget(self.status)
        column.addStretch(1)
        configure_plot(self.plot, "x", "y", grid=False)
        item = self.plot.getPlotItem()
        item.addLegend(offset=(-10, 10), labelTextColor="#222", brush=pg.mkBrush(255, 255, 255, 220))
        self.arrows = item.plot(pen=pg.mkPen("#9a9a9a", width=1), connect="pairs")
        self.nullclines = [item.plot(pen=pg.mkPen(c, width=2.5), connect="pairs", name=" ")
                           for c in NULLCLINE_COLORS]
        self.backward_curve = item.plot(pen=pg.mkPen(ORBIT_COLOR, width=2,
                                                     style=Qt.PenStyle.DashLine),
                                        name="backward")
        self.forward_curve = item.plot(pen=pg.mkPen(ORBIT_COLOR, width=2), name="forward")
        self.start_marker = pg.ScatterPlotItem(size=8, brush=pg.mkBrush(ORBIT_COLOR),
                                               pen=pg.mkPen("#111"))
        item.addItem(self.start_marker)
        self.markers = {}
        for group, (text, symbol, filled) in MARKERS.items():
            scatter = pg.ScatterPlotItem(symbol=symbol, size=13, name=text,
                                         pen=pg.mkPen("#111", width=2),
                                         brush=pg.mkBrush("#111" if filled else "w"))
            item.addItem(scatter)
            self.markers[group] = scatter
        controls_beside_plots(self, column, 300, self.plot)

    # -- model, axes and held states ------------------------------------------------------

    def _model_changed(self, event) -> None:
        if event is not None and getattr(event, "catalog", False):
            return
        names = self.lab.state_names
        for combo, k in ((self.x_axis, 0), (self.y_axis, 1)):
            blocked = combo.blockSignals(True)
            combo.clear()
            combo.addItems(names)
            combo.setCurrentIndex(min(k, len(names) - 1))
            combo.blockSignals(blocked)
        self._fit_next_run = True
        self.fit_box()
        self._fill_held()
        self.clear_orbit()

    def _fill_held(self) -> None:
        while self.held_form.rowCount():
            self.held_form.removeRow(0)
        self.held = {}
        y0 = np.asarray(self.lab.model.initial_state(), dtype=float)
        axes = (self.x_axis.currentText(), self.y_axis.currentText())
        for name, value in zip(self.lab.state_names, y0):
            if name in axes:
                continue
            box = float_box(float(value))
            box.valueChanged.connect(lambda _: self.schedule())
            self.held[name] = box
            self.held_form.addRow(name, box)
        self.held_label.setVisible(bool(self.held))

    def _axes_chosen(self, _text: str) -> None:
        self.fit_box()
        self._fill_held()
        self.clear_orbit()
        self.schedule()

    def _run_arrived(self, event) -> None:
        if event.run is not None and self._fit_next_run:
            self._fit_next_run = False
            self.fit_box()

    def fit_box(self) -> None:
        """Frame the current run (and the origin), padded by a quarter."""
        x, y = self.x_axis.currentText(), self.y_axis.currentText()
        names = self.lab.state_names
        if x not in names or y not in names:
            return
        run = self.lab.current
        if run is not None and tuple(run.state_names) == names:
            ys = np.asarray(run.ys, dtype=float)
        else:
            ys = np.asarray(self.lab.model.initial_state(), dtype=float)[None]
        box = default_box(ys[:, names.index(x)], ys[:, names.index(y)])
        self.set_box(box)

    def set_box(self, box) -> None:
        """Set the box ``((x_lo, x_hi), (y_lo, y_hi))`` and recompute."""
        for spins, (lo, hi) in zip((self.x_range, self.y_range), box):
            for spin, value in zip(spins, (lo, hi)):
                blocked = spin.blockSignals(True)
                spin.setValue(float(value))
                spin.blockSignals(blocked)
        self.schedule()

    def request(self) -> PhasePlaneRequest:
        state = np.asarray(self.lab.model.initial_state(), dtype=float).copy()
        for name, box in self.held.items():
            state[self.lab.state_names.index(name)] = box.value()
        box = tuple((lo.value(), hi.value()) for lo, hi in (self.x_range, self.y_range))
        return PhasePlaneRequest(self.lab.model, self.lab.model_name, self.lab.settings,
                                 self.x_axis.currentText(), self.y_axis.currentText(),
                                 box, tuple(state))

    # -- computing --------------------------------------------------------------------

    def schedule(self) -> None:
        """Recompute soon (at once when shown, else when the view is next shown)."""
        self._stale = True
        if self.isVisible():
            self._timer.start()

    def showEvent(self, event) -> None:  # Qt override
        super().showEvent(event)
        if self._stale:
            self._timer.start()

    def compute(self) -> None:
        """Compute the plane for the current values on a worker thread."""
        self._timer.stop()
        try:
            request = self.request()
        except ValueError as error:
            self.status.setText(str(error))
            self._clear_plane()  # not the last model's plane beside the message
            return
        self._stale = False
        self.status.setText("computing the field, nullclines and equilibria…")
        self.task.submit(lambda stop: compute_plane(request, stop))
        if self.point is not None:
            self.run_orbit(*self.point)

    def _clear_plane(self) -> None:
        self.plane = None
        for curve in (self.arrows, *self.nullclines, *self.markers.values()):
            curve.setData([], [])
        self.clear_orbit()

    def _failed(self, text: str) -> None:
        self.status.setText(f"failed: {text}. Try a smaller box, other held states, or a "
                            "shorter t1 for orbits.")

    def _plane_done(self, plane) -> None:
        self.plane = plane
        self.draw()
        kinds = ", ".join(plane.stability) or "none in the box"
        self.status.setText(f"equilibria: {kinds}. Click to run from a point.")
        self.finished.emit(plane)

    def run_orbit(self, x: float, y: float) -> None:
        """Simulate from ``(x, y)`` forward and backward in time on a worker thread."""
        try:
            request = self.request()
        except ValueError as error:
            self.status.setText(str(error))
            return
        for box, value in ((self.start_x, x), (self.start_y, y)):
            blocked = box.blockSignals(True)
            box.setValue(float(value))
            box.blockSignals(blocked)
        x, y = self.start_x.value(), self.start_y.value()  # what the boxes show, exactly
        self.point = (x, y)
        self.start_marker.setData([x], [y])
        self.orbit_task.submit(lambda stop: (request, orbit_from(request, x, y)))

    def _orbit_done(self, value) -> None:
        request, orbit = value
        self.orbit = orbit
        if (request.x, request.y) == (self.x_axis.currentText(), self.y_axis.currentText()):
            self.forward_curve.setData(*orbit.xy(request, "forward"))
            self.backward_curve.setData(*orbit.xy(request, "backward"))
        self.orbit_drawn.emit(orbit)

    def clear_orbit(self) -> None:
        self.point = self.orbit = None
        for item in (self.forward_curve, self.backward_curve, self.start_marker):
            item.setData([], [])

    def _clicked(self, event) -> None:
        if event.button() != Qt.MouseButton.LeftButton or event.double():
            return
        box = self.plot.getPlotItem().getViewBox()
        if not box.sceneBoundingRect().contains(event.scenePos()):
            return
        point = box.mapSceneToView(event.scenePos())
        self.run_orbit(point.x(), point.y())

    # -- drawing ----------------------------------------------------------------------

    def draw(self) -> None:
        plane = self.plane
        request = plane.request
        item = self.plot.getPlotItem()
        item.setLabel("bottom", request.x)
        item.setLabel("left", request.y)
        self.arrows.setData(*plane.arrows.reshape(-1, 2).T)
        legend = item.legend
        for curve, name in zip(self.nullclines, (request.x, request.y)):
            segments = plane.nullclines[name].reshape(-1, 2)
            curve.setData(segments[:, 0], segments[:, 1])
            label = legend.getLabel(curve) if legend is not None else None
            if label is not None:
                label.setText(f"{name}' = 0")
        groups = [stability_group(kind) for kind in plane.stability]
        for group, scatter in self.markers.items():
            points = plane.points[np.array([g == group for g in groups], dtype=bool)]
            scatter.setData(points[:, 0], points[:, 1])
        (x0, x1), (y0, y1) = request.box
        item.setRange(xRange=(x0, x1), yRange=(y0, y1), padding=0)

    def export_columns(self) -> dict:
        if self.orbit is None or self.plane is None:
            return {}
        request = self.plane.request
        x, y = self.orbit.xy(request, "forward")
        return {"t": np.asarray(self.orbit.forward.ts)[:len(x)], request.x: x, request.y: y}
