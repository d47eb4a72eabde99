"""One field's picture: an image that takes the brush's clicks and drags, its colour bar."""

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt

from ..app.fields import FieldSession
from .plots import SafeViewBox, configure_axes


class PaintableImage(pg.ImageItem):
    """An image that reports clicks and drags (in view coordinates) while ``painting``
    is on: ``on_click(image, point)``, ``on_drag(image, stage, point)`` with ``stage``
    ``"begin"`` (at the press), ``"move"`` or ``"end"``. With painting off, a click goes
    to ``on_pick(image, point)`` and a shift+drag (any drag while ``profiling``) to
    ``on_line(image, stage, start, point)``; other drags pan and zoom as usual."""

    def __init__(self, on_click, on_drag=None, on_pick=None, on_line=None):
        super().__init__(axisOrder="col-major")
        self.painting = False
        self.profiling = False
        self._on_click, self._on_drag = on_click, on_drag
        self._on_pick, self._on_line = on_pick, on_line
        self._line_start = None
        self._press_modifiers = Qt.KeyboardModifier.NoModifier

    def _draws_line(self, event) -> bool:
        if self.painting or self._on_line is None:
            return False
        if not event.isStart():
            return self._line_start is not None
        held = event.modifiers() | self._press_modifiers  # shift at the press counts
        return self.profiling or bool(held & Qt.KeyboardModifier.ShiftModifier)

    def mousePressEvent(self, event):  # Qt override: note the keys held, pass it on
        self._press_modifiers = event.modifiers()
        super().mousePressEvent(event)

    def mouseDragEvent(self, event):  # pyqtgraph override
        if event.button() != Qt.MouseButton.LeftButton:
            event.ignore()
            return
        if self._draws_line(event):
            event.accept()
            if event.isStart():
                press = self.mapToView(event.buttonDownPos())
                self._line_start = (press.x(), press.y())
            point = self.mapToView(event.pos())
            stage = "end" if event.isFinish() else "move"
            self._on_line(self, stage, self._line_start, (point.x(), point.y()))
            if event.isFinish():
                self._line_start = None
            return
        if not self.painting or self._on_drag is None:
            event.ignore()
            return
        event.accept()
        if event.isStart():
            press = self.mapToView(event.buttonDownPos())
            self._on_drag(self, "begin", (press.x(), press.y()))
        point = self.mapToView(event.pos())
        self._on_drag(self, "end" if event.isFinish() else "move", (point.x(), point.y()))

    def mouseClickEvent(self, event):  # pyqtgraph override
        report = self._on_click if self.painting else self._on_pick
        if report is None or event.button() != Qt.MouseButton.LeftButton:
            event.ignore()
            return
        event.accept()
        point = self.mapToView(event.pos())
        report(self, (point.x(), point.y()))


class PaintableBox(SafeViewBox):
    """The view box of a 1-D field's profile: while ``painting``, a left click reports
    ``on_click((x,))`` and a left drag ``on_drag(stage, (x,))`` (as
    :class:`PaintableImage`'s); otherwise it pans and zooms as usual."""

    def __init__(self, on_click, on_drag):
        super().__init__()
        self.painting = False
        self._on_click, self._on_drag = on_click, on_drag

    def _x(self, scene_pos) -> tuple[float]:
        return (self.mapSceneToView(scene_pos).x(),)

    def mouseClickEvent(self, event):  # pyqtgraph override
        if not self.painting or event.button() != Qt.MouseButton.LeftButton:
            super().mouseClickEvent(event)
            return
        event.accept()
        self._on_click(self._x(event.scenePos()))

    def mouseDragEvent(self, event, axis=None):  # pyqtgraph override
        if not self.painting or event.button() != Qt.MouseButton.LeftButton:
            super().mouseDragEvent(event, axis)
            return
        event.accept()
        if event.isStart():
            self._on_drag("begin", self._x(event.buttonDownScenePos()))
        self._on_drag("end" if event.isFinish() else "move", self._x(event.scenePos()))


class FieldPanel:
    """One field's plot: the image, its colour bar and colour map. ``plane``: the slice
    of a 3-D field it shows (``"xy"``, ...), ``"xt"`` for a 1-D field's space-time
    image, ``""`` for a 2-D field."""

    def __init__(self, layout: pg.GraphicsLayoutWidget, column: int, name: str, on_click,
                 session: FieldSession, on_drag=None, *, row: int = 0, plane: str = "",
                 on_pick=None, on_line=None):
        self.name, self.session, self.plane = name, session, plane
        self.plot_item = layout.addPlot(row=row, col=column, viewBox=SafeViewBox())
        self.place = (row, column)
        self.plot_item.setAspectLocked(plane != "xt")
        self.image = PaintableImage(on_click, on_drag, on_pick, on_line)
        self.plot_item.addItem(self.image)
        self.map_name = ""
        self.rect = QRectF(0.0, 0.0, 1.0, 1.0)  # the grid's extent, set by the view
        self.colorbar = pg.ColorBarItem(colorMap="viridis", interactive=False, width=14)
        self.colorbar.setImageItem(self.image, insert_in=self.plot_item)
        # no grid: its lines would cross the field, and every new frame would repaint the axes
        configure_axes(self.plot_item, *(plane or "xy"), grid=False)
        self.plot_item.setTitle(f"{name} ({plane})" if plane else name)

    def show(self, values: np.ndarray, whole: np.ndarray | None = None) -> None:
        """Draw a frame of the field: image, colour map and levels (those of ``whole``,
        the field a slice is cut from, where given)."""
        whole = values if whole is None else whole
        name = self.session.colour_map(self.name, whole)
        if name != self.map_name:
            self.map_name = name
            self.colorbar.setColorMap(pg.colormap.get(name))
        lo, hi = self.session.levels(self.name, whole)
        self.image.setImage(values, autoLevels=False, levels=(lo, hi))
        self.image.setRect(self.rect)  # its scale follows the image's shape
        self.colorbar.setLevels((lo, hi))

    def rgba(self) -> np.ndarray:
        """The frame shown as RGBA bytes, one pixel per grid point, rows from y high to low."""
        values = np.asarray(self.image.image, dtype=float)
        lo, hi = self.colorbar.levels()
        scaled = np.clip((values - lo) / (hi - lo), 0.0, 1.0)
        colours = pg.colormap.get(self.map_name).map(np.nan_to_num(scaled), mode="byte")
        return np.ascontiguousarray(np.transpose(colours, (1, 0, 2))[::-1])
