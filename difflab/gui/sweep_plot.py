"""The sweep's plot: a line or an orbit diagram over one axis, a heatmap over two.

Each item is created once and refilled as chunks arrive: the line (one value per point),
the orbit diagram's dots (several values per point, such as ``maxima``), the heatmap and
its colour bar (on a diverging map centred at 0 for ``lyapunov``), and the marker of the
clicked point.
Points with no value are drawn in colours no value has: failed ones magenta, those not
computed (yet) dark grey, those solved without a value (an observable that does not apply,
such as the period of a decaying oscillation) light grey; the title counts them.
"""

import numpy as np
import pyqtgraph as pg

from ..app.sweeps import NOT_RUN, Axis, SweepRequest, SweepView, axis_title
from .plots import SafeViewBox, configure_plot, sensible_span

COLORMAPS = {False: "viridis", True: "CET-D1"}  # by SweepView.diverging
# RGBA of the points with no value, by kind: none is in either colour map
NO_VALUE = {"failed": (255, 0, 255, 255), "not computed": (64, 64, 64, 255),
            "no value": (175, 175, 175, 255)}


class SweepPlot(pg.PlotWidget):
    """The plot of one sweep; ``unit_of(name)`` gives a parameter's unit for the labels."""

    def __init__(self, unit_of=lambda name: "", parent=None):
        super().__init__(parent, viewBox=SafeViewBox())
        self.unit_of = unit_of
        configure_plot(self, "", "")
        self.curve = pg.PlotDataItem(pen=pg.mkPen("#1f77b4", width=2), symbol="o", symbolSize=5,
                                     symbolBrush="#1f77b4", symbolPen=None)
        self.image = pg.ImageItem(axisOrder="col-major")
        self.colorbar = pg.ColorBarItem(colorMap=pg.colormap.get("viridis"), interactive=False,
                                        width=14)
        self.orbit = pg.ScatterPlotItem(size=2, pen=None, brush=pg.mkBrush(31, 119, 180, 170))
        self.holes = pg.ImageItem(axisOrder="col-major")  # the heatmap's points with no value
        self.missing = pg.ScatterPlotItem(size=9, symbol="x", pen=None)  # the line's
        self.marker = pg.ScatterPlotItem(size=12, pen=pg.mkPen("#d62728", width=2), brush=None)
        item = self.getPlotItem()
        for thing in (self.image, self.holes, self.curve, self.orbit, self.missing, self.marker):
            item.addItem(thing)
        self.colorbar.setImageItem(self.image, insert_in=item)
        self.clear_sweep()
        self._levels = None

    def clear_sweep(self) -> None:
        """Show no sweep."""
        for thing in (self.image, self.holes, self.curve, self.orbit, self.colorbar):
            thing.setVisible(False)
        self.marker.setData([], [])
        self.missing.setData([], [])
        self.note = ""
        self.setTitle(None)

    def axis_label(self, axis: Axis) -> str:
        """``rho``, ``g [m/s^2]``, ``x(0)``; ``log10 ...`` on a log axis."""
        unit = self.unit_of(axis.name)
        label = f"{axis_title(axis.name)} [{unit}]" if unit else axis_title(axis.name)
        return f"log10 {label}" if axis.log else label

    def prepare(self, request: SweepRequest | SweepView) -> None:
        """Show the line or the orbit diagram (1 axis), or the heatmap and its colour bar
        (2 axes)."""
        two = len(request.axes) == 2
        y_label = self.axis_label(request.axes[1]) if two else request.spec
        configure_plot(self, self.axis_label(request.axes[0]), y_label, grid=not two)
        for thing in (self.curve, self.orbit, self.marker, self.missing):
            thing.setData([], [])
        self.curve.setVisible(not two and not request.vector)
        self.orbit.setVisible(not two and request.vector)
        self.image.setVisible(two)
        self.holes.setVisible(two)
        self.note = ""
        self.setTitle(None)
        self.colorbar.setVisible(two)
        self.colorbar.setColorMap(pg.colormap.get(COLORMAPS[_diverging(request)]))
        self.colorbar.axis.setLabel(request.spec)
        self._levels = None
        item = self.getPlotItem()
        if two:  # a fixed frame: filling the image in then repaints the image alone
            x0, y0, w, h = _rect(*(_coords(a, a.values()) for a in request.axes))
            self.image.setImage(np.full(request.shape, np.nan), autoLevels=False)
            self.holes.setImage(np.zeros((*request.shape, 4), np.ubyte), autoLevels=False,
                                levels=(0, 255))
            for image in (self.image, self.holes):
                image.setRect(x0, y0, w, h)
            item.disableAutoRange()
            item.setRange(xRange=(x0, x0 + w), yRange=(y0, y0 + h), padding=0)
        else:
            item.enableAutoRange()

    def draw(self, data: SweepView, live: bool) -> None:
        """Draw what ``data`` has so far; ``live``: more is coming (colour levels only widen)."""
        axes = data.axes
        if len(axes) == 1 and data.vector:
            x, y = data.orbit()
            self.orbit.setData(_coords(axes[0], x), y)
        elif len(axes) == 1:
            self.curve.setData(_coords(axes[0], axes[0].values()), data.grid(), connect="finite")
        else:
            self._draw_image(data.grid(), data.diverging, live)
        self._draw_holes(data)

    def _draw_holes(self, data: SweepView) -> None:
        """Colour the points with no value by kind, and count them in the title."""
        kinds = holes(data)
        if len(data.axes) == 2:
            rgba = np.zeros((data.result.result.size, 4), np.ubyte)
            for kind, where in kinds.items():
                rgba[where] = NO_VALUE[kind]
            self.holes.updateImage(rgba.reshape(*data.shape, 4))
        elif not data.vector:
            self._draw_missing(data, kinds)
        note = ", ".join(f"{k}: {int(w.sum())}" for k, w in kinds.items() if w.any())
        if note != self.note:
            self.note = note
            self.setTitle(note or None, color="#555", size="9pt")

    def _draw_missing(self, data: SweepView, kinds: dict) -> None:
        """The line's points with no value: crosses on its lowest value (or at 0)."""
        x, y = self.curve.getData()
        finite = y[np.isfinite(y)] if y is not None else np.array([])
        base = float(finite.min()) if finite.size else 0.0
        swept = _coords(data.axes[0], data.axes[0].values())
        spots = [dict(pos=(swept[i], base), brush=None, pen=pg.mkPen(NO_VALUE[k][:3], width=2))
                 for k, where in kinds.items() for i in np.flatnonzero(where)]
        self.missing.setData(spots)

    def _draw_image(self, grid: np.ndarray, diverging: bool, live: bool) -> None:
        """Fill the heatmap in; its colour levels follow the values in hand (of the points
        that succeeded): they are set again when those leave them or fill less than
        ``1 - tolerance`` of them, so a value replaced or withdrawn never stretches them."""
        finite = grid[np.isfinite(grid)]
        self.image.updateImage(grid)
        if finite.size == 0:
            return
        lo, hi = float(finite.min()), float(finite.max())
        if diverging:  # centred at 0
            hi = max(abs(lo), abs(hi))
            lo = -hi
        if self._levels is None or _moved(self._levels, lo, hi) or not live:
            levels = sensible_span(lo, hi)  # a constant grid: around its value
            if levels != self._levels:  # new levels re-tick the colour bar: only when needed
                self.colorbar.setLevels(levels)
                self._levels = levels

    def mark(self, data: SweepView, index: int) -> str:
        """Mark point ``index`` (an orbit diagram's every value on its line); returns the
        observable there in words."""
        point = data.point(index)
        xy = [_coords(a, point[a.name]) for a in data.axes]
        value = data.values[index]
        if data.vector:
            value = value[np.isfinite(value)]
            self.marker.setData(np.full(value.size, xy[0]), value)
            return f"{value.size} values"
        self.marker.setData([xy[0]], [xy[1] if len(xy) > 1 else value])
        return f"{value:.4g}"


