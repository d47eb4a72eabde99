"""The 2-D field view: each field of a field model as a live image, a time scrubber, a brush.

Fed by a Qt-free :class:`difflab.app.fields.FieldSession`. A run streams on a
:class:`~difflab.gui.workers.TaskWorker` in chunks of frames; the images follow the newest
frame unless the scrubber was moved back. Each field is an ``ImageItem`` on axes in the
grid's coordinates with a colour bar: viridis for a field of one sign, a diverging map
centred at 0 for a signed one, levels from the frame shown (or held), fields shown and
colour maps as chosen. With Paint on, a click paints a disc of the brush's value into the
field shown (a 1-D field: an interval, clicked on its profile), a drag paints a stroke
(each one undo step, Edit > Undo); a run under way continues from the painted field.
A run's frames are shown one by one as they stream (:mod:`.field_pacer`). The value
under the cursor goes to ``hovered``.
With Paint off, a click on a field plots its value at the nearest grid point over the
frames so far, and a shift+drag (any drag with Profile on) plots the field along the line
drawn, between the grid points nearest its ends, for the frame shown.
"""

from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QImage
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSlider,
    QVBoxLayout,
    QWidget,
)

from ..app.field_frames import (
    COLOUR_MAPS,
    PLANES,
    choice_label,
    image_rect,
    line_profile,
    model_choices,
    nearest_cell,
    parse_choice,
    plane_slice,
    point_series,
    profile_samples,
    space_time,
)
from ..app.fields import FieldSession, stream_frames
from .field_movie import ask_and_export
from .field_pacer import FramePacer
from .field_panels import FieldPanel, PaintableBox, PaintableImage
from .field_sweep_panel import FieldSweepWindow
from .field_vectors import FieldArrows
from .parameters import ParameterPanel
from .plots import configure_axes
from .widgets import FloatSpinBox, Throttle, controls_beside_plots
from .workers import TaskWorker, iterate, while_alive

GRID_CHOICES = (32, 64, 128, 256, 512)
#: points per axis offered by number of axes
GRID_CHOICES_BY_AXES = {1: (64, 128, 256, 512, 1024), 2: GRID_CHOICES, 3: (16, 24, 32, 48, 64)}
PLAY_MS = 40  # one frame per tick while playing
RESOLVE_MS = 150  # parameter edits re-solve once they pause this long
#: what a parameter change re-solves, by its label: from the frame shown (True) or from t0
ON_CHANGE = {"restart from t0": False, "go on from this frame": True}
TASK = "fields"


