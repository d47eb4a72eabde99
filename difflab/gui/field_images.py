"""The field view's pictures: a panel per field shown (a 2-D field's image, a 1-D field's
space-time image above its profile, a 3-D field's three slices, each placed by its
slider), arranged as large as the room allows, their colour maps and levels (automatic,
chosen or held), the fields shown, and the frame shown written as PNG or CSV columns.

:class:`FieldImages` is a part of :class:`~difflab.gui.field2d_view.Field2DView`: it
draws on the view's ``session``, ``images`` layout, ``frame`` and ``redraw``, and hands
the panels' clicks and drags to the view's brush (:mod:`.field_brush`) and probes
(:mod:`.field_probes`).
"""

from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QSlider,
    QWidget,
)

from ..app.field_frames import COLOUR_MAPS, PLANES, image_rect, space_time
from .field_panels import FieldPanel, PaintableBox
from .plots import configure_axes


class FieldImages:
    """The pictures of the fields shown, their colours and export (see the module)."""

    def _colours(self) -> QWidget:
        box = QWidget()
        form = QFormLayout(box)
        form.setContentsMargins(0, 0, 0, 0)
        self.shown_row = QHBoxLayout()
        self.shown_boxes: dict[str, QCheckBox] = {}
        self.map_box = QComboBox()
        self.map_box.addItems(["automatic", *COLOUR_MAPS])
        self.map_box.setToolTip("The colour map of the fields shown")
        self.map_box.textActivated.connect(self._map_chosen)
        self.hold_box = QCheckBox("Hold levels")
        self.hold_box.setToolTip("Keep the colour range of the frame shown now")
        self.hold_box.toggled.connect(self._hold_levels)
        form.addRow("Show", self.shown_row)
        form.addRow("Colours", self.map_box)
        form.addRow(self.hold_box)
        return box

    def _slice_sliders(self) -> QWidget:
        """A slider per plane of a 3-D field: where it cuts the axis across it."""
        box = QWidget()
        row = QHBoxLayout(box)
        row.setContentsMargins(0, 0, 0, 0)
        self.slice_sliders: dict[str, QSlider] = {}
        for plane, (_, _, cut) in PLANES.items():
            slider = QSlider(Qt.Orientation.Horizontal)
            slider.setToolTip(f"Where the {plane} slice cuts the {'xyz'[cut]} axis")
            slider.valueChanged.connect(lambda _: self.redraw())
            row.addWidget(QLabel(f"{plane} at {'xyz'[cut]}"))
            row.addWidget(slider, 1)
            self.slice_sliders[plane] = slider
        self.slices_box = box
        return box

    def _make_panels(self) -> None:
        """A panel per field shown, on the grid's extent: for a 1-D field its space-time
        image above its profile, for a 3-D field its three slices in a column."""
        self.images.clear()
        self.profiles, self.profile_boxes = {}, []
        session, ndim = self.session, self.session.grid.ndim
        if ndim == 2:
            self.panels = [FieldPanel(self.images, i, name, self._clicked, session,
                                      self._dragged, on_pick=self._picked,
                                      on_line=self._lined)
                           for i, name in enumerate(session.shown)]
            for panel in self.panels:
                panel.rect = QRectF(*image_rect(session.grid))
                panel.image.painting = self.paint_box.isChecked()
                panel.image.profiling = self.profile_box.isChecked()
            self._arrange()
            self._mark_probes()
        elif ndim == 1:
            self.panels = [FieldPanel(self.images, i, name, None, session, plane="xt")
                           for i, name in enumerate(session.shown)]
            for i, name in enumerate(session.shown):
                box = PaintableBox(lambda p, n=name: self._paint(n, p),
                                   lambda stage, p, n=name: self._stroke(n, stage, p))
                box.painting = self.paint_box.isChecked()
                plot = self.images.addPlot(row=1, col=i, viewBox=box)
                configure_axes(plot, "x", name)
                self.profiles[name] = plot.plot(pen=pg.mkPen(width=2))
                self.profile_boxes.append(box)
        else:
            self.panels = [FieldPanel(self.images, i, name, self._clicked, session,
                                      self._dragged, row=r, plane=plane)
                           for i, name in enumerate(session.shown)
                           for r, plane in enumerate(PLANES)]
            for panel in self.panels:
                panel.rect = QRectF(*image_rect(session.grid, PLANES[panel.plane][:2]))
                panel.image.painting = self.paint_box.isChecked()
            self._arrange()
        self.arrows.attach(self.panels if ndim == 2 else [], session.model)

    def _make_shown_boxes(self) -> None:
        for box in self.shown_boxes.values():
            self.shown_row.removeWidget(box)
            box.setParent(None)  # gone now, not at the event loop's next turn
            box.deleteLater()
        self.shown_boxes = {}
        for name in self.session.field_names:
            box = QCheckBox(name)
            box.toggled.connect(lambda _: self._shown_chosen())
            self.shown_row.addWidget(box)
            self.shown_boxes[name] = box

    def _view_changed(self) -> None:
        """Follow the session's view: fields shown, colour map, held levels, arrows."""
        session = self.session
        for name, box in self.shown_boxes.items():
            blocked = box.blockSignals(True)
            box.setChecked(name in session.shown)
            box.blockSignals(blocked)
        maps = {session.maps.get(n) for n in session.shown}
        self.map_box.setCurrentText(maps.pop() or "automatic" if len(maps) == 1 else "")
        blocked = self.hold_box.blockSignals(True)
        self.hold_box.setChecked(all(n in session.held_levels for n in session.shown))
        self.hold_box.blockSignals(blocked)
        blocked = self.arrows.box.blockSignals(True)
        self.arrows.box.setChecked(session.arrows)
        self.arrows.box.blockSignals(blocked)
        if tuple(dict.fromkeys(p.name for p in self.panels)) != session.shown:
            self._make_panels()
        self.redraw()

    def _shown_chosen(self) -> None:
        shown = [name for name, box in self.shown_boxes.items() if box.isChecked()]
        if shown:
            self.session.set_view(shown=shown)
        else:
            self._view_changed()  # one field at least stays shown

    def _map_chosen(self, text: str) -> None:
        chosen = None if text == "automatic" else text
        self.session.set_view(maps=dict.fromkeys(self.session.shown, chosen))

    def _hold_levels(self, on: bool) -> None:
        held = {p.name: tuple(p.colorbar.levels()) if on else None for p in self.panels}
        self.session.set_view(held_levels=held)

    def _images_resized(self, event) -> None:
        pg.GraphicsLayoutWidget.resizeEvent(self.images, event)
        self._arrange()

    def _arrange(self) -> None:
        """Pictures as large as the room allows: 2-D fields side by side or one above the
        other; a 3-D field's three slices in a column (a column per field) or in a row
        (a row per field)."""
        ndim = self.session.grid.ndim
        if ndim == 1:
            return
        size, fields = self.images.size(), len(self.session.shown)
        planes = len(PLANES) if ndim == 3 else 1
        w, h = size.width(), size.height()
        across = min(w / fields, h / planes) >= min(w / planes, h / fields)  # bigger
        order = list(PLANES)
        places = []
        for panel in self.panels:
            i, r = self.session.shown.index(panel.name), order.index(panel.plane or "xy")
            places.append((r, i) if across else (i, r))
        if [p.place for p in self.panels] == places:
            return
        for panel in self.panels:
            self.images.ci.removeItem(panel.plot_item)
        for panel, (row, col) in zip(self.panels, places, strict=True):
            self.images.ci.addItem(panel.plot_item, row=row, col=col)
            panel.place = (row, col)

    def _draw_space_time(self, panel: FieldPanel, k: int) -> None:
        """A 1-D field's frames up to ``k``: x across, time up, a row per frame."""
        ts = self.session.ts
        x0, _, width, _ = image_rect(self.session.grid, (0, 0))
        step = ts[1] - ts[0] if len(ts) > 1 else self.session.interval
        panel.rect = QRectF(x0, ts[0] - step / 2, width, ts[k] - ts[0] + step)
        values = space_time(self.session.frames, panel.name, k)
        panel.show(values.T, values)  # image axes: x, then time

    def export_columns(self) -> dict:
        """The frame shown as columns (File > Export data as CSV): ``x``, ``y``, each field."""
        grid = self.session.grid
        frame = self.session.frames[self.frame]
        return {**{axis: np.ravel(c) for axis, c in zip(grid.axis_names, grid.coordinates,
                                                        strict=True)},
                **{name: np.ravel(values) for name, values in frame.items()}}

    def export_png(self, path) -> list[Path]:
        """Write the frame shown as PNG, one pixel per grid point: ``path`` for a model of
        one field, else ``<stem>-<field>.png`` per field. Returns the files written."""
        path = Path(path)
        paths = []
        for panel in self.panels:  # a 1-D field's space-time image, a 3-D field's slices
            rgba = panel.rgba()
            image = QImage(rgba.data, rgba.shape[1], rgba.shape[0], 4 * rgba.shape[1],
                           QImage.Format.Format_RGBA8888)
            part = f"{panel.name}-{panel.plane}" if panel.plane not in ("", "xt") else panel.name
            target = path if len(self.panels) == 1 else path.with_name(
                f"{path.stem}-{part}{path.suffix or '.png'}")
            if not image.save(str(target), "PNG"):
                raise OSError(f"could not write {target}")
            paths.append(target)
        return paths

    def _export_clicked(self) -> None:
        name, _ = QFileDialog.getSaveFileName(self, "Export frame as PNG",
                                              f"{self.session.model_name}.png", "PNG (*.png)")
        if name:
            written = self.export_png(name)
            self.hovered.emit("wrote " + ", ".join(str(p) for p in written))
