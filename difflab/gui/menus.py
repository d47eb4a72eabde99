"""The window's actions, menus and tool bar."""

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu

from .export import export_front_figure


def _action(window, text, slot, shortcut=None, tip="") -> QAction:
    action = QAction(text, window)
    action.triggered.connect(slot)
    if shortcut is not None:
        action.setShortcut(QKeySequence(shortcut))
    action.setStatusTip(tip)
    return action


def build_actions(window) -> dict[str, QAction]:
    """Every command of the menus and the tool bar, by name."""
    key, files, lab = QKeySequence.StandardKey, window.files, window.lab
    a = {
        "new": _action(window, "&New", files.new, key.New),
        "open": _action(window, "&Open…", lambda: files.open(), key.Open),
        "save": _action(window, "&Save", lambda: files.save(), key.Save),
        "save_as": _action(window, "Save &As…", lambda: files.save_as(), key.SaveAs),
        "load_model": _action(window, "&Load model file…", window.load_model_file, None,
                              "A Python model file (asks before running it) or equations"),
        "png": _action(window, "Export plot as &PNG…", lambda: files.export_plot("png")),
        "svg": _action(window, "Export plot as S&VG…", lambda: files.export_plot("svg")),
        "csv": _action(window, "Export data as &CSV…", lambda: files.export_csv()),
        "figure": _action(window, "Export &figure…", lambda: export_front_figure(window), None,
                          "The plot in front as PNG, SVG and PDF for a paper: light, titled "
                          "with the model and its parameters"),
        "quit": _action(window, "&Quit", window.close, key.Quit),
        "undo": _action(window, "&Undo", lab.undo, key.Undo),
        "redo": _action(window, "&Redo", lab.redo, key.Redo),
        "reset": _action(window, "Reset &parameters", lab.reset_params),
        "run": _action(window, "&Run (stream)", window.run_stream, "F5",
                       "Simulate with the current settings, drawing the run as it goes"),
        "stop": _action(window, "&Stop", window.stop_all, "Esc", "Stop the running work"),
        "keep": _action(window, "&Keep current run", window.runs_panel.keep_current, "Ctrl+K"),
        "live": _action(window, "&Live re-solve", window.toggle_live, None,
                        "Re-solve and redraw on every parameter change"),
        "restore": _action(window, "Restore default &layout", window.restore_default_layout),
        "about": _action(window, "&About DiffLab", window.about),
        "guide": _action(window, "DiffLab &user guide and models", window.show_guide, "F1",
                         "The documentation and a searchable list of the models"),
        "dark": _action(window, "&Dark theme", window.set_theme, None,
                        "Dark window and plots (remembered)"),
    }
    a["dark"].setCheckable(True)
    a["dark"].setChecked(window.settings.value("theme", "light") == "dark")
    a["undo"].setIconText("Undo")  # the tool bar keeps short labels; the menu says what
    a["redo"].setIconText("Redo")
    a["live"].setCheckable(True)
    a["live"].setChecked(window.live)
    a["stop"].setEnabled(False)
    return a


def build_menus(window, a: dict[str, QAction]) -> QMenu:
    """File, Edit, Run, View and Help menus and the tool bar; returns the Open Recent menu."""
    bar = window.menuBar()
    file_menu = bar.addMenu("&File")
    file_menu.addActions([a["new"], a["open"]])
    recent = QMenu("Open &Recent", window)
    file_menu.addMenu(recent)
    file_menu.addActions([a["save"], a["save_as"]])
    file_menu.addSeparator()
    file_menu.addAction(a["load_model"])
    file_menu.addSeparator()
    file_menu.addActions([a["figure"], a["png"], a["svg"], a["csv"]])
    file_menu.addSeparator()
    file_menu.addAction(a["quit"])
    edit = bar.addMenu("&Edit")
    edit.addActions([a["undo"], a["redo"]])
    edit.addSeparator()
    edit.addAction(a["reset"])
    bar.addMenu("&Run").addActions([a["run"], a["stop"], a["keep"], a["live"]])
    view = bar.addMenu("&View")
    for dock in window.docks.values():
        view.addAction(dock.toggleViewAction())
    view.addSeparator()
    view.addAction(a["restore"])
    view.addAction(a["dark"])
    bar.addMenu("&Help").addActions([a["guide"], a["about"]])
    toolbar = window.addToolBar("Main")
    toolbar.setObjectName("main_toolbar")
    toolbar.setMovable(False)
    toolbar.addActions([a["open"], a["save"]])
    toolbar.addSeparator()
    toolbar.addActions([a["undo"], a["redo"]])
    toolbar.addSeparator()
    toolbar.addActions([a["run"], a["stop"], a["keep"], a["live"]])
    return recent
