"""The field view: each field of a field model as a live image, a time scrubber, run
controls, a brush, probes and sliders.

Fed by a Qt-free :class:`difflab.app.fields.FieldSession`. A run streams on a
:class:`~difflab.gui.workers.TaskWorker` in chunks of frames; the images follow the newest
frame unless the scrubber was moved back, and a stream's frames are shown one by one as
they come (:mod:`.field_pacer`). The view is made of parts, one module each: the pictures,
their colours and export (:mod:`.field_images`), the brush (:mod:`.field_brush`: a
painted disc, or a ball in 3-D, is one undo step and a run under way goes on from it),
the probes (:mod:`.field_probes`: the value under the cursor to ``hovered``, a point's
time series, a line's profile), arrows (:mod:`.field_vectors`) and the sweep window
(:mod:`.field_sweep_panel`).
"""

import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSlider,
    QVBoxLayout,
    QWidget,
)

from ..app.field_frames import (
    PLANES,
    choice_label,
    model_choices,
    parse_choice,
    plane_slice,
)
from ..app.fields import FieldSession, stream_frames
from .field_movie import ask_and_export
from .field_pacer import FramePacer
from .field_brush import FieldBrush
from .field_images import FieldImages
from .field_panels import FieldPanel, PaintableBox
from .field_probes import FieldProbes
from .field_sweep_panel import FieldSweepWindow
from .field_vectors import FieldArrows
from .parameters import ParameterPanel
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


class Field2DView(FieldImages, FieldBrush, FieldProbes, QWidget):
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
        choices = sorted({*GRID_CHOICES_BY_AXES[ndim], session.points})  # the model's own too
        self.points_box.addItems([_grid_label(n, ndim) for n in choices])
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



def _choice(label: str) -> tuple[str, None, int]:
    """``(name, points, ndim)`` for :meth:`Field2DView.choose_model` from a model label."""
    name, ndim = parse_choice(label)
    return name, None, ndim


def _grid_label(points: int, ndim: int) -> str:
    """``64 x 64`` on two axes, ``128`` on one, ``24 x 24 x 24`` on three."""
    return " x ".join([str(points)] * ndim)
