"""GUI test fixtures: an offscreen Qt platform, a window with its own settings file.

``DIFFLAB_TEST_FONT_PT=14 pytest tests/gui`` runs the GUI tests with a larger application
font, as on a machine whose fonts are taller: no test
may depend on the sizes of the fonts a machine happens to have.
"""

import os
import tempfile

os.environ["QT_QPA_PLATFORM"] = "offscreen"  # before Qt is imported: no display needed
os.environ["DIFFLAB_CONFIG_DIR"] = tempfile.mkdtemp(prefix="difflab-test-config-")  # trust store

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pyqtgraph")
pytest.importorskip("pytestqt")

from PySide6.QtCore import QSettings  # noqa: E402

LONG = 120_000  # ms: first compilations on a busy 2-core machine


@pytest.fixture(scope="session", autouse=True)
def application_font(qapp):
    """The application font of ``DIFFLAB_TEST_FONT_PT`` points, where it is set."""
    size = os.environ.get("DIFFLAB_TEST_FONT_PT")
    if size:
        from PySide6.QtGui import QFont

        font = QFont(qapp.font())
        font.setPointSizeF(float(size))
        qapp.setFont(font)
    return qapp.font()


@pytest.fixture(scope="session", autouse=True)
def collector_on_the_gui_thread(qapp):
    """As in the app, Qt objects are freed on the GUI thread only (``difflab.gui._gc``),
    from the first GUI test on, also those of tests that build a widget without a window:
    one freed by a worker thread's collection kills the process."""
    from difflab.gui import _gc

    _gc.take_over()


@pytest.fixture
def settings(tmp_path):
    """A QSettings file of the test's own, so tests never read or write the user's."""
    return QSettings(str(tmp_path / "difflab.ini"), QSettings.Format.IniFormat)


@pytest.fixture
def make_window(qtbot, settings):
    """Open main windows (with the test's settings); each is shut down at the end."""
    from difflab.gui.main_window import MainWindow

    windows = []

    def make(lab=None):
        window = MainWindow(lab, settings=settings)
        window.files.ask_unsaved = lambda: "discard"
        qtbot.addWidget(window)
        window.show()
        qtbot.waitUntil(lambda: window.lab.current is not None, timeout=LONG)
        windows.append(window)
        return window

    yield make
    for window in windows:
        window.shutdown()


@pytest.fixture
def window(make_window):
    return make_window()


def solved(qtbot, window, name):
    """Select model ``name`` in ``window`` and wait for its run: the lab's current run."""
    window.lab.select_model(name)
    qtbot.waitUntil(lambda: window.lab.current is not None
                    and window.lab.name_of(window.lab.current.model) == name, timeout=LONG)
    return window.lab.current
