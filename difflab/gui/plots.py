"""Time-series and phase-portrait plots of the current run and the kept runs.

Each curve is a ``PlotDataItem`` created once per (run, state) and updated with
``setData``; redraws are throttled to one per frame, so a stream of chunks costs at
most 60 redraws a second whatever its chunk rate. Time series use peak downsampling and
clip-to-view, so 100,000-point curves draw at interactive rates.
"""

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QColor, QPen
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QMenu,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ..app.lab import Lab
from ..app.runs import complete
from ..app.views import derived_names, derived_series
from .theme import theme_colors
from .widgets import Throttle

#: Tableau 10: states in time series, runs in phase portraits.
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf"]
DASHES = [Qt.PenStyle.DashLine, Qt.PenStyle.DotLine, Qt.PenStyle.DashDotLine,
          Qt.PenStyle.DashDotDotLine]
CURRENT = "current"
PHASE_POINTS = 20_000
GRID_ALPHA = 0.25
THIN_ABOVE = 5_000  # points: longer curves are drawn with 1-pixel lines
DOWNSAMPLE_FACTOR = 1.5  # peak downsampling keeps 2 x 1.5 points per pixel of width
MENU_BLOCK = 20  # states per submenu of a model with many states
LEGEND_GAP = 8  # pixels between the plot and its legend


STREAM_POINTS = 2_000  # bins per curve while a run streams in (2 points each)


