"""Starting the app: `difflab` / `difflab gui` check for a display and Qt's system libraries
first and say in one line what is missing; the rest of the CLI never needs Qt."""

import os
import subprocess
import sys

import pytest

from difflab.cli import gui_command


@pytest.fixture
def on_linux_x11(monkeypatch):
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setattr(gui_command.sys, "platform", "linux")


def test_no_display_gives_one_line(on_linux_x11, monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    problem = gui_command.gui_problem()
    assert "DISPLAY is not set" in problem and "xvfb-run difflab" in problem
    assert "\n" not in problem


def test_missing_xcb_libraries_are_named_with_their_packages(on_linux_x11, monkeypatch):
    monkeypatch.setenv("DISPLAY", ":0")

    def cdll(path):
        raise OSError("libxcb-icccm.so.4: cannot open shared object file: No such file")

    monkeypatch.setattr(gui_command.ctypes, "CDLL", cdll)
    found = {"xcb-cursor": None, "xcb-keysyms": None}
    monkeypatch.setattr(gui_command.ctypes.util, "find_library",
                        lambda name: None if name in found else f"lib{name}.so")
    problem = gui_command.gui_problem()
    assert problem.startswith("Qt cannot load its xcb platform plugin")
    assert problem.endswith("sudo apt-get install libxcb-icccm4 libxcb-cursor0 libxcb-keysyms1")


def test_offscreen_and_wayland_skip_the_xcb_check(monkeypatch):
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    monkeypatch.delenv("DISPLAY", raising=False)
    assert gui_command.gui_problem() is None


@pytest.mark.slow
def test_difflab_without_a_display_prints_one_line_and_never_imports_qt(tmp_path):
    """`difflab` alone, with no display: one line, exit 1; CLI commands import no Qt."""
    code = ("import sys; from difflab.cli import main; "
            "print('exit', main([]), file=sys.stderr); main(['models']); main(['devices']); "
            f"print('exit', main(['gui', {str(tmp_path / 'nope.h5')!r}]), file=sys.stderr); "
            "from difflab.cli import gui_command; from difflab.app import lab, session_io, sweeps, fits; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('PySide6', 'shiboken6', 'pyqtgraph')))")
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env["DIFFLAB_NO_COMPILATION_CACHE"] = "1"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    err = done.stderr.splitlines()
    assert err[0].startswith("difflab: no display") and err[1] == "exit 1"
    assert "no such session file" in err[2] and err[3] == "exit 2"
    assert done.stdout.strip().splitlines()[-1] == "[]"
