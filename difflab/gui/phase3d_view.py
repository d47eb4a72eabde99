"""The 3-D phase view: three states of the current run and the kept runs, turned by hand.

Drawn on an ordinary 2-D plot, so it needs no OpenGL: the chosen states are scaled into
a box, turned by an azimuth and an elevation (:mod:`difflab.app.projection`) and
projected orthographically. Dragging with the left button turns the view, the wheel
zooms; the box's edges carry the states' names and ranges.
"""

import html

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPushButton, QWidget

from ..app.lab import Lab
from ..app.projection import BOX_EDGES, box_bounds, label_edges, project, to_box
from .plots import PHASE_POINTS, THIN_ABOVE, RunPlot, SafeViewBox, run_color, run_pen
from .theme import theme_colors
from .widgets import FlowLayout, hint_label

AZIMUTH, ELEVATION = 35.0, 20.0  # degrees: the view a model starts with
DEGREES_PER_PIXEL = 0.4
REACH = 1.95  # half the width shown: the box's corners lie within sqrt(3) of its centre
LABEL_OUT = 0.22  # how far outside the box the names of the axes sit (box units)
VALUE_OUT = 0.12
VALUE_IN = 0.12  # the ranges' numbers sit this far in from the box's corners
BOX_ALPHA = 110


class TurningViewBox(SafeViewBox):
    """A view box that calls ``turn(dx, dy)`` (pixels) when dragged with the left button;
    the other buttons and the wheel zoom as usual."""

    def __init__(self, turn):
        super().__init__(lockAspect=True)
        self._turn = turn

    def mouseDragEvent(self, ev, axis=None):  # pyqtgraph's name
        if ev.button() != Qt.MouseButton.LeftButton:
            return super().mouseDragEvent(ev, axis)
        ev.accept()
        delta = ev.screenPos() - ev.lastScreenPos()
        self._turn(delta.x(), delta.y())