class Field2DView(QWidget):
    """The session's fields side by side, a scrubber, run and brush controls, sliders.

    ``host``: the main window, whose ``start_worker`` / ``worker_done`` run the stream
    (Stop stops it, closing joins it); without one the view runs it itself.
    Signals: ``hovered(text)``: the value under the cursor, ``drawn(frame)``,
    ``running_changed(on)``: a run started or ended.
    """

    title = "Fields 2-D"
    hovered = Signal(str)
    drawn = Signal(int)
    running_changed = Signal(bool)

    def __init__(self, session: FieldSession, host=None, parent=None):
        super().__init__(parent)
        self.session, self.host = session, host
        self.worker: TaskWorker | None = None
        self.panels: list[FieldPanel] = []
        self.profiles: dict = {}  # a 1-D field's profile curve by name
        self.profile_boxes: list[PaintableBox] = []  # where a 1-D field is painted
        self.pick: tuple | None = None  # (field, grid index) of the point series
        self.line: tuple | None = None  # (field, start, end) of the line profile
        self.images = pg.GraphicsLayoutWidget()
        self.images.setObjectName("field2d_images")
        self.images.scene().sigMouseMoved.connect(self._mouse_moved)
        self.images.resizeEvent = self._images_resized
        self.redraw = Throttle(self.draw, 16, self)
        self._resolve = QTimer(self, singleShot=True, interval=RESOLVE_MS)
        self._resolve.timeout.connect(self._re_solve)
        self._player = QTimer(self, interval=PLAY_MS)
        self._player.timeout.connect(self._play_step)
        self._build()
        session.events.model.connect(lambda e: self._model_changed())
        session.events.params.connect(
            lambda e: None if getattr(e, "loaded", False) else self._resolve.start())
        session.events.view.connect(lambda e: self._view_changed())
        session.events.frames.connect(self._frames_changed)
        session.events.log.connect(lambda e: self.hovered.emit(e.text))
        self._model_changed()
        self._view_changed()
        self._resolve.stop()  # nothing runs until asked: choosing a model, Run

    # -- construction -------------------------------------------------------------------

    def _build(self) -> None:
        controls = QVBoxLayout()
        form = QFormLayout()
        self.model_box = QComboBox()
        self.model_box.addItems([choice_label(*choice) for choice in model_choices()])
        self.model_box.textActivated.connect(lambda text: self.choose_model(*_choice(text)))
        self.points_box = QComboBox()
        self.points_box.textActivated.connect(lambda text: self.choose_model(
            self.session.model_name, int(text.split()[0]), self.session.grid.ndim))
        self.t1_box = FloatSpinBox()
        self.t1_box.setRange(1e-9, 1e12)
        self.t1_box.editingFinished.connect(self._t1_edited)
        form.addRow("Model", self.model_box)
        form.addRow("Grid", self.points_box)
        form.addRow("t1", self.t1_box)
        controls.addLayout(form)
        controls.addLayout(self._run_buttons())
        controls.addLayout(self._on_change_box())
        controls.addWidget(self._brush())
        controls.addWidget(self._colours())
        self.arrows = FieldArrows(self.redraw)
        self.arrows.box.toggled.connect(lambda on: self.session.set_view(arrows=on))
        controls.addWidget(self.arrows.box)
        self.export_button = QPushButton("Export frame as PNG…")
        self.export_button.clicked.connect(self._export_clicked)
        controls.addWidget(self.export_button)
        self.movie_button = QPushButton("Export run as movie…")
        self.movie_button.setToolTip("The frames so far as MP4 (where ffmpeg is present) "
                                     "or animated GIF, drawn as shown here")
        self.movie_button.clicked.connect(lambda: ask_and_export(self))
        controls.addWidget(self.movie_button)
        self.sweep_window: FieldSweepWindow | None = None
        self.sweep_button = QPushButton("Sweep a parameter…")
        self.sweep_button.setToolTip("A number of a field (mean, max, norm at t1) over a "
                                     "parameter's range; click a point to see its field")
        self.sweep_button.clicked.connect(self.open_sweep)
        controls.addWidget(self.sweep_button)
        self.parameters = ParameterPanel(self.session)
        controls.addWidget(self.parameters, 1)
        right = QWidget()
        column = QVBoxLayout(right)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.images, 1)
        column.addWidget(self._probe_plots())
        column.addWidget(self._slice_sliders())
        column.addLayout(self._scrubber())
        controls_beside_plots(self, controls, 260, right)

    def _run_buttons(self) -> QHBoxLayout:
        row = QHBoxLayout()
        self.run_button = QPushButton("Run")
        self.run_button.setToolTip("Run from the initial state (frame 0) to t1")
        self.run_button.clicked.connect(lambda: self.run(0))
        self.continue_button = QPushButton("Continue")
        self.continue_button.setToolTip("Run on to t1 from the last frame")
        self.continue_button.clicked.connect(lambda: self.run(len(self.session.frames) - 1))
        self.stop_button = QPushButton("Stop")
        self.stop_button.clicked.connect(self.stop)
        for button in (self.run_button, self.continue_button, self.stop_button):
            row.addWidget(button)
        return row

    def _on_change_box(self) -> QHBoxLayout:
        """Whether a parameter change runs again from t0 or goes on from the frame shown."""
        row = QHBoxLayout()
        self.on_change = QComboBox()
        self.on_change.addItems(list(ON_CHANGE))
        self.on_change.setToolTip("What a parameter change re-solves: the whole run from the "
                                  "initial state, or from the frame shown on, so the "
                                  "pattern goes on under the new parameters")
        row.addWidget(QLabel("On a change"))
        row.addWidget(self.on_change, 1)
        return row

    def _re_solve(self) -> None:
        """Run again after a parameter change, from where :attr:`on_change` says."""
        self.run(self.frame if ON_CHANGE[self.on_change.currentText()] else 0)

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

    def _scrubber(self) -> QHBoxLayout:
        row = QHBoxLayout()
        self.play_button = QPushButton("Play")
        self.play_button.setCheckable(True)
        self.play_button.toggled.connect(self.play)
        self.scrubber = QSlider(Qt.Orientation.Horizontal)
        self.scrubber.setObjectName("field2d_scrubber")
        self.scrubber.valueChanged.connect(lambda _: self.redraw())
        self.pacer = FramePacer(self.scrubber, self)
        self.time_label = QLabel()
        row.addWidget(self.play_button)
        row.addWidget(self.scrubber, 1)
        row.addWidget(self.time_label)
        return row

    # -- the model ------------------------------------------------------------------------

    def choose_model(self, name: str, points: int | None = None,
                     ndim: int | None = None) -> None:
        """Show field model ``name`` (on ``points`` per axis of ``ndim`` axes) and run it."""
        self.stop()
        self.session.select_model(name, points, ndim)
        self.run(0)

    def _model_changed(self) -> None:
        session = self.session
        self.pick = self.line = None  # a new grid: nothing picked on it
        self.series_curve.setData([], [])
        self.profile_curve.setData([], [])
        self.probes.hide()
        self._make_shown_boxes()
        self._make_panels()
        ndim = session.grid.ndim
        self.model_box.setCurrentText(choice_label(session.model_name, ndim))
        self.points_box.clear()
        self.points_box.addItems([_grid_label(n, ndim) for n in GRID_CHOICES_BY_AXES[ndim]])
        self.points_box.setCurrentText(_grid_label(session.points, ndim))
        self.t1_box.setValue(session.t1)
        self.brush_radius.setValue(0.05 * min(session.grid.length(a) for a in range(ndim)))
        self.slices_box.setVisible(ndim == 3)
        for plane, slider in self.slice_sliders.items():
            n = session.grid.points[PLANES[plane][2]] if ndim == 3 else 1
            blocked = slider.blockSignals(True)
            slider.setRange(0, n - 1)
            slider.setValue(n // 2)
            slider.blockSignals(blocked)
        last = len(session.frames) - 1  # a run read from a file: at its last frame
        blocked = self.scrubber.blockSignals(True)
        self.scrubber.setRange(0, last)
        self.scrubber.setValue(last)
        self.scrubber.blockSignals(blocked)
        self.draw()

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
            self.panels = [FieldPanel(self.images, i, name, None, session, row=r, plane=plane)
                           for i, name in enumerate(session.shown)
                           for r, plane in enumerate(PLANES)]
            for panel in self.panels:
                panel.rect = QRectF(*image_rect(session.grid, PLANES[panel.plane][:2]))
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

    def _t1_edited(self) -> None:
        if self.t1_box.value() != self.session.t1:
            self.stop()
            self.session.t1 = float(self.t1_box.value())
            self.run(0)

    # -- runs -----------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self.worker is not None and not self.worker.stopping

    def run(self, start: int = 0) -> None:
        """Stream the run from frame ``start`` to t1 (the frames after it are dropped)."""
        self._resolve.stop()
        if self.worker is not None:
            self.worker.stop()
        self.pacer.stop()
        request = self.session.run_request(start)
        worker = TaskWorker(lambda emit, stop: iterate(stream_frames(request, stop), emit,
                                                       stop), TASK, self)
        worker.label = f"run of {self.session.model_name}"
        worker.item.connect(while_alive(self, self.session.accept))
        worker.failed.connect(while_alive(self, self.hovered.emit))
        worker.done.connect(while_alive(self, lambda ok, _: self._ended(worker)))
        self.worker = worker
        if self.host is not None:
            self.host.start_worker(TASK, worker, progress=False)
        else:
            worker.start()
        self.running_changed.emit(True)

    def _ended(self, worker: TaskWorker) -> None:
        if self.worker is worker:
            self.worker = None
            self.running_changed.emit(False)
        if self.host is not None:
            self.host.worker_done(TASK, worker)
        else:
            worker.wait(10_000)
            worker.deleteLater()

    def stop(self) -> None:
        """Stop the run under way (at its next chunk)."""
        self._resolve.stop()
        if self.worker is not None:
            self.worker.stop()

    def open_sweep(self) -> FieldSweepWindow:
        """Show the window that sweeps a parameter of the model shown."""
        if self.sweep_window is None:
            self.sweep_window = FieldSweepWindow(self.session, self.host, self)
        self.sweep_window.show()
        self.sweep_window.raise_()
        return self.sweep_window

    def shutdown(self) -> None:
        """Stop the run and wait for its thread."""
        self.stop()
        if self.sweep_window is not None:
            self.sweep_window.shutdown()
        worker, self.worker = self.worker, None
        if worker is not None and self.host is None:
            worker.wait(10_000)

    def _frames_changed(self, event) -> None:
        """New frames: a stream's are shown one by one at their pace while the view
        follows it and is seen; a painted frame is shown at once."""
        last = len(self.session.frames) - 1
        paced = (self.running and not event.edited and event.start > 0
                 and self.pacer.follow and self.isVisible())
        if event.edited:
            self.pacer.follow = True
        self.pacer.set_last(last, show_last=not paced)
        if event.edited and self.running:  # the run goes on from the painted field
            self.run(event.start)
        if paced:
            self.pacer.arrived(last - event.start + 1)
        elif self.isVisible():
            self.redraw()

    def showEvent(self, event):  # Qt override: frames that came while hidden
        super().showEvent(event)
        self.redraw()

    # -- drawing and the scrubber -----------------------------------------------------------

    @property
    def frame(self) -> int:
        """The index of the frame shown."""
        return min(self.scrubber.value(), len(self.session.frames) - 1)

    def draw(self) -> None:
        k = self.frame
        frame = self.session.frames[k]
        for panel in self.panels:
            if panel.plane == "xt":
                self._draw_space_time(panel, k)
            elif panel.plane:
                index = self.slice_sliders[panel.plane].value()
                panel.show(plane_slice(frame[panel.name], panel.plane, index), frame[panel.name])
            else:
                panel.show(frame[panel.name])
        for name, curve in self.profiles.items():
            curve.setData(self.session.grid.axis_coordinates(0), frame[name])
        self.arrows.draw(self.session, frame)
        self._draw_probes(k)
        self.time_label.setText(f"t = {self.session.ts[k]:.5g} / {self.session.t1:g}")
        self.drawn.emit(k)

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

    def _draw_space_time(self, panel: FieldPanel, k: int) -> None:
        """A 1-D field's frames up to ``k``: x across, time up, a row per frame."""
        ts = self.session.ts
        x0, _, width, _ = image_rect(self.session.grid, (0, 0))
        step = ts[1] - ts[0] if len(ts) > 1 else self.session.interval
        panel.rect = QRectF(x0, ts[0] - step / 2, width, ts[k] - ts[0] + step)
        values = space_time(self.session.frames, panel.name, k)
        panel.show(values.T, values)  # image axes: x, then time

    def show_frame(self, k: int) -> None:
        """Move the scrubber to frame ``k``."""
        self.scrubber.setValue(k)

    def play(self, on: bool) -> None:
        """Play the frames from the one shown (from the first, if at the last)."""
        self.play_button.setText("Pause" if on else "Play")
        if on and self.scrubber.value() >= self.scrubber.maximum():
            self.scrubber.setValue(0)
        (self._player.start if on else self._player.stop)()

    def _play_step(self) -> None:
        if self.scrubber.value() >= self.scrubber.maximum():
            self.play_button.setChecked(False)
        else:
            self.scrubber.setValue(self.scrubber.value() + 1)

    # -- the cursor, the brush, export ----------------------------------------------------------

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

    def _painting(self, on: bool) -> None:
        for item in [p.image for p in self.panels] + self.profile_boxes:
            item.painting = on

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

    def _clicked(self, image: PaintableImage, point) -> None:
        self._paint(next(p for p in self.panels if p.image is image).name, point)

    def _dragged(self, image: PaintableImage, stage: str, point) -> None:
        self._stroke(next(p for p in self.panels if p.image is image).name, stage, point)

    def _paint(self, name: str, point) -> None:
        """A click with Paint on: a disc (an interval in 1-D) into the frame shown."""
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


def _choice(label: str) -> tuple[str, None, int]:
    """``(name, points, ndim)`` for :meth:`Field2DView.choose_model` from a model label."""
    name, ndim = parse_choice(label)
    return name, None, ndim


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


def _grid_label(points: int, ndim: int) -> str:
    """``64 x 64`` on two axes, ``128`` on one, ``24 x 24 x 24`` on three."""
    return " x ".join([str(points)] * ndim)
