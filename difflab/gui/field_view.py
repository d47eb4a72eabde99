"""The field view: a 1-D field's space-time image and its profile at a chosen time.

Shown for models whose states form a field (:func:`difflab.app.views.field_of`): the
image has position across and time up; the horizontal line on it is the cursor time
(drag it), and the plot below draws the field at the saved time nearest it.
"""

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF
from PySide6.QtWidgets import QVBoxLayout, QWidget

from ..app.lab import Lab
from ..app.views import field_of
from .plots import SafeViewBox, configure_axes, sensible_span
from .widgets import Throttle

COLORMAP = "viridis"


class FieldView(QWidget):
    """Space-time image (x across, t up) over the profile at the cursor time."""

    title = "Field"

    def __init__(self, lab: Lab, parent=None):
        super().__init__(parent)
        self.lab = lab
        self.field = None
        self.layout_widget = pg.GraphicsLayoutWidget()
        self.layout_widget.setObjectName("field_view")
        self.image_plot = self.layout_widget.addPlot(row=0, col=0, viewBox=SafeViewBox())
        self.image = pg.ImageItem(axisOrder="col-major")
        self.image_plot.addItem(self.image)
        self.colorbar = pg.ColorBarItem(colorMap=COLORMAP, interactive=False, width=14)
        self.colorbar.setImageItem(self.image, insert_in=self.image_plot)
        self.cursor = pg.InfiniteLine(0.0, angle=0, movable=True, pen=pg.mkPen("#ff4040", width=2))
        self.image_plot.addItem(self.cursor)
        self.profile_plot = self.layout_widget.addPlot(row=1, col=0, viewBox=SafeViewBox())
        self.profile = self.profile_plot.plot(pen=pg.mkPen("#1f77b4", width=2))
        self.layout_widget.ci.layout.setRowStretchFactor(0, 3)
        self.layout_widget.ci.layout.setRowStretchFactor(1, 2)
        self.plot = self.layout_widget  # what File > Export draws
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.layout_widget)
        self.redraw = Throttle(self.draw, 16, self)
        self.cursor.sigPositionChanged.connect(lambda _: self.draw_profile())
        lab.events.current.connect(lambda e: self.redraw())
        lab.events.model.connect(lambda e: self.model_changed())
        self.model_changed()

    def model_changed(self) -> None:
        self.field = field_of(self.lab.model)
        name = self.field.name if self.field else "field"
        configure_axes(self.image_plot, "x (position)", "t")
        configure_axes(self.profile_plot, "x (position)", name)
        self.redraw()

    def run(self):
        run = self.lab.current
        if run is None or self.field is None or not set(self.field.states) <= set(run.state_names):
            return None
        return run

    def draw(self) -> None:
        run = self.run()
        if run is None or len(run.ts) < 2:
            self.image.clear()
            self.profile.setData([], [])
            return
        values = self.field.image(run)
        x, ts = self.field.x, np.asarray(run.ts)
        self.image.setImage(values, autoLevels=False)
        finite = values[np.isfinite(values)]
        self.image_plot.setTitle(None if finite.size else
                                 "no finite values: the run failed (see the log)")
        if finite.size:  # a constant field: levels around its value
            self.colorbar.setLevels(sensible_span(float(finite.min()), float(finite.max())))
        dx = (x[-1] - x[0]) / max(len(x) - 1, 1)
        self.image.setRect(QRectF(x[0] - dx / 2, ts[0], x[-1] - x[0] + dx,
                                  (ts[-1] - ts[0]) or 1.0))
        self.cursor.setBounds((ts[0], ts[-1]))
        if not ts[0] <= self.cursor.value() <= ts[-1]:
            self.cursor.setValue(ts[0])
        self.draw_profile()

    def draw_profile(self) -> None:
        run = self.run()
        if run is None:
            return
        t, values = self.field.profile(run, self.cursor.value())
        self.profile.setData(self.field.x, values)
        self.profile_plot.setTitle(f"{self.field.name} at t = {t:.4g}")

    def set_time(self, t: float) -> None:
        """Move the cursor to time ``t``."""
        self.cursor.setValue(t)

    def export_columns(self) -> dict:
        run = self.run()
        if run is None:
            return {}
        t, values = self.field.profile(run, self.cursor.value())
        return {"x": self.field.x, f"{self.field.name}(t={t:.6g})": values}
