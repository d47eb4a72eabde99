"""The field view in the main window: its tab (made when first shown) and the Fields menu."""

from PySide6.QtWidgets import QMenu, QVBoxLayout, QWidget

from ..app.field_frames import choice_label, model_choices
from ..app.fields import FieldSession
from .field2d_view import Field2DView
from .field_movie import ask_and_export
from .widgets import Throttle

STATUS_MS = 100  # the status line follows a stream at most this often


class FieldsTab(QWidget):
    """The main window's tab of the 2-D field view, made when first shown or asked for
    (its model's first fields take JAX a moment to compute: not at every start)."""

    def __init__(self, window):
        super().__init__()
        self.window_ = window
        self._view: Field2DView | None = None
        self._status = ""  # the run status shown last
        QVBoxLayout(self).setContentsMargins(0, 0, 0, 0)

    @property
    def view(self) -> Field2DView:
        if self._view is None:
            window = self.window_
            lab = window.lab
            session = getattr(lab, "field_session", None) or FieldSession(lab)
            self._view = Field2DView(session, host=window)
            self._view.hovered.connect(lambda text: window.status.setText(text))
            status = Throttle(self._show_status, STATUS_MS, self)
            # new frames update the line unless it shows something else (a hovered value)
            session.events.frames.connect(
                lambda e: window.status.text() == self._status and status())
            session.events.model.connect(lambda e: status())
            self._view.running_changed.connect(lambda on: status())
            self.layout().addWidget(self._view)
        return self._view

    def run_status(self) -> str:
        """The status line of the field run: the main window shows it while this tab is
        in front, instead of its model's run."""
        view = self.view
        self._status = view.session.status_text(view.running)
        return self._status

    def _show_status(self) -> None:
        if self.window_.tabs.currentWidget() is self:
            self.window_.status.setText(self.run_status())

    def showEvent(self, event):  # Qt override
        super().showEvent(event)
        self.view  # noqa: B018 (made on first sight)


def add_to_window(window) -> FieldsTab:
    """The view as a tab of the main window (its runs are the window's tasks, its cursor
    values go to the status bar); the view itself is made when first needed."""
    tab = FieldsTab(window)
    window.views["fields"] = tab
    window.tabs.addTab(tab, Field2DView.title)
    return tab


def add_field_menu(window, tab: FieldsTab) -> None:
    """Fields > one entry per field model and number of axes (show it in the view, run it),
    Export run as movie and Sweep a parameter."""
    bar = window.menuBar()
    menu = QMenu("Fiel&ds", window)
    last = bar.actions()[-1] if bar.actions() else None  # before Help
    bar.insertMenu(last, menu) if last is not None else bar.addMenu(menu)
    for name, ndim in model_choices():
        label = choice_label(name, ndim)
        action = menu.addAction(label)
        action.setStatusTip(f"Show {label} in the {Field2DView.title} view and run it")
        action.triggered.connect(lambda _=False, n=name, d=ndim: _show_model(window, tab, n, d))
    menu.addSeparator()
    movie = menu.addAction("Export run as &movie…")
    movie.setStatusTip("Write the Fields tab's frames as MP4 or animated GIF")
    movie.triggered.connect(lambda: _export_movie(window, tab))
    sweep = menu.addAction("&Sweep a parameter…")
    sweep.setStatusTip("A number of a field over a parameter's range, each point's field a click away")
    sweep.triggered.connect(lambda: tab.view.open_sweep())


def _show_model(window, tab: FieldsTab, name: str, ndim: int = 2) -> None:
    window.tabs.setCurrentWidget(tab)
    tab.view.choose_model(name, ndim=ndim)


def _export_movie(window, tab: FieldsTab) -> None:
    window.tabs.setCurrentWidget(tab)  # the film is drawn as the tab shows it
    ask_and_export(tab.view)
