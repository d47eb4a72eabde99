"""The bifurcation diagram view: branches of equilibria and of periodic orbits of the current
model against a parameter.

"Compute" runs :func:`difflab.app.bifurcation.run_continuation` on a worker thread; the
plot draws the chosen state against the parameter (a periodic orbit by its greatest and
least value of it), stable parts solid and unstable parts dashed, with the special points
labelled (fold ``LP``, Hopf ``H``, branch point ``BP``, fold of cycles ``LPC``, period
doubling ``PD``, Neimark-Sacker ``NS``, branch point of cycles ``BPC``). A click on the
diagram sets the parameter to the value of the nearest point of a branch or of an orbit's
curve (one undoable step), and the live run follows; a click on a ``PD`` or ``BPC`` point
continues the branch of orbits that starts there (the doubled orbits, the other branch),
one on an ``NS`` point says why none does. The diagram's branches are kept by the lab
(saved with the session), and a diagram read from a session file is drawn again.
"""

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ..app.bifurcation import (
    LABELS,
    SWITCHES,
    BifurcationRequest,
    run_continuation,
    switch_cycles,
)
from ..app.lab import Lab, finite_bounds
from ..app.session_io import DIAGRAM, kept_diagram
from .phase_plane_view import LatestTask, float_box
from .plots import configure_plot, outside_legend, plot_widget
from .widgets import controls_beside_plots, hint_label
from .workers import while_alive

BRANCH_COLOR = "#1f77b4"
CYCLE_COLOR = "#ff7f0e"
SPECIAL_COLOR = "#d62728"
HINT = ("continues the equilibrium nearest the initial state; click the diagram to set "
        "the parameter there, or a PD or BPC point to continue the orbits that start there")