def peak_decimate(x: np.ndarray, y: np.ndarray, bins: int = STREAM_POINTS):
    """At most ``2 * bins`` points that keep each bin's minimum and maximum of ``y``.

    What a curve that is still growing is drawn with: O(n) NumPy work per frame and a
    few thousand points for pyqtgraph, whatever the length (pyqtgraph's own peak
    downsampling and bounds run several passes of Python-level work over all points).
    """
    n = len(x)
    step = -(-n // bins)
    if step <= 1:
        return x, y
    m = n // step
    blocks = y[: m * step].reshape(m, step)
    xs = np.repeat(x[: m * step : step], 2)
    ys = np.empty(2 * m)
    ys[0::2] = blocks.max(axis=1)
    ys[1::2] = blocks.min(axis=1)
    if m * step < n:  # the partial last bin: its first and last points
        xs = np.concatenate([xs, x[[m * step, n - 1]]])
        ys = np.concatenate([ys, y[[m * step, n - 1]]])
    return xs, ys


def state_color(index: int) -> QColor:
    return QColor(PALETTE[index % len(PALETTE)])


def run_color(index: int) -> QColor:
    """The colour of kept run ``index`` (the current run is drawn in near-black)."""
    return QColor(PALETTE[(index + 1) % len(PALETTE)])


def run_pen(index: int | None, color: QColor, thin: bool = False) -> QPen:
    """Solid and thicker for the current run (``index`` None), dashed for kept runs.

    ``thin``: one pixel wide, for long curves: Qt's raster engine draws 1-pixel lines
    several times faster than wider ones (10 curves of 100,000 points: 20 ms against 80).
    """
    pen = pg.mkPen(color, width=1 if thin else (2 if index is None else 1.5))
    pen.setCosmetic(True)
    if index is not None:
        pen.setStyle(DASHES[index % len(DASHES)])
    return pen


def configure_plot(plot: pg.PlotWidget, x: str, y: str, grid: bool = True) -> None:
    """Labels, a light grid (which costs a repaint of the axes on every update), colours."""
    plot.setBackground(theme_colors()["background"])
    configure_axes(plot.getPlotItem(), x, y, grid)


def configure_axes(item: pg.PlotItem, x: str, y: str, grid: bool = True) -> None:
    """A plot's labels, grid and axis colours (the theme's); tick values are shown as they
    are, never rescaled by an SI prefix that the label would have to explain."""
    colors = theme_colors()
    item.showGrid(x=grid, y=grid, alpha=GRID_ALPHA)
    item.setMenuEnabled(True)
    for axis, label in (("left", y), ("bottom", x)):
        axis_item = item.getAxis(axis)
        axis_item.enableAutoSIPrefix(False)
        axis_item.setPen(pg.mkPen(colors["axis"]))
        axis_item.setTextPen(pg.mkPen(colors["foreground"]))
        item.setLabel(axis, label)


def outside_legend(item: pg.PlotItem) -> pg.LegendItem:
    """A legend right of the plot's axes, off the data (the plot keeps a margin as wide
    as the legend); curves added with a name join it."""
    legend = pg.LegendItem(offset=(-2, 2), labelTextColor=theme_colors()["foreground"],
                           labelTextSize="10pt")
    legend.setParentItem(item)  # anchored to the plot's top right corner
    item.legend = legend

    def reserve():
        width = legend.width() + LEGEND_GAP if legend.items else 1
        left, top, _, bottom = item.layout.getContentsMargins()
        item.layout.setContentsMargins(left, top, width, bottom)

    legend.geometryChanged.connect(reserve)
    return legend


class RunPlot(QWidget):
    """Base of the two run plots: a toolbar, a ``PlotWidget`` and one curve per key."""

    title = ""

    def __init__(self, lab: Lab, parent=None):
        super().__init__(parent)
        self.lab = lab
        self.plot = pg.PlotWidget()
        self.plot.setObjectName(type(self).__name__)
        self.curves: dict[tuple[str, str], pg.PlotDataItem] = {}
        self._styles: dict[tuple[str, str], tuple] = {}
        self._stale = True
        self.legend = outside_legend(self.plot.getPlotItem())
        self.toolbar = QHBoxLayout()
        self.toolbar.setContentsMargins(4, 2, 4, 0)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(self.toolbar)
        layout.addWidget(self.plot, 1)
        self.redraw = Throttle(self.draw, 16, self)
        for emitter in (lab.events.current, lab.events.runs, lab.events.layout):
            emitter.connect(lambda event: self.redraw())
        lab.events.model.connect(self._model_changed)

    def _model_changed(self, event) -> None:
        if not getattr(event, "catalog", False):
            self.clear()
            self.redraw()

    def showEvent(self, event) -> None:  # noqa: N802 (Qt override)
        super().showEvent(event)
        if self._stale:
            self.draw()

    def clear(self) -> None:
        for curve in self.curves.values():
            self.plot.removeItem(curve)
        self.curves.clear()
        self._styles.clear()

    def curve(self, key: tuple[str, str], pen: QPen, name: str) -> pg.PlotDataItem:
        """The curve for ``key``, created on first use."""
        curve = self.curves.get(key)
        if curve is None:
            curve = pg.PlotDataItem(pen=pen, name=name, autoDownsampleFactor=DOWNSAMPLE_FACTOR)
            self.plot.addItem(curve)
            self.curves[key] = curve
        return curve

    def runs(self):
        """(key, index or None, run) of every run to draw: kept runs, then the current one."""
        lab = self.lab
        out = [(name, i, run) for i, (name, run) in enumerate(lab.runs.items())
               if lab.is_visible(name) and lab.name_of(run.model) == lab.model_name]
        if self.lab.current is not None:
            out.append((CURRENT, None, self.lab.current))
        return out

    def wanted(self) -> dict[tuple[str, str], tuple]:
        """key -> (pen, legend name, x, y, all finite) of every curve to draw now."""
        raise NotImplementedError

    def draw(self) -> None:
        if not self.isVisible():  # a view in a hidden tab catches up when it is shown
            self._stale = True
            return
        self._stale = False
        wanted = self.wanted()
        for key in [k for k in self.curves if k not in wanted]:
            self.plot.removeItem(self.curves.pop(key))
            self._styles.pop(key, None)
        for key, (pen, name, x, y, finite) in wanted.items():
            curve = self.curve(key, pen, name)
            style = (pen.color().name(), pen.style(), pen.widthF())
            if self._styles.get(key) != style:
                curve.setPen(pen)
                self._styles[key] = style
            curve.setData(x, y, skipFiniteCheck=finite)  # a successful run is all finite


class TimeSeriesPlot(RunPlot):
    """The chosen states against time: the current run solid, kept runs dashed."""

    title = "Time series"

    def __init__(self, lab: Lab, parent=None):
        super().__init__(lab, parent)
        configure_plot(self.plot, "t", "value")
        item = self.plot.getPlotItem()
        # Plot-wide, so every curve added gets it (PlotItem.addItem applies its own modes).
        item.setDownsampling(auto=True, mode="peak")
        item.setClipToView(True)
        self._held = False
        self.states_button = QToolButton()
        self.states_button.setText("States")
        self.states_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.states_menu = QMenu(self.states_button)
        self.states_button.setMenu(self.states_menu)
        self.toolbar.addWidget(QLabel("Show:"))
        self.toolbar.addWidget(self.states_button)
        self.shown = QLabel()
        self.toolbar.addWidget(self.shown, 1)
        self.derived: tuple[str, ...] = ()
        self.derived_shown: set[str] = set()
        self._derived_cache: dict = {}
        lab.events.layout.connect(lambda e: self._fill_menu())
        lab.events.model.connect(self._model_derived)
        self._model_derived(None)

    def _model_derived(self, event) -> None:
        if event is None or not getattr(event, "catalog", False):
            self.derived = derived_names(self.lab.model)
            self.derived_shown &= set(self.derived)
            self._derived_cache.clear()
        self._fill_menu()

    def _fill_menu(self) -> None:
        """Derived quantities first, then the states (in blocks when there are many)."""
        self.states_menu.clear()
        if self.derived:
            self.states_menu.addSection("Derived")
            for name in self.derived:
                self._add_toggle(self.states_menu, name, name in self.derived_shown,
                                 self.show_derived)
            self.states_menu.addSection("States")
        chosen, states = set(self.lab.layout.time_states), self.lab.state_names
        for start in range(0, len(states), MENU_BLOCK):
            block = states[start:start + MENU_BLOCK]
            menu = self.states_menu if len(states) <= MENU_BLOCK else \
                self.states_menu.addMenu(f"{block[0]} … {block[-1]}")
            for state in block:
                self._add_toggle(menu, state, state in chosen, self._toggle)
        names = [*sorted(self.derived_shown), *self.lab.layout.time_states]
        more = len(names) - 6
        self.shown.setText(f"  {', '.join(names[:6])}" + (f" and {more} more" if more > 0 else ""))

    def _add_toggle(self, menu: QMenu, name: str, checked: bool, slot) -> None:
        action = QAction(name, menu)
        action.setCheckable(True)
        action.setChecked(checked)
        action.toggled.connect(lambda on, s=name: slot(s, on))
        menu.addAction(action)

    def show_derived(self, name: str, on: bool) -> None:
        """Show or hide the derived quantity ``name``."""
        if name not in self.derived:
            raise ValueError(f"{self.lab.model_name} has no derived quantity {name!r}")
        (self.derived_shown.add if on else self.derived_shown.discard)(name)
        self._fill_menu()
        self.redraw()

    def _toggle(self, state: str, on: bool) -> None:
        states = [s for s in self.lab.state_names
                  if (s in self.lab.layout.time_states and s != state) or (s == state and on)]
        self.lab.set_layout(time_states=tuple(states))

    def draw(self) -> None:
        self._frame_time_axis()
        super().draw()

    def _frame_time_axis(self) -> None:
        """While a run streams in, hold the time axis at ``[t0, t1]`` and hide the grid.

        The axis then keeps its ticks instead of re-laying them out on every frame as the
        curves grow, and the axes (which draw the grid lines across the plot) need not be
        repainted with the curves: a quarter of the cost of a frame.
        """
        run, item = self.lab.current, self.plot.getPlotItem()
        streaming = run is not None and not complete(run)
        if streaming and not self._held:
            item.setXRange(run.settings.t0, run.settings.t1, padding=0.02)
            item.showGrid(x=False, y=False)
            self._held = True
        elif not streaming and self._held:
            item.enableAutoRange(x=True)
            item.showGrid(x=True, y=True, alpha=GRID_ALPHA)
            self._held = False

    def wanted(self):
        names = self.lab.state_names
        out = {}
        for key, index, run in self.runs():
            n = len(run.ts)
            for state in self.lab.layout.time_states:
                if state not in run.state_names:
                    continue
                j = run.state_names.index(state)
                pen = run_pen(index, state_color(names.index(state)), thin=n > THIN_ABOVE)
                label = state if index is None else f"{key}: {state}"
                x, y = run.ts, run.ys[:, j]
                if not complete(run):  # streaming: redrawn every frame, so keep it small
                    x, y = peak_decimate(x, y)
                out[(key, state)] = (pen, label, x, y, run.ok)
            out.update(self._derived_curves(key, index, run))
        return out

    def _derived_curves(self, key, index, run) -> dict:
        if not self.derived_shown or not complete(run):
            return {}
        cache_key = (key, id(run), len(run.ts))
        series = self._derived_cache.get(cache_key)
        if series is None:
            series = derived_series(run.model, run.ys)
            self._derived_cache = {k: v for k, v in self._derived_cache.items() if k[0] != key}
            self._derived_cache[cache_key] = series
        out, offset = {}, len(self.lab.state_names)
        for i, name in enumerate(self.derived):
            if name in self.derived_shown and name in series:
                pen = run_pen(index, state_color(offset + i), thin=len(run.ts) > THIN_ABOVE)
                label = name if index is None else f"{key}: {name}"
                out[(key, name)] = (pen, label, run.ts, series[name], run.ok)
        return out


class PhasePlot(RunPlot):
    """One state against another: the current run in black, kept runs in their colours."""

    title = "Phase portrait"

    def __init__(self, lab: Lab, parent=None):
        super().__init__(lab, parent)
        configure_plot(self.plot, "", "")
        self.x_box, self.y_box = QComboBox(), QComboBox()
        self.x_box.setObjectName("phase_x")
        self.y_box.setObjectName("phase_y")
        for label, box in (("x:", self.x_box), ("y:", self.y_box)):
            self.toolbar.addWidget(QLabel(label))
            self.toolbar.addWidget(box)
            box.currentTextChanged.connect(self._axes_chosen)
        self.toolbar.addStretch(1)
        lab.events.layout.connect(lambda e: self._fill_boxes())
        lab.events.model.connect(lambda e: self._fill_boxes())
        self._fill_boxes()

    def _fill_boxes(self) -> None:
        layout = self.lab.layout
        for box, value in ((self.x_box, layout.phase_x), (self.y_box, layout.phase_y)):
            blocked = box.blockSignals(True)
            if [box.itemText(i) for i in range(box.count())] != list(self.lab.state_names):
                box.clear()
                box.addItems(self.lab.state_names)
            box.setCurrentText(value)
            box.blockSignals(blocked)
        configure_plot(self.plot, layout.phase_x, layout.phase_y)

    def _axes_chosen(self, _text: str) -> None:
        x, y = self.x_box.currentText(), self.y_box.currentText()
        if x and y:
            self.lab.set_layout(phase_x=x, phase_y=y)

    def wanted(self):
        layout = self.lab.layout
        out = {}
        for key, index, run in self.runs():
            if layout.phase_x not in run.state_names or layout.phase_y not in run.state_names:
                continue
            step = max(1, len(run.ts) // PHASE_POINTS)  # not monotonic in x: decimate
            x = run.ys[::step, run.state_names.index(layout.phase_x)]
            y = run.ys[::step, run.state_names.index(layout.phase_y)]
            color = QColor("#202020") if index is None else run_color(index)
            pen = run_pen(index, color, thin=len(x) > THIN_ABOVE)
            out[(key, "phase")] = (pen, "current" if index is None else key, x, y, run.ok)
        return out
