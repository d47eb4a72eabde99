"""The DiffLab main window: plots in the middle, panels docked around them, menus on top.

The window draws a Qt-free :class:`~difflab.app.lab.Lab` and forwards the user's edits to
it; simulations run on worker threads (:mod:`difflab.gui.workers`) and come back through
signals. Window layout, run settings and recent files persist in ``QSettings``.
"""

import json
import math
import sys

import jax
import shiboken6
from PySide6.QtCore import QByteArray, QEvent, QRect, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QLabel,
    QMainWindow,
    QMessageBox,
    QProgressBar,
    QSizePolicy,
    QTabBar,
    QTabWidget,
)

import difflab as dl

from ..app.accuracy import points_for_width
from ..app.lab import Lab
from ..app.layout import fitted, same_scale
from ..app.runs import (
    RunSettings,
    format_params,
    precompile,
    status_text,
    stream_run,
)
from . import _gc
from .device_panel import DevicePanel, apply_device_choices
from .field_view import FieldView
from .fields_tab import add_field_menu, add_to_window
from .files import FileActions
from .highlight import EquationHighlighter
from .initial_state import InitialStatePanel
from .menus import build_actions, build_menus
from .panels import LogPanel, ModelBrowser, RunSettingsPanel, RunsPanel
from .parameters import ParameterPanel
from .phase3d_view import Phase3DView
from .plots import PhasePlot
from .task_watch import TaskWatch
from .theme import apply_theme, current_theme
from .time_series import TimeSeriesPlot
from .user_models import EquationEditor, UserModels
from .widgets import Throttle, lines_tall, scrolling
from .workers import LiveSolver, TaskWorker, iterate, while_alive

STATE_VERSION = 1
START_DELAY_MS = 30
SWITCH_INTERVAL_S = 0.001
DEFAULT_SIZE = (1360, 860)  # at most: the window fits its screen
VIEWS_MIN_SIZE = (320, 240)
SHUTDOWN_WAIT_MS = 5_000  # closing waits this long for each task to end
EDITOR_LINES = 10  # the equations editor shows at least this many lines
MIN_EDITOR_LINES = 3  # ... or as many as a short screen leaves room for
EDITOR_SHARE = 0.3  # ... in a dock of at most this share of the screen's height


