"""The field view's probes: the value under the cursor (to the status bar), a point's
value over the frames so far (a click with Paint off) and a field's profile along a line
(a shift+drag, any drag with Profile on) between the grid points nearest its ends, for
the frame shown; both drawn below the images and marked on them.

:class:`FieldProbes` is a part of :class:`~difflab.gui.field2d_view.Field2DView`: it
reads the view's ``session``, ``panels``, ``frame`` and ``hovered`` signal.
"""

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QWidget

from ..app.field_frames import line_profile, nearest_cell, point_series, profile_samples
from .field_panels import PaintableImage
from .plots import configure_axes


class FieldProbes:
    """A point's time series, a line's profile, the value under the cursor (see the module)."""

    def _probe_plots(self) -> QWidget:
        """Below the images, shown once used: a point's value over time, a line's profile."""
        self.probes = pg.GraphicsLayoutWidget()
        self.probes.setObjectName("field2d_probes")
        self.probes.setFixedHeight(170)
        self.series_plot = self.probes.addPlot(row=0, col=0)
        configure_axes(self.series_plot, "t", "value")
        self.series_curve = self.series_plot.plot(pen=pg.mkPen(width=2), symbol="o",
                                                  symbolSize=4)
        self.profile_plot = self.probes.addPlot(row=0, col=1)
        configure_axes(self.profile_plot, "distance", "value")
        self.profile_curve = self.profile_plot.plot(pen=pg.mkPen(width=2))
        self.probes.hide()
        return self.probes

    def _draw_probes(self, k: int) -> None:
        """The picked point's value over all frames so far, the line's profile at frame ``k``."""
        session = self.session
        if self.pick is not None:
            name, index = self.pick
            series = point_series(session.frames, name, index)
            self.series_curve.setData(np.asarray(session.ts)[:series.size], series)
        if self.line is not None:
            name, start, end = self.line
            n = profile_samples(session.grid, start, end)
            length = float(np.hypot(end[0] - start[0], end[1] - start[1]))
            self.profile_curve.setData(np.linspace(0.0, length, n),
                                       line_profile(session.frames[k][name], session.grid,
                                                    start, end, n))

    def _mouse_moved(self, scene_pos) -> None:
        if self.session.grid.ndim != 2:
            return
        for panel in self.panels:
            box = panel.plot_item.getViewBox()
            if box.sceneBoundingRect().contains(scene_pos):
                point = box.mapSceneToView(scene_pos)
                self.hovered.emit(self.value_text(panel.name, (point.x(), point.y())))
                return

    def value_text(self, name: str, point) -> str:
        """``name(x, y) = value at t`` for the grid point nearest ``point``."""
        session = self.session
        cell = nearest_cell(session.grid, point)
        if cell is None:
            return ""
        x, y = (session.grid.axis_coordinates(a)[i] for a, i in enumerate(cell))
        value = session.frames[self.frame][name][cell]
        return f"{name}({x:.4g}, {y:.4g}) = {value:.6g} at t = {session.ts[self.frame]:.5g}"

    def _profiling(self, on: bool) -> None:
        for panel in self.panels:
            panel.image.profiling = on

    def _picked(self, image: PaintableImage, point) -> None:
        """A click with Paint off: follow the field's value at the nearest grid point."""
        cell = nearest_cell(self.session.grid, point)
        if cell is None:
            return
        panel = next(p for p in self.panels if p.image is image)
        self.pick = (panel.name, cell)
        self.series_plot.setTitle(f"{panel.name} at ({_coordinates_text(self.session.grid, cell)})")
        self._mark_probes()
        self.probes.show()
        self._draw_probes(self.frame)

    def _lined(self, image: PaintableImage, stage: str, start, point) -> None:
        """A profile drag: the line between the grid points nearest its ends."""
        grid = self.session.grid
        panel = next(p for p in self.panels if p.image is image)
        self.line = (panel.name, _snapped(grid, start), _snapped(grid, point))
        self.profile_plot.setTitle(f"{panel.name} along the line")
        self._mark_probes()
        self.probes.show()
        self._draw_probes(self.frame)

    def _mark_probes(self) -> None:
        """Draw the picked point and the profile's line on their fields' images."""
        for panel in self.panels:
            for item in getattr(panel, "probe_items", ()):
                panel.plot_item.removeItem(item)
            panel.probe_items = []
            if self.pick is not None and self.pick[0] == panel.name:
                x, y = (self.session.grid.axis_coordinates(a)[i]
                        for a, i in enumerate(self.pick[1]))
                marker = pg.ScatterPlotItem([x], [y], symbol="+", size=12,
                                            pen=pg.mkPen("w", width=2), brush=None)
                panel.probe_items.append(marker)
            if self.line is not None and self.line[0] == panel.name:
                (x0, y0), (x1, y1) = self.line[1:]
                panel.probe_items.append(pg.PlotDataItem([x0, x1], [y0, y1],
                                                         pen=pg.mkPen("w", width=2)))
            for item in panel.probe_items:
                panel.plot_item.addItem(item, ignoreBounds=True)


def _snapped(grid, point) -> tuple[float, ...]:
    """The coordinates of the grid point nearest ``point`` (on the grid's edge beyond it)."""
    coordinates = []
    for axis, p in enumerate(point):
        xs = grid.axis_coordinates(axis)
        i = int(np.clip(round((p - xs[0]) / grid.spacing[axis]), 0, len(xs) - 1))
        coordinates.append(float(xs[i]))
    return tuple(coordinates)


def _coordinates_text(grid, cell) -> str:
    return ", ".join(f"{grid.axis_coordinates(a)[i]:.4g}" for a, i in enumerate(cell))
