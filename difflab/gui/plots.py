"""The run plots' common parts (colours, pens, axes, legends, ``RunPlot``) and the
phase portrait of the current run and the kept runs (the time series: ``time_series.py``).

Each curve is a ``PlotDataItem`` created once per (run, state) and updated with
``setData``; redraws are throttled to one per frame, so a stream of chunks costs at
most 60 redraws a second whatever its chunk rate. Time series use peak downsampling and
clip-to-view, so 100,000-point curves draw at interactive rates.
"""

import functools
import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPen
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from ..app.lab import Lab
from .theme import theme_colors
from .widgets import Throttle

#: Tableau 10: states in time series, runs in phase portraits.
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf"]
DASHES = [Qt.PenStyle.DashLine, Qt.PenStyle.DotLine, Qt.PenStyle.DashDotLine,
          Qt.PenStyle.DashDotDotLine]
CYCLIC_MAP = "CET-C1"  # states of models with more than 10
CURRENT = "current"
PHASE_POINTS = 20_000
GRID_ALPHA = 0.25
THIN_ABOVE = 5_000  # points: longer curves are drawn with 1-pixel lines
DOWNSAMPLE_FACTOR = 1.5  # peak downsampling keeps 2 x 1.5 points per pixel of width
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


TINY = 1e-280  # spans and values below this are treated as zero


def sensible_span(lo: float, hi: float) -> tuple[float, float]:
    """``(lo, hi)`` where it is a range a plot can show; else a range around it: a range
    of (nearly) zero width, as a constant curve or a single point has, becomes +-10 % of
    its value (+-1 around zero); a non-finite one becomes ``(-1, 1)``."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return (-1.0, 1.0)
    lo, hi = min(lo, hi), max(lo, hi)
    if hi - lo > max(TINY, 1e-12 * max(abs(lo), abs(hi))):
        return (lo, hi)
    middle = 0.5 * (lo + hi)
    half = 0.1 * abs(middle) if abs(middle) > TINY else 1.0
    return (middle - half, middle + half)


class SafeViewBox(pg.ViewBox):
    """A ``ViewBox`` that never takes an invalid range: a non-finite range asked for is
    ignored, and one of zero width (a constant curve, a single point) is widened by
    :func:`sensible_span` instead of keeping the previous scale. Auto-range fits the
    finite data of the items (a constant curve: around its value), so a degenerate
    result never shrinks the view to nothing, and the next result is fitted again."""

    def setRange(self, rect=None, xRange=None, yRange=None, *args, **kwargs):  # noqa: N802
        if rect is not None:
            xRange, yRange, rect = (rect.left(), rect.right()), (rect.top(), rect.bottom()), None
        xRange, yRange = (None if r is None or not all(map(math.isfinite, r)) else
                          sensible_span(*map(float, r)) for r in (xRange, yRange))
        if xRange is None and yRange is None:
            return
        super().setRange(None, xRange, yRange, *args, **kwargs)

    def childrenBounds(self, frac=None, orthoRange=(None, None), items=None):  # noqa: N802
        bounds = super().childrenBounds(frac, orthoRange, items)
        for ax in (0, 1):
            tight = self._data_span(ax, items)
            if tight is not None and sensible_span(*tight) != tight:
                bounds[ax] = list(sensible_span(*tight))
        return bounds

    def _data_span(self, ax: int, items) -> tuple[float, float] | None:
        """The least and greatest finite value on axis ``ax`` of the visible items' data,
        without their pixel padding."""
        spans = []
        for item in self.addedItems if items is None else items:
            if item.isVisible() and getattr(item, "dataBounds", None) is not None:
                span = item.dataBounds(ax, frac=1.0)
                if span is not None and None not in span and all(map(math.isfinite, span)):
                    spans.append(span)
        if not spans:
            return None
        return (float(min(s[0] for s in spans)), float(max(s[1] for s in spans)))


def plot_widget(**kwargs) -> pg.PlotWidget:
    """A ``PlotWidget`` on a :class:`SafeViewBox`."""
    return pg.PlotWidget(viewBox=SafeViewBox(), **kwargs)


def view_is_valid(item: pg.PlotItem) -> bool:
    """Whether a plot's view range is finite with a width and height a plot can show."""
    return all(math.isfinite(a) and math.isfinite(b) and sensible_span(a, b) == (a, b)
               for a, b in item.getViewBox().viewRange())


def state_color(index: int, n_states: int | None = None) -> QColor:
    """The colour of state ``index`` of a model with ``n_states`` states: the palette's
    for up to 10 states, else ``n_states`` different colours around a cyclic colour map."""
    if n_states is None or n_states <= len(PALETTE):
        return QColor(PALETTE[index % len(PALETTE)])
    return QColor(_cyclic_colors(n_states)[index % n_states])


@functools.lru_cache(maxsize=8)
def _cyclic_colors(n: int) -> tuple[str, ...]:
    """``n`` colours evenly spaced around CET-C1 (perceptually uniform, lightness 35 to
    75: legible on light and dark backgrounds), state ``i`` at ``i * step`` of them: a step
    near ``0.38 n`` and prime to ``n``, so that states next to each other, and the first
    and the last, are far apart on the map."""
    step = max(1, round(0.382 * n))
    while math.gcd(step, n) != 1:
        step += 1
    rgba = pg.colormap.get(CYCLIC_MAP).map(np.arange(n) * step % n / n, mode="byte")
    return tuple(QColor(*map(int, c[:3])).name() for c in rgba)


def run_color(index: int) -> QColor:
    """The colour of kept run ``index`` (the current run takes the theme's foreground)."""
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

    def __init__(self, lab: Lab, parent=None, view_box: pg.ViewBox | None = None):
        super().__init__(parent)
        self.lab = lab
        self.plot = pg.PlotWidget(viewBox=view_box if view_box is not None else SafeViewBox())
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


class PhasePlot(RunPlot):
    """One state against another: the current run in the theme's foreground colour, kept
    runs in their own."""

    title = "Phase portrait"

    def __init__(self, lab: Lab, parent=None):
        super().__init__(lab, parent)
        configure_plot(self.plot, "", "")
        self.x_box, self.y_box = QComboBox(), QComboBox()
        self.x_box.setObjectName("phase_x")
        self.y_box.setObjectName("phase_y")
        for label, box in (("x:", self.x_box), ("y:", self.y_box)):
            # as wide as the names of the model shown, whichever it is
            box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
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
            color = QColor(theme_colors()["foreground"]) if index is None else run_color(index)
            pen = run_pen(index, color, thin=len(x) > THIN_ABOVE)
            out[(key, "phase")] = (pen, "current" if index is None else key, x, y, run.ok)
        return out