class MainWindow(QMainWindow):
    """The app window. ``settings`` defaults to ``QSettings("DiffLab", "DiffLab")``.

    Signals: ``current_drawn(run)`` after a solved run reached the lab (tests wait on it).
    """

    current_drawn = Signal(object)

    def __init__(self, lab: Lab | None = None, settings: QSettings | None = None):
        super().__init__()
        # Worker threads run Python (JAX tracing) beside the GUI thread: hand the GIL over
        # every millisecond rather than every 5, so a redraw never waits long for it.
        sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL_S))
        _gc.take_over()  # Qt objects are freed on the GUI thread only (see _gc)
        self.settings = settings or QSettings("DiffLab", "DiffLab")
        if lab is None:  # the app starting: its first solve compiles while the window is built
            apply_device_choices(self.settings)  # the Device tab's, before JAX computes
            lab = Lab(**self._restored_lab_args())
            precompile(lab.solve_request())
        self.lab = lab
        self.files = FileActions(self, self.lab, self.settings)
        theme = str(self.settings.value("theme", "light"))
        apply_theme(theme if theme in ("light", "dark") else "light")
        self.live = True
        self.workers: dict[str, TaskWorker] = {}
        self.setObjectName("DiffLabMainWindow")
        self.setWindowTitle("DiffLab[*]")
        self.setDockOptions(QMainWindow.DockOption.AnimatedDocks
                            | QMainWindow.DockOption.AllowTabbedDocks)
        self.live_solver = self.new_live_solver()
        self._streamed = 0.0
        self._status_error = None  # why the last live solve raised, until the next one
        self._own_status = False  # whether the status tells of the front view's own run
        self._stream_status = Throttle(self._show_stream_status, 100, self)
        self._build_views()
        self._build_docks()
        self._build_actions()
        self._build_status()
        self.watch = TaskWatch(self)
        self._connect_lab()
        self._restore_window()
        self._title_changed()
        self.lab.log(f"DiffLab {dl.__version__}: JAX {jax.default_backend()} backend, "
                     f"{jax.device_count()} device(s), {dl.precision()}")
        self.request_solve()

    # -- construction -----------------------------------------------------------------

    def _restored_lab_args(self) -> dict:
        args = {}
        model = self.settings.value("model")
        if isinstance(model, str) and model not in dl.models.field_models():  # not the lab's
            try:
                dl.models.get(model)
                args["model"] = model
            except ValueError:
                pass
        try:
            stored = json.loads(str(self.settings.value("run_settings", "{}")))
            args["settings"] = RunSettings.from_dict(stored) if isinstance(stored, dict) else None
        except (ValueError, TypeError):
            pass
        return args

    def _build_views(self) -> None:
        self.tabs = QTabWidget()
        self.tabs.setObjectName("views")
        self.tabs.setDocumentMode(True)
        self.time_plot = TimeSeriesPlot(self.lab)
        self.phase_plot = PhasePlot(self.lab)
        self.phase3d_view = Phase3DView(self.lab)
        self.field_view = FieldView(self.lab)
        self.views = {"time": self.time_plot, "phase": self.phase_plot,
                      "phase3d": self.phase3d_view, "field": self.field_view}
        self.tabs.addTab(self.time_plot, "Time series")
        self.tabs.addTab(self.phase_plot, "Phase portrait")
        self.tabs.addTab(self.phase3d_view, Phase3DView.title)
        self._show_field_tab()
        self.field2d_view = add_to_window(self)  # field models on grids, live
        self._add_analysis_views()
        self.tabs.currentChanged.connect(self._view_changed)
        # The views' own minimum sizes (a long column of controls) never set the window's:
        # it must fit its screen; a view smaller than it would like scrolls its controls.
        self.tabs.setMinimumSize(*VIEWS_MIN_SIZE)
        self.setCentralWidget(self.tabs)

    def _add_analysis_views(self) -> None:
        """Sweep, fit and sensitivity views, for the engine APIs this installation has."""
        from . import analysis

        for key, title, widget in analysis.views(self):
            self.views[key] = widget
            self.tabs.addTab(widget, title)

    def add_dock(self, title: str, widget, area, name: str, scroll: bool = True) -> QDockWidget:
        """Dock ``widget`` in ``area``; with ``scroll`` (a panel of controls) it scrolls where
        the dock is smaller than it, so no panel sets the window's minimum size."""
        dock = QDockWidget(title, self)
        dock.setObjectName(f"dock_{name}")
        dock.setWidget(scrolling(widget) if scroll else widget)
        self.addDockWidget(area, dock)
        self.docks[name] = dock
        return dock

    def _build_docks(self) -> None:
        left, right = Qt.DockWidgetArea.LeftDockWidgetArea, Qt.DockWidgetArea.RightDockWidgetArea
        self.docks: dict[str, QDockWidget] = {}
        self.model_browser = ModelBrowser(self.lab)
        self.model_browser.load_file_requested.connect(self.load_model_file)
        self.parameter_panel = ParameterPanel(self.lab)
        self.settings_panel = RunSettingsPanel(self.lab)
        self.runs_panel = RunsPanel(self.lab)
        self.device_panel = DevicePanel(self.settings)
        self.log_panel = LogPanel(self.lab)
        self.add_dock("Models", self.model_browser, left, "models")
        self.add_dock("Parameters", self.parameter_panel, left, "parameters")
        self.add_dock("Run settings", self.settings_panel, right, "settings")
        self.add_dock("Runs", self.runs_panel, right, "runs")
        self.add_dock("Device", self.device_panel, right, "device")
        self.initial_panel = InitialStatePanel(self.lab)
        self.add_dock("Initial state", self.initial_panel, right, "initial")
        self.add_dock("Log", self.log_panel, Qt.DockWidgetArea.BottomDockWidgetArea, "log",
                      scroll=False)  # text boxes scroll themselves
        self.user_models = UserModels(self, self.lab)
        self.equation_editor = EquationEditor(self.lab)
        self.equation_editor.set_lines(EDITOR_LINES)  # lines of the editor's own font
        self.highlighter = EquationHighlighter(self.equation_editor.text.document())
        self.add_dock("Equations", self.equation_editor, Qt.DockWidgetArea.BottomDockWidgetArea,
                      "equations", scroll=False)
        self.tabifyDockWidget(self.docks["log"], self.docks["equations"])
        self.tabifyDockWidget(self.docks["runs"], self.docks["device"])
        self.tabifyDockWidget(self.docks["runs"], self.docks["initial"])
        self.docks["runs"].raise_()
        self.docks["log"].raise_()
        self.resizeDocks([self.docks["models"], self.docks["parameters"]], [260, 300],
                         Qt.Orientation.Vertical)
        self.resizeDocks([self.docks["models"], self.docks["settings"]], [300, 250],
                         Qt.Orientation.Horizontal)
        self.resizeDocks([self.docks["log"]], [self.equation_editor.text.minimumHeight() + 40],
                         Qt.Orientation.Vertical)
        self._default_state = self.saveState(STATE_VERSION)
        self._default_layout = True  # until a layout the user left is restored

    def _build_actions(self) -> None:
        self.actions = build_actions(self)
        self.recent_menu = build_menus(self, self.actions)
        add_field_menu(self, self.field2d_view)
        self.recent_changed()
        self._undo_changed()

    def _build_status(self) -> None:
        self.status = QLabel()
        # a long status is cut at the window's edge rather than widening the window
        self.status.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(220)
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(False)
        self.progress.hide()
        self.save_progress = QProgressBar()
        self.save_progress.setMaximumWidth(120)
        self.save_progress.setRange(0, 1000)
        self.save_progress.hide()
        self.statusBar().addWidget(self.status, 1)
        self.statusBar().addPermanentWidget(self.save_progress)
        self.statusBar().addPermanentWidget(self.progress)

    def show_saving(self, text: str, fraction: float | None) -> None:
        """A save's progress in the status bar (``fraction`` None: no save under way)."""
        self.save_progress.setVisible(fraction is not None)
        self.save_progress.setValue(int(1000 * (fraction or 0.0)))
        self.save_progress.setToolTip(text)
        if text:
            self.status.setText(text)

    def _connect_lab(self) -> None:
        events = self.lab.events
        events.params.connect(lambda e: self._state_changed())
        events.settings.connect(lambda e: self._state_changed())
        events.model.connect(self._model_changed)
        events.undo.connect(lambda e: self._undo_changed())
        events.dirty.connect(lambda e: self._title_changed())
        events.path.connect(lambda e: self._title_changed())
        events.layout.connect(self._layout_changed)

    # -- live re-solve and streamed runs -------------------------------------------------

    def new_live_solver(self) -> LiveSolver:
        solver = LiveSolver(self)
        solver.solved.connect(self._solved)
        solver.failed.connect(self._solve_failed)
        solver.busy.connect(self._busy)
        return solver

    def request_solve(self) -> None:
        """Re-solve the current state on the live solver thread (the newest request wins;
        a solver stuck on an earlier solve is replaced, see :mod:`.task_watch`)."""
        self.lab.plot_points = points_for_width(self.tabs.width())
        self.watch.live_solver().submit(self.lab.solve_request())

    def _state_changed(self) -> None:
        if "stream" in self.workers:
            self.workers["stream"].stop()
        if self.live:
            self.request_solve()

    def _model_changed(self, event) -> None:
        if not getattr(event, "catalog", False):
            self.settings.setValue("model", self.lab.model_name)
            self._show_field_tab()

    def _show_field_tab(self) -> None:
        """The Field tab, beside the phase portrait, for a model whose states are a field."""
        index = self.tabs.indexOf(self.field_view)
        if self.field_view.field is not None and index < 0:
            self.tabs.insertTab(2, self.field_view, "Field")
        elif self.field_view.field is None and index >= 0:
            self.tabs.removeTab(index)

    def _solved(self, request, run) -> None:
        if self.lab.accept(run, request):
            self._show_run_status(run)
            self.current_drawn.emit(run)

    def _solve_failed(self, request, message: str) -> None:
        params = {k: float(v) for k, v in request.model.parameters().items() if v.ndim == 0}
        self.lab.log(f"{request.model_name} ({format_params(params)}): {message}", "error")
        self._status_error = f"{request.model_name}: {message}"

    def _busy(self, busy: bool) -> None:
        if busy:
            self._status_error = None
            self._set_run_status(f"solving {self.lab.model_name}…")
        elif "stream" not in self.workers:  # never leave "solving" up (a newer run, an error)
            self._show_run_status(self.lab.current)

    def _show_run_status(self, run) -> None:
        if self._status_error:
            self._set_run_status(self._status_error)
            return
        name = self.lab.name_of(run.model) if run is not None else ""
        self._set_run_status(status_text(run, name, self.lab.settings))

    def _set_run_status(self, text: str) -> None:
        """The model's run status, unless the view in front has a run of its own to tell
        of (``run_status()``: the Fields tab's field run)."""
        own = getattr(self.tabs.currentWidget(), "run_status", None)
        self.status.setText(own() if own is not None else text)

    def run_stream(self) -> None:
        """Simulate with the current settings chunk by chunk, drawing as chunks arrive."""
        self.stop_worker("stream")
        request = self.lab.solve_request()
        worker = TaskWorker(lambda emit, stop: iterate(
            stream_run(request, stop=stop), emit, stop), "stream", self)  # chunks: its own
        worker.item.connect(while_alive(self, lambda item: self._stream_chunk(request, item)))
        worker.failed.connect(lambda text: self.lab.log(
            f"{request.model_name} ({format_params(self.lab.params)}): {text}", "error"))
        worker.done.connect(while_alive(self, lambda finished, _: self._stream_done(worker, finished)))
        self.start_worker("stream", worker)
        self.lab.log(f"streaming {request.model_name} to t1 = {request.settings.t1:g}")

    def _stream_chunk(self, request, item) -> None:
        run, chunk = item
        self._streamed = chunk.progress
        self.lab.accept(run, request)
        self._stream_status()

    def _show_stream_status(self) -> None:
        run = self.lab.current
        if run is not None and "stream" in self.workers:
            self.progress.setValue(int(1000 * self._streamed))
            self._set_run_status(f"{self.lab.name_of(run.model)}: {len(run.ts)} / "
                                f"{run.settings.n_save} points")

    def _stream_done(self, worker, finished: bool) -> None:
        run = self.lab.current
        if run is not None and not finished:
            self.lab.log(f"stopped {self.lab.name_of(run.model)} at t = {run.ts[-1]:g}",
                         "warning")
        elif run is not None:
            self._show_run_status(run)
        self.worker_done("stream", worker)

    # -- workers ---------------------------------------------------------------------------

    def start_worker(self, name: str, worker: TaskWorker, progress: bool = True) -> None:
        """Run ``worker``; Stop stops it; ``progress``: show the status bar's progress bar."""
        if worker.label == worker.objectName():  # named in words for the log
            worker.label = f"{name} of {self.lab.model_name}"
        self.workers[name] = worker
        self.actions["stop"].setEnabled(True)
        if progress:
            self.progress.reset()
            self.progress.show()
        # Let the window draw what changed (buttons, an emptied plot) before the worker
        # takes the CPU and the GIL for tracing and compiling.
        QTimer.singleShot(START_DELAY_MS, worker, lambda: _launch(worker))  # not if deleted

    def worker_done(self, name: str, worker: TaskWorker) -> None:
        """A worker has ended (or was let go of: then it is kept, never waited for); one
        that outlived its window (closed during a slow compile) has nothing to tell."""
        if not shiboken6.isValid(self):
            return  # the worker module holds the thread until it ends
        if self.workers.get(name) is worker:
            del self.workers[name]
        if worker.abandoned:
            self.watch.keep(worker)
        else:
            worker.wait(10_000)
            worker.deleteLater()
        if not self.workers:
            self.actions["stop"].setEnabled(False)
            self.progress.hide()

    def stop_worker(self, name: str) -> None:
        """Stop the task ``name``, waiting for it half a second at most."""
        worker = self.workers.get(name)
        if worker is not None:
            self.watch.stop_now(worker)

    def stop_task(self, name: str) -> None:
        """Stop the task ``name``; returns at once (see :meth:`stop_all`)."""
        self.watch.stop([name])

    def stop_all(self) -> None:
        """Stop every task; one that has not ended within half a second is let go of."""
        self.watch.stop()

    # -- views -------------------------------------------------------------------------

    def _view_changed(self, index: int) -> None:
        key = next((k for k, v in self.views.items() if v is self.tabs.widget(index)), "time")
        self.lab.set_layout(view=key)
        own = hasattr(self.tabs.widget(index), "run_status")
        if own or self._own_status:  # into or out of a view with a run of its own
            self._show_run_status(self.lab.current)
        self._own_status = own

    def _layout_changed(self, event) -> None:
        widget = self.views.get(event.layout.view)
        if widget is not None and self.tabs.currentWidget() is not widget:
            self.tabs.setCurrentWidget(widget)

    def front_plot(self):
        """The ``PlotWidget`` of the view in front (or ``None``)."""
        widget = self.tabs.currentWidget()
        return getattr(widget, "plot", None)

    def front_data(self) -> dict:
        """Named columns of the data the view in front shows."""
        widget = self.tabs.currentWidget()
        if hasattr(widget, "export_columns"):
            return widget.export_columns()
        return run_columns(self.lab)

    def plot_layout(self) -> dict:
        """The GUI's part of a session's plot layout: the ranges of views zoomed by hand,
        the expressions typed for the time series."""
        ranges = {}
        for key in ("time", "phase"):
            item = self.views[key].plot.getPlotItem()
            if not all(item.getViewBox().autoRangeEnabled()):
                (x0, x1), (y0, y1) = item.viewRange()
                ranges[key] = [x0, x1, y0, y1]
        return {"ranges": ranges, "expressions": self.time_plot.expressions.to_json()}

    def restore_plot_layout(self, layout: dict) -> None:
        """Zoom the views as a session file says (views it does not name auto-range)."""
        ranges = layout.get("ranges") if isinstance(layout, dict) else None
        if isinstance(layout, dict):
            self.time_plot.restore_expressions(layout.get("expressions"))
        for key in ("time", "phase"):
            item = self.views[key].plot.getPlotItem()
            box = (ranges or {}).get(key)
            if isinstance(box, list) and len(box) == 4 and all(
                    isinstance(v, (int, float)) for v in box):
                item.setRange(xRange=box[:2], yRange=box[2:], padding=0)
            else:
                item.enableAutoRange()

    # -- commands ------------------------------------------------------------------------

    def toggle_live(self, on: bool) -> None:
        self.live = on
        if on:
            self.request_solve()

    def load_model_file(self) -> None:
        """Load a Python model file (asking before its code runs) or an equation file."""
        self.user_models.load()

    def restore_default_layout(self) -> None:
        self.restoreState(self._default_state, STATE_VERSION)
        self._default_layout = True
        self.resize(*DEFAULT_SIZE)
        self.fit_to_screen()
        QTimer.singleShot(0, self._hide_stray_tab_bars)

    def showEvent(self, event) -> None:  # noqa: N802 (Qt override)
        super().showEvent(event)
        self.fit_to_screen()
        QTimer.singleShot(0, self._hide_stray_tab_bars)

    def fit_to_screen(self, area: QRect | None = None) -> None:
        """Keep the whole window (frame included) inside ``area``, by default the available
        geometry of its screen, at any scale factor and for any model."""
        screen = self.screen() or QGuiApplication.primaryScreen()
        if area is None and screen is None:
            return
        area = area or screen.availableGeometry()
        frame = self.frameGeometry().size() - self.geometry().size()
        self._fit_editor(area.height() - frame.height())
        if self._default_layout:  # the log and editor no taller than the editor's lines
            self.resizeDocks([self.docks["log"]],
                             [self.docks["equations"].minimumSizeHint().height()],
                             Qt.Orientation.Vertical)
        x, y, w, h = fitted((self.x(), self.y(), self.width(), self.height()),
                            area.getRect(), (frame.width(), frame.height()))
        if (w, h) != (self.width(), self.height()):
            self.resize(w, h)
        if (x, y) != (self.x(), self.y()):
            self.move(x, y)

    def _hide_stray_tab_bars(self) -> None:
        """Hide the tab bars Qt leaves behind where a dock area was laid out earlier.

        Qt (6.11, 6.12) gives the second group of docks tabified before the window is
        shown two tab bars, and leaves the extra one over the central widget.
        """
        titles = {dock.windowTitle(): dock for dock in self.docks.values()}
        direct = Qt.FindChildOption.FindDirectChildrenOnly
        for bar in self.findChildren(QTabBar, options=direct):
            dock = titles.get(bar.tabText(bar.currentIndex()))
            if dock is not None and bar.isVisible() and not _under(bar.geometry(),
                                                                   dock.geometry()):
                bar.hide()

    def set_theme(self, dark: bool) -> None:
        """Use the dark or the light theme (remembered for the next start)."""
        apply_theme("dark" if dark else "light")
        self.settings.setValue("theme", current_theme())
        for view in self.views.values():
            redraw = getattr(view, "redraw", None)
            if callable(redraw):
                redraw()

    def show_guide(self) -> None:
        """Help > User guide: the documentation and the models, searchable."""
        from .help_view import HelpDialog

        if getattr(self, "guide", None) is None:
            self.guide = HelpDialog(self.lab, self)
        self.guide.show()
        self.guide.raise_()

    def _fit_editor(self, height: int) -> None:
        """Ten lines of the equations editor, fewer (down to a few) where its dock would
        take more than a share of the screen's ``height`` or make the window taller than
        it: the docks of controls keep room on a short screen or with a large font."""
        editor = self.equation_editor.text
        line = editor.fontMetrics().lineSpacing()
        self._editor_lines(EDITOR_LINES)
        around = self.docks["equations"].minimumSizeHint().height() - editor.minimumHeight()
        room = math.floor((EDITOR_SHARE * height - around - lines_tall(editor, 0)) / line)
        lines = min(EDITOR_LINES, max(MIN_EDITOR_LINES, room))
        self._editor_lines(lines)
        over = self.minimumSizeHint().height() - height
        if over > 0:
            self._editor_lines(max(MIN_EDITOR_LINES, lines - math.ceil(over / line)))

    def _editor_lines(self, lines: int) -> None:
        """Set the editor's lines and lay the window out again at once."""
        self.equation_editor.set_lines(lines)
        QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
        self.layout().invalidate()
        self.layout().activate()

    def screen_scale(self) -> float:
        """Device pixels per 96-dpi pixel: 1.5 on a screen scaled by 150%."""
        return float(self.devicePixelRatioF() * self.logicalDpiX() / 96.0)

    def about(self) -> None:
        QMessageBox.about(self, "About DiffLab",
                          f"<b>DiffLab {dl.__version__}</b><br>A lab for differentiable physics: "
                          "JAX, Equinox, diffrax, PySide6 and pyqtgraph.")

    def _undo_changed(self) -> None:
        stack = self.lab.undo_stack
        self.actions["undo"].setEnabled(stack.can_undo)
        self.actions["redo"].setEnabled(stack.can_redo)
        self.actions["undo"].setText(f"&Undo {stack.undo_text}".rstrip())
        self.actions["redo"].setText(f"&Redo {stack.redo_text}".rstrip())

    def _title_changed(self) -> None:
        name = self.lab.path.name if self.lab.path else "untitled"
        self.setWindowTitle(f"{name}[*] — DiffLab")
        self.setWindowModified(self.lab.dirty)

    def recent_changed(self) -> None:
        self.recent_menu.clear()
        for path in self.files.recent():
            self.recent_menu.addAction(path, lambda p=path: self.files.open(p))
        self.recent_menu.setEnabled(bool(self.files.recent()))

    # -- persistence -------------------------------------------------------------------------

    def _restore_window(self) -> None:
        geometry = self.settings.value("geometry")
        if not same_scale(self.settings.value("window_scale"), self.screen_scale()):
            geometry = None  # laid out at another screen scale: start from the default
        if isinstance(geometry, QByteArray):
            self.restoreGeometry(geometry)
        else:
            self.resize(*DEFAULT_SIZE)
        state = self.settings.value("window_state")
        if isinstance(state, QByteArray) and geometry is not None:
            self._default_layout = not self.restoreState(state, STATE_VERSION)
        self.fit_to_screen()
        self.live = str(self.settings.value("live", "true")).lower() != "false"
        self.actions["live"].setChecked(self.live)

    def save_window_settings(self) -> None:
        self.settings.setValue("geometry", self.saveGeometry())
        self.settings.setValue("window_state", self.saveState(STATE_VERSION))
        self.settings.setValue("window_scale", self.screen_scale())
        self.settings.setValue("run_settings", json.dumps(self.lab.settings.as_dict()))
        self.settings.setValue("model", self.lab.model_name)
        self.settings.setValue("live", "true" if self.live else "false")
        self.settings.sync()

    def closeEvent(self, event) -> None:  # noqa: N802 (Qt override)
        if not self.files.may_discard():
            event.ignore()
            return
        self.shutdown()
        event.accept()

    def shutdown(self) -> None:
        """Save the window's settings, stop every worker and wait for the threads."""
        self.save_window_settings()
        self.watch.timer.stop()
        for worker in list(self.workers.values()):  # one stuck is let go of after a while
            self.watch.stop_now(worker, SHUTDOWN_WAIT_MS)
        self.live_solver.shutdown()


def _under(bar: QRect, dock: QRect) -> bool:
    """Whether a tab bar sits just below a dock (where Qt puts a dock area's tabs)."""
    return abs(bar.top() - dock.bottom()) <= 8 and bar.left() < dock.right() \
        and dock.left() < bar.right()


def _launch(worker: TaskWorker) -> None:
    if worker.stopping:  # stopped before it began
        worker.done.emit(False, None)
    else:
        worker.start()


def run_columns(lab: Lab) -> dict:
    """The current run (``t``, states) then the kept runs (``run0.t``, ``run0.x``, ...)."""
    columns = {}
    runs = [("", lab.current)] if lab.current is not None else []
    runs += [(f"{name}.", run) for name, run in lab.runs.items()]
    for prefix, run in runs:
        columns[f"{prefix}t"] = run.ts
        for j, state in enumerate(run.state_names):
            columns[f"{prefix}{state}"] = run.ys[:, j]
    return columns
