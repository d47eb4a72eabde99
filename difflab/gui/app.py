"""Creating the QApplication and running the window."""

import signal
import sys

import pyqtgraph as pg
from PySide6.QtWidgets import QApplication

import difflab as dl


def create_application(argv=None) -> QApplication:
    """The QApplication (created once), named so QSettings finds DiffLab's settings."""
    app = QApplication.instance()
    if app is None:
        app = QApplication(list(argv) if argv is not None else sys.argv[:1])
    app.setOrganizationName("DiffLab")
    app.setApplicationName("DiffLab")
    app.setApplicationVersion(dl.__version__)
    app.setDesktopFileName("difflab")
    pg.setConfigOptions(antialias=False, background="w", foreground="#222")
    return app


def run_app(path=None, argv=None) -> int:
    """Open the main window (with session ``path``, if given) and run the event loop."""
    from .main_window import MainWindow

    app = create_application(argv)
    window = MainWindow()
    window.show()
    if path is not None:
        window.files.open(str(path))
    _close_on_ctrl_c(app, window)
    return app.exec()


def _close_on_ctrl_c(app, window) -> None:
    """Ctrl+C in the terminal closes the window (asking about unsaved changes) and quits.

    Python handles signals only while it runs, so a timer wakes it up a few times a second.
    """
    from PySide6.QtCore import QTimer

    def interrupted(*_):
        if window.close():
            app.quit()

    signal.signal(signal.SIGINT, interrupted)
    timer = QTimer(window)
    timer.timeout.connect(lambda: None)
    timer.start(250)
