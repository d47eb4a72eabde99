"""``difflab`` / ``difflab gui [SESSION.h5]``: check that Qt can start, then open the app.

This module imports no Qt: it first checks, in this process and in a few milliseconds,
that the app can open a window (the ``gui`` extra is installed, there is a display, and
Qt's xcb platform plugin can load its system libraries). When it cannot, it prints one
line saying what to install or do, instead of Qt's abort message, and returns 1. The
rest of the command line never needs a display.
"""

import ctypes
import ctypes.util
import importlib.util
import os
import re
import sys
from pathlib import Path

from .errors import EXIT_FAILED, UsageError

#: Libraries Qt's xcb plugin links (directly or through libQt6XcbQpa), and their
#: Debian/Ubuntu packages. A fresh desktop usually lacks the first three.
XCB_PACKAGES = {
    "xcb-cursor": "libxcb-cursor0", "xcb-icccm": "libxcb-icccm4", "xcb-keysyms": "libxcb-keysyms1",
    "xcb-image": "libxcb-image0", "xcb-render-util": "libxcb-render-util0",
    "xcb-randr": "libxcb-randr0", "xcb-shape": "libxcb-shape0", "xcb-xkb": "libxcb-xkb1",
    "xcb-xfixes": "libxcb-xfixes0", "xcb-sync": "libxcb-sync1", "xcb-shm": "libxcb-shm0",
    "xcb-render": "libxcb-render0", "xcb-util": "libxcb-util1", "xkbcommon-x11": "libxkbcommon-x11-0",
    "xkbcommon": "libxkbcommon0", "X11-xcb": "libx11-xcb1", "X11": "libx11-6", "xcb": "libxcb1",
    "EGL": "libegl1", "GL": "libgl1", "fontconfig": "libfontconfig1", "dbus-1": "libdbus-1-3",
}
EXIT_NO_DISPLAY = EXIT_FAILED


def _pyside_dir() -> Path | None:
    spec = importlib.util.find_spec("PySide6")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def _platform() -> str:
    """The platform plugin Qt will try: ``QT_QPA_PLATFORM``, else xcb or wayland by session."""
    chosen = os.environ.get("QT_QPA_PLATFORM", "").split(":")[0].split(";")[0].strip()
    if chosen:
        return chosen
    if not sys.platform.startswith("linux"):
        return "native"
    if os.environ.get("WAYLAND_DISPLAY") and not os.environ.get("DISPLAY"):
        return "wayland"
    return "xcb"


def _missing_from_error(text: str) -> list[str]:
    """Library names (``xcb-icccm``) from a dlopen error ``libxcb-icccm.so.4: cannot open``."""
    return re.findall(r"lib([\w.+-]+?)\.so[.\d]*: cannot open", text)


def missing_xcb_packages(plugin: Path) -> list[str]:
    """The packages of the libraries Qt's xcb plugin cannot load (empty when it loads)."""
    try:
        ctypes.CDLL(str(plugin))
        return []
    except OSError as error:
        first = _missing_from_error(str(error))
    missing = [lib for lib in XCB_PACKAGES if ctypes.util.find_library(lib) is None]
    for lib in first:
        if lib not in missing:
            missing.insert(0, lib)
    return [XCB_PACKAGES.get(lib, f"lib{lib}") for lib in missing]


def gui_problem() -> str | None:
    """Why the app cannot open a window here, in one line; ``None`` when it can."""
    pyside = _pyside_dir()
    if pyside is None or importlib.util.find_spec("pyqtgraph") is None:
        return ("the desktop app needs PySide6 and pyqtgraph: pip install 'difflab[gui]' "
                "(the command line works without them: difflab --help)")
    platform = _platform()
    if platform != "xcb":
        return None
    if not os.environ.get("DISPLAY"):
        return ("no display to open the app on (DISPLAY is not set): run it on a desktop, "
                "or on a virtual screen with `xvfb-run difflab` (sudo apt-get install xvfb); "
                "the command line works without one: difflab --help")
    plugin = pyside / "Qt" / "plugins" / "platforms" / "libqxcb.so"
    if not plugin.exists():
        return None
    packages = missing_xcb_packages(plugin)
    if packages:
        return (f"Qt cannot load its xcb platform plugin: missing system libraries; install "
                f"them with: sudo apt-get install {' '.join(packages)}")
    return None


def gui(args) -> int:
    """Open the app, with ``args.session`` if given."""
    session = getattr(args, "session", None)
    if session is not None and not os.path.isfile(session):
        raise UsageError(f"no such session file: {session}")
    problem = gui_problem()
    if problem is not None:
        print(f"difflab: {problem}", file=sys.stderr)
        return EXIT_NO_DISPLAY
    from difflab.gui import run_app

    return run_app(session)
