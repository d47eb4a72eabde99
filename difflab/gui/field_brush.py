"""The field view's brush: with Paint on, a click paints a disc of the brush's value and
radius into the field of the frame shown (a 1-D field: an interval, clicked on its
profile; a 3-D field: a ball centred on the point clicked on a slice, at the slice's
place along the axis it cuts), a drag paints a stroke; each is one undo step of the
session, and a run under way goes on from the painted field.

:class:`FieldBrush` is a part of :class:`~difflab.gui.field2d_view.Field2DView`: it
paints through the view's ``session`` into its ``frame``, on its ``panels``.
"""

from PySide6.QtWidgets import QCheckBox, QFormLayout, QWidget

from ..app.field_frames import slice_point
from .field_panels import FieldPanel, PaintableImage
from .widgets import FloatSpinBox


class FieldBrush:
    """The brush's controls and what a click or drag paints (see the module)."""

    def _brush(self) -> QWidget:
        box = QWidget()
        form = QFormLayout(box)
        form.setContentsMargins(0, 0, 0, 0)
        self.paint_box = QCheckBox("Paint (click or drag on a field)")
        self.paint_box.toggled.connect(self._painting)
        self.brush_value = FloatSpinBox()
        self.brush_value.setRange(-1e12, 1e12)
        self.brush_value.setValue(1.0)
        self.brush_radius = FloatSpinBox()
        self.brush_radius.setRange(0.0, 1e12)
        self.profile_box = QCheckBox("Profile (drag a line on a field)")
        self.profile_box.setToolTip("With Paint off: a drag draws a line and plots the "
                                    "field along it (shift+drag does so too)")
        self.profile_box.toggled.connect(self._profiling)
        form.addRow(self.paint_box)
        form.addRow("value", self.brush_value)
        form.addRow("radius", self.brush_radius)
        form.addRow(self.profile_box)
        return box

    def _painting(self, on: bool) -> None:
        for item in [p.image for p in self.panels] + self.profile_boxes:
            item.painting = on

    def _clicked(self, image: PaintableImage, point) -> None:
        panel = next(p for p in self.panels if p.image is image)
        self._paint(panel.name, self._in_space(panel, point))

    def _dragged(self, image: PaintableImage, stage: str, point) -> None:
        panel = next(p for p in self.panels if p.image is image)
        self._stroke(panel.name, stage, self._in_space(panel, point))

    def _in_space(self, panel: FieldPanel, point) -> tuple:
        """The grid's point under ``point`` of ``panel``: on a 3-D field's slice, where
        the slice cuts the axis across it."""
        if not panel.plane:
            return point
        index = self.slice_sliders[panel.plane].value()
        return slice_point(self.session.grid, panel.plane, index, point)

    def _paint(self, name: str, point) -> None:
        """A click with Paint on: a disc (an interval in 1-D, a ball in 3-D) into the
        frame shown."""
        self.session.paint(self.frame, name, point, self.brush_radius.value(),
                           self.brush_value.value())

    def _stroke(self, name: str, stage: str, point) -> None:
        """A brush stroke: discs along the drag, one undo step when the button is let go."""
        if stage == "begin":
            self.session.begin_stroke(self.frame, name, point, self.brush_radius.value(),
                                      self.brush_value.value())
            return
        self.session.stroke(point)
        if stage == "end":
            self.session.end_stroke()
