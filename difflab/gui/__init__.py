"""The desktop app: PySide6 + pyqtgraph. The only package of DiffLab that imports Qt.

Start it with ``difflab`` (or ``difflab gui [session.h5]``), or from Python::

    from difflab.gui import run_app
    run_app()
"""

from ._compat import guard_none_refcount

guard_none_refcount()  # before any other Qt call: PySide6 6.12 on Python < 3.12 (see _compat)

from .app import create_application as create_application  # noqa: E402
from .app import run_app as run_app  # noqa: E402
from .main_window import MainWindow as MainWindow  # noqa: E402