class BifurcationView(QWidget):
    """Controls and the plot of the bifurcation diagram.

    Signals: ``finished(diagram)`` when a diagram is drawn.
    """

    finished = Signal(object)

    def __init__(self, lab: Lab, window=None, parent=None):
        super().__init__(parent)
        self.lab, self.window = lab, window
        self.diagram = None
        self.task = LatestTask(self, "continuation", self._done, self._failed)
        self.param = QComboBox()
        self.param.setObjectName("bifurcation_param")
        self.start, self.stop = float_box(), float_box(1.0)
        self.state = QComboBox()
        self.state.setObjectName("bifurcation_state")
        self.from_run = QCheckBox("start from the end of the current run")
        self.others = QCheckBox("add the branches found at the end")
        self.others.setChecked(True)
        self.cycles = QCheckBox("add the periodic orbits from the Hopf points")
        self.cycles.setChecked(True)
        self.compute_button = QPushButton("Compute the diagram")
        self.compute_button.setObjectName("compute_bifurcation")
        self.status = hint_label(HINT)
        self.status.setWordWrap(True)
        self.plot = plot_widget()
        self.curves: list[pg.PlotDataItem] = []
        self.texts: list[pg.TextItem] = []
        self._build()
        self.compute_button.clicked.connect(self.compute)
        self.param.currentTextChanged.connect(self._param_chosen)
        self.state.currentTextChanged.connect(lambda _: self.draw())
        self.plot.scene().sigMouseClicked.connect(self._clicked)
        lab.events.model.connect(self._model_changed)
        lab.events.params.connect(lambda event: self._mark_value())
        lab.events.results.connect(self._results_changed)
        self._model_changed(None)

    def _build(self) -> None:
        form = QFormLayout()
        form.addRow("parameter", self.param)
        form.addRow("from", self.start)
        form.addRow("to", self.stop)
        form.addRow("state", self.state)
        column = QVBoxLayout()
        column.addLayout(form)
        column.addWidget(self.from_run)
        column.addWidget(self.others)
        column.addWidget(self.cycles)
        column.addWidget(self.compute_button)
        column.addWidget(self.status)
        column.addStretch(1)
        configure_plot(self.plot, "parameter", "state")
        item = self.plot.getPlotItem()
        outside_legend(item)  # beside the plot, never over a branch or an arrow
        item.plot(pen=pg.mkPen(BRANCH_COLOR, width=2.5), name="stable")
        item.plot(pen=pg.mkPen(BRANCH_COLOR, width=2, style=Qt.PenStyle.DashLine),
                  name="unstable")
        item.plot(pen=pg.mkPen(CYCLE_COLOR, width=2.5), name="cycles: max, min")
        self.special = pg.ScatterPlotItem(size=9, brush=pg.mkBrush(SPECIAL_COLOR),
                                          pen=pg.mkPen("#111"))
        item.addItem(self.special)
        self.value_line = pg.InfiniteLine(angle=90, pen=pg.mkPen("#888", width=1,
                                                                  style=Qt.PenStyle.DotLine))
        item.addItem(self.value_line)
        controls_beside_plots(self, column, 300, self.plot)

    def _model_changed(self, event) -> None:
        if event is not None and getattr(event, "catalog", False):
            return
        for combo, names in ((self.param, list(self.lab.specs)),
                             (self.state, list(self.lab.state_names))):
            blocked = combo.blockSignals(True)
            combo.clear()
            combo.addItems(names)
            combo.blockSignals(blocked)
        self._param_chosen(self.param.currentText())
        self.compute_button.setEnabled(bool(self.lab.specs))
        self.diagram = None
        self.status.setText(HINT)  # not the last model's diagram
        self._show_kept()
        self.draw()

    def _results_changed(self, event) -> None:
        if event.kind in (None, "analysis"):
            self._show_kept()

    def _show_kept(self) -> None:
        """Show the diagram the lab keeps (computed here, or read from a session file)."""
        kept = kept_diagram(self.lab)
        branches = kept.results if kept is not None else ()
        shown = self.diagram.results if self.diagram is not None else ()
        if len(branches) == len(shown) and all(a is b for a, b in zip(branches, shown)):
            return
        self.diagram = kept
        if kept is not None:
            for widget, value in ((self.param, kept.request.param),
                                  (self.start, kept.request.start),
                                  (self.stop, kept.request.stop)):
                blocked = widget.blockSignals(True)
                widget.setCurrentText(value) if widget is self.param else widget.setValue(value)
                widget.blockSignals(blocked)
        self.draw()

    def _param_chosen(self, name: str) -> None:
        spec = self.lab.specs.get(name)
        if spec is not None:
            lo, hi = finite_bounds(spec)
            self.start.setValue(lo)
            self.stop.setValue(hi)
        self._mark_value()
        if self.diagram is None:
            self.draw()

    def _mark_value(self) -> None:
        value = self.lab.params.get(self.param.currentText())
        self.value_line.setVisible(value is not None)
        if value is not None:
            self.value_line.setValue(value)

    def request(self) -> BifurcationRequest:
        state = None
        run = self.lab.current
        if self.from_run.isChecked() and run is not None:
            state = tuple(np.asarray(run.ys[-1], dtype=float))
        return BifurcationRequest(self.lab.model, self.lab.model_name,
                                  self.param.currentText(), self.start.value(),
                                  self.stop.value(), state, self.others.isChecked(),
                                  float(self.lab.settings.t0), cycles=self.cycles.isChecked())

    def compute(self) -> None:
        """Compute the diagram on a worker thread."""
        try:
            request = self.request()
        except ValueError as error:
            self.lab.log(f"bifurcation: {error}", "error")
            self.status.setText(str(error))
            return
        self.compute_button.setEnabled(False)
        self.status.setText(f"continuing equilibria in {request.param} from "
                            f"{request.start:g} to {request.stop:g}…")
        self.task.submit(lambda stop: run_continuation(request, stop))
        if self.task.worker is not None:
            self.task.worker.done.connect(
                while_alive(self, lambda ok, value: self.compute_button.setEnabled(True)))

    def _failed(self, text: str) -> None:
        advice = "" if "Try" in text else (" Try another range, or start from the end of a "
                                           "run (the box above) nearer an equilibrium.")
        self.status.setText(f"the diagram failed: {text.rstrip('.')}.{advice}")

    def _done(self, diagram) -> None:
        self.diagram = diagram
        self.lab.set_analyses(DIAGRAM, diagram.results)
        self.draw()
        request = diagram.request
        found = dict.fromkeys(f"{label} at {request.param} = {value:.6g}"
                              for label, value, _ in diagram.labels(diagram.state_names[0]))
        labels = ", ".join(found)
        cycles = f", {len(diagram.cycles)} of periodic orbits" if diagram.cycles else ""
        text = (f"{len(diagram.branches)} branch(es) of {request.model_name} in "
                f"{request.param}{cycles}; {labels or 'no special points'}")
        if diagram.partial:
            text += (f". Partial: {'; '.join(diagram.notes)}. Try a narrower range or a "
                     "start nearer the missing branch.")
        self.status.setText(text)
        self.lab.log(text, "warning" if diagram.partial else "info")
        self.finished.emit(diagram)

    def draw(self) -> None:
        item = self.plot.getPlotItem()
        for curve in self.curves:
            item.removeItem(curve)
        for text in self.texts:
            item.removeItem(text)
        self.curves, self.texts = [], []
        diagram, state = self.diagram, self.state.currentText()
        item.enableAutoRange()  # each diagram is fitted afresh, whatever the last one was
        if diagram is None or state not in diagram.state_names:
            self.special.setData([], [])
            self._show_range(item)
            return
        k = diagram.state_names.index(state)
        item.setLabel("bottom", diagram.request.param)
        item.setLabel("left", state)
        zero = 1e-12 * _scale(diagram)  # rounding about a zero state is drawn as zero
        for piece in diagram.pieces():
            style = Qt.PenStyle.SolidLine if piece.stable else Qt.PenStyle.DashLine
            curve = pg.PlotDataItem(piece.values, _snapped(piece.states[:, k], zero),
                                    pen=pg.mkPen(BRANCH_COLOR, width=2.5 if piece.stable else 2,
                                                 style=style))
            curve.stable = piece.stable
            item.addItem(curve)
            self.curves.append(curve)
        self._draw_cycles(diagram, k)
        labels = [(label, v, float(_snapped(y, zero))) for label, v, y in diagram.labels(state)]
        self.special.setData([v for _, v, _ in labels], [y for _, _, y in labels])
        for label, value, y in labels:
            text = pg.TextItem(label, color=SPECIAL_COLOR, anchor=(0, 1))
            text.setPos(value, y)
            item.addItem(text, ignoreBounds=True)  # a label's size is in pixels, not data
            self.texts.append(text)
        self._mark_value()

    def _show_range(self, item) -> None:
        """Before a diagram: the axes named, the parameter's range from and to in view."""
        item.setLabel("bottom", self.param.currentText() or "parameter")
        item.setLabel("left", self.state.currentText() or "state")
        lo, hi = sorted((self.start.value(), self.stop.value()))
        if lo < hi:
            item.setXRange(lo, hi, padding=0.02)

    def _draw_cycles(self, diagram, k: int) -> None:
        """Each piece of a branch of periodic orbits: its greatest and least value of
        state ``k``."""
        item, zero = self.plot.getPlotItem(), 1e-12 * _scale(diagram)
        for piece in diagram.cycle_pieces():
            pen = pg.mkPen(CYCLE_COLOR, width=2.5 if piece.stable else 2,
                           style=Qt.PenStyle.SolidLine if piece.stable else Qt.PenStyle.DashLine)
            for extreme in (piece.maxima, piece.minima):
                curve = pg.PlotDataItem(piece.values, _snapped(extreme[:, k], zero), pen=pen)
                curve.stable, curve.cycle = piece.stable, True
                item.addItem(curve)
                self.curves.append(curve)

    def select_value(self, value: float) -> None:
        """Set the lab's parameter to ``value`` (one undoable step)."""
        name = self.diagram.request.param if self.diagram is not None else self.param.currentText()
        if name in self.lab.specs:
            self.lab.set_params({name: value},
                                text=f"Set {name} = {value:.6g} from the bifurcation diagram")

    def _clicked(self, event) -> None:
        if event.button() != Qt.MouseButton.LeftButton or self.diagram is None:
            return
        box = self.plot.getPlotItem().getViewBox()
        if not box.sceneBoundingRect().contains(event.scenePos()):
            return
        point = box.mapSceneToView(event.scenePos())
        (x0, x1), (y0, y1) = box.viewRange()
        where = (point.x(), point.y(), self.state.currentText(), (x1 - x0 or 1.0, y1 - y0 or 1.0))
        special = self.diagram.cycle_point_near(*where)
        if special is not None and special.kind != "fold-of-cycles":
            self.switch(special)
            return
        value = self.diagram.nearest(*where)
        if value is not None:
            self.select_value(value)

    def switch(self, point) -> None:
        """Continue the branch of orbits that starts at ``point`` (a ``PD`` or ``BPC``
        point) on a worker thread; at an ``NS`` point say why none does."""
        diagram, param = self.diagram, self.diagram.request.param
        label = f"{LABELS.get(point.kind, point.kind)} at {param} = {float(point.value):.6g}"
        if point.kind not in SWITCHES:
            self.status.setText(f"{label}: {point.note}")
            return
        self.status.setText(f"continuing {SWITCHES[point.kind]} from {label}…")
        self.task.submit(lambda stop: switch_cycles(diagram, point))

    def export_columns(self) -> dict:
        if self.diagram is None:
            return {}
        branches = self.diagram.branches
        columns = {self.diagram.request.param: np.concatenate([b.values for b in branches]),
                   "branch": np.concatenate([np.full(len(b.values), i)
                                             for i, b in enumerate(branches)])}
        states = np.concatenate([b.states for b in branches])
        for k, name in enumerate(self.diagram.state_names):
            columns[name] = states[:, k]
        columns["stable"] = np.concatenate([b.stable for b in branches]).astype(float)
        return columns


def _scale(diagram) -> float:
    """The size of the diagram's states: at least 1, else their largest finite value."""
    arrays = [np.asarray(b.states) for b in diagram.branches]
    arrays += [np.asarray(a) for c in diagram.cycles for a in (c.maxima, c.minima)]
    finite = [np.abs(a[np.isfinite(a)]) for a in arrays if a.size]
    return max([1.0] + [float(a.max()) for a in finite if a.size])


def _snapped(values, zero: float):
    """``values`` with those nearer zero than ``zero`` set to zero."""
    values = np.asarray(values, dtype=float)
    return np.where(np.abs(values) < zero, 0.0, values)