def _coords(axis: Axis, values):
    """Where values of ``axis`` sit on the plot (log10 on a log axis)."""
    return np.log10(values) if axis.log else values


def _diverging(request: SweepRequest | SweepView) -> bool:
    return request.reduction == "lyapunov"


def holes(data: SweepView) -> dict[str, np.ndarray]:
    """``{kind: mask}`` of the points with no value: failed, not computed (yet), and solved
    with no value (NaN everywhere: an observable that does not apply there)."""
    code = np.asarray(data.result.result)
    values = data.values
    solved_nan = ~np.isfinite(values if values.ndim == 1 else np.nanmax(
        np.where(np.isfinite(values), values, -np.inf), axis=1))
    return {"failed": (code != 0) & (code != NOT_RUN), "not computed": code == NOT_RUN,
            "no value": (code == 0) & solved_nan}


def _moved(levels, lo: float, hi: float, tolerance: float = 0.05) -> bool:
    """True when ``lo .. hi`` leaves ``levels``, or falls short of either end, by more
    than ``tolerance`` of their span."""
    span = max(levels[1] - levels[0], 1e-300)
    return abs(lo - levels[0]) > tolerance * span or abs(hi - levels[1]) > tolerance * span


def _rect(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float, float]:
    """The rectangle of an image whose pixel centres sit at the grid values ``x``, ``y``."""

    def span(v):
        if len(v) == 1:
            return v[0] - 0.5, 1.0
        d = (v[-1] - v[0]) / (len(v) - 1)
        return v[0] - d / 2, d * len(v)

    (x0, w), (y0, h) = span(x), span(y)
    return x0, y0, w, h