class Phase3DView(RunPlot):
    """Three states against each other in 3-D: the current run solid, kept runs dashed."""

    title = "Phase 3-D"

    def __init__(self, lab: Lab, parent=None):
        super().__init__(lab, parent, view_box=TurningViewBox(lambda dx, dy: self.turn(dx, dy)))
        self._frame_plot()
        self.azimuth, self.elevation = AZIMUTH, ELEVATION
        self.axes: tuple[str, str, str] = ("", "", "")
        self.bounds = (np.full(3, -1.0), np.ones(3))
        self.boxes = [QComboBox() for _ in range(3)]
        controls = QWidget()
        flow = FlowLayout(controls)  # on more rows in a narrow window, never widening it
        flow.setContentsMargins(0, 0, 0, 0)
        for name, box in zip("xyz", self.boxes):
            box.setObjectName(f"phase3d_{name}")
            # as wide as the names of the model shown, whichever it is
            box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
            flow.addWidget(_labelled(f"{name}:", box))
            box.currentTextChanged.connect(self._axes_chosen)
        self.angles = QLabel()
        self.angles.setWordWrap(True)
        self.reset_button = QPushButton("Reset view")
        self.reset_button.clicked.connect(self.reset_view)
        flow.addWidget(self.reset_button)
        flow.addWidget(self.angles)
        self.toolbar.addWidget(controls, 1)
        self.message = hint_label("")
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message.setWordWrap(True)
        self.layout().addWidget(self.message, 1)
        self._build_frame()
        lab.events.model.connect(lambda e: self._fill_boxes())
        lab.events.layout.connect(lambda e: self._fill_boxes())
        self._fill_boxes()
        self._show_angles()

    def _frame_plot(self) -> None:
        """No axes: the box carries the scales."""
        self.plot.setBackground(theme_colors()["background"])
        for side in ("left", "bottom"):
            self.plot.hideAxis(side)
        self.plot.setRange(xRange=(-REACH, REACH), yRange=(-REACH, REACH), padding=0)

    def _build_frame(self) -> None:
        self.box = pg.PlotDataItem(connect="pairs")
        self.plot.addItem(self.box)
        self.names = [pg.TextItem(anchor=(0.5, 0.5)) for _ in range(3)]
        self.values = [pg.TextItem(anchor=(0.5, 0.5)) for _ in range(6)]
        for item in (*self.names, *self.values):
            self.plot.addItem(item)

    # -- the states shown and the angles ---------------------------------------------------

    def _fill_boxes(self) -> None:
        """The model's states in the three boxes, the three of the layout chosen (the
        model's first three where it names none)."""
        states = list(self.lab.state_names)
        enough = len(states) >= 3
        if not enough:
            self.message.setText(f"The 3-D phase view needs a model with at least 3 states; "
                                 f"{self.lab.model_name} has {len(states)}.")
        self.message.setVisible(not enough)
        self.plot.setVisible(enough)
        chosen = self.lab.layout.phase3d
        if len(chosen) != 3 or not set(chosen) <= set(states):  # a layout from an older file
            chosen = tuple(states[:3])
        for i, box in enumerate(self.boxes):
            blocked = box.blockSignals(True)
            if [box.itemText(j) for j in range(box.count())] != states:
                box.clear()
                box.addItems(states)
            box.setCurrentIndex(states.index(chosen[i]) if enough else -1)
            box.setEnabled(enough)
            box.blockSignals(blocked)
        self._axes_chosen()

    def _axes_chosen(self, _text: str = "") -> None:
        axes = tuple(box.currentText() for box in self.boxes)
        self.axes = axes if all(axes) and len(self.lab.state_names) >= 3 else ("", "", "")
        if all(self.axes):
            self.lab.set_layout(phase3d=self.axes)  # kept with the session
        self.redraw()

    def set_axes(self, x: str, y: str, z: str) -> None:
        """Show states ``x``, ``y`` and ``z`` (names of the model's states)."""
        for name, box in zip((x, y, z), self.boxes):
            if name not in self.lab.state_names:
                raise ValueError(f"{self.lab.model_name} has no state {name!r}")
            box.setCurrentText(name)

    def set_view(self, azimuth: float, elevation: float) -> None:
        """Look from ``azimuth`` (any angle, kept in (-180, 180]) and ``elevation`` (held
        within [-90, 90]) in degrees."""
        self.azimuth = -((180.0 - azimuth) % 360.0 - 180.0)
        self.elevation = float(np.clip(elevation, -90.0, 90.0))
        self._show_angles()
        self.redraw()

    def turn(self, dx: float, dy: float) -> None:
        """Turn the view as a drag of ``dx``, ``dy`` pixels does: the front follows it."""
        self.set_view(self.azimuth - DEGREES_PER_PIXEL * dx,
                      self.elevation + DEGREES_PER_PIXEL * dy)

    def reset_view(self) -> None:
        """The starting angles and zoom."""
        self.plot.setRange(xRange=(-REACH, REACH), yRange=(-REACH, REACH), padding=0)
        self.set_view(AZIMUTH, ELEVATION)

    def _show_angles(self) -> None:
        self.angles.setText(f"  azimuth {self.azimuth:.0f}°, elevation {self.elevation:.0f}°"
                            "  (drag to turn, wheel to zoom)")

    # -- drawing -----------------------------------------------------------------------

    def points(self) -> dict:
        """key -> (index or None, run, decimated points n x 3) of every run to draw."""
        out = {}
        if not all(self.axes):
            return out
        for key, index, run in self.runs():
            if not all(state in run.state_names for state in self.axes):
                continue
            step = max(1, len(run.ts) // PHASE_POINTS)
            columns = [run.state_names.index(state) for state in self.axes]
            out[key] = (index, run, np.asarray(run.ys)[::step][:, columns])
        return out

    def wanted(self):
        points = self.points()
        self.bounds = box_bounds([p for _, _, p in points.values()])
        out = {}
        for key, (index, run, xyz) in points.items():
            screen = project(to_box(xyz, *self.bounds), self.azimuth, self.elevation)
            color = QColor(theme_colors()["foreground"]) if index is None else run_color(index)
            pen = run_pen(index, color, thin=len(xyz) > THIN_ABOVE)
            name = "current" if index is None else key
            out[(key, "phase3d")] = (pen, name, screen[:, 0], screen[:, 1], run.ok)
        return out

    def draw(self) -> None:
        super().draw()
        if self.isVisible():
            self._draw_frame(bool(all(self.axes)))

    def _draw_frame(self, shown: bool) -> None:
        """The box's edges, the states' names beside them and their ranges at the ends."""
        colors = theme_colors()
        for item in (self.box, *self.names, *self.values):
            item.setVisible(shown)
        if not shown:
            return
        axis = QColor(colors["axis"])
        axis.setAlpha(BOX_ALPHA)
        edges = project(BOX_EDGES.reshape(-1, 3), self.azimuth, self.elevation)
        self.box.setData(edges[:, 0], edges[:, 1], pen=pg.mkPen(axis, width=1))
        lo, hi = self.bounds
        for k, edge in enumerate(label_edges(self.azimuth, self.elevation)):
            ends = project(edge, self.azimuth, self.elevation)
            self._place(self.names[k], self.axes[k], ends.mean(axis=0), LABEL_OUT, colors,
                        bold=True)
            for j, value in enumerate((lo[k], hi[k])):
                at = ends[j] + VALUE_IN * (ends[1 - j] - ends[j])  # apart from a corner's other
                self._place(self.values[2 * k + j], f"{value:.3g}", at, VALUE_OUT, colors)

    def _place(self, item: pg.TextItem, text: str, at: np.ndarray, out: float, colors: dict,
               bold: bool = False) -> None:
        """Put ``item`` at screen point ``at``, moved ``out`` away from the box's centre."""
        length = float(np.hypot(*at))
        position = at * (1 + out / length) if length > 1e-9 else at
        color = colors["foreground"] if bold else colors["hint"]
        item.setHtml(f"<b>{html.escape(text)}</b>" if bold else html.escape(text))
        item.setColor(color)
        item.setPos(*position)


def _labelled(label: str, widget: QWidget) -> QWidget:
    """``widget`` after its ``label``, kept together on one row."""
    pair = QWidget()
    row = QHBoxLayout(pair)
    row.setContentsMargins(0, 0, 0, 0)
    row.addWidget(QLabel(label))
    row.addWidget(widget)
    return pair
