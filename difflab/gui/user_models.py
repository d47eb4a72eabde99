"""The user's own models in the app: model files (with a trust prompt), reloading, equations.

- "Load model file…" takes a Python model file (``.py``) or an equation file (``.eqn``).
  A ``.py`` file runs only after the user agrees, once per file content (its SHA-256,
  remembered in :class:`difflab.app.trust.TrustStore`); the file's classes join the
  model browser under "user".
- Loaded files are watched: when one changes on disk it is loaded again (asking first
  if the new content is not trusted), keeping the parameter values whose names remain.
- The equation editor checks the text as it is typed (``difflab.models.check_equations``)
  and builds the model on request (``difflab.models.from_equations``): text is data,
  nothing is run, no prompt. When an equation model is chosen (from a session file too)
  the editor shows that model's text.
"""

from pathlib import Path

from PySide6.QtCore import QFileSystemWatcher, QTimer
from PySide6.QtGui import QFont, QFontDatabase
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

import difflab as dl

from ..app.lab import Lab
from ..app.trust import TrustStore
from .widgets import lines_tall

EDITOR_LINES = 10  # the equations editor shows at least this many lines
EXAMPLE = """name: Spring
description: damped spring, typed as equations
params: k = 1.0 in (0, 10), c = 0.1 in (0, 2)
init: x = 1, v = 0

dx/dt = v
dv/dt = -k*x - c*v
"""


class UserModels:
    """Loads, trusts, watches and reloads the model files of one window."""

    def __init__(self, window, lab: Lab, store: TrustStore | None = None):
        self.window, self.lab = window, lab
        self.store = store or TrustStore()
        self.files: dict[str, object] = {}  # path -> difflab.models.ModelFile
        self.watcher = QFileSystemWatcher(window)
        self.watcher.fileChanged.connect(self._file_changed)

    # -- dialogs (replaced in tests) --------------------------------------------------

    def ask_path(self) -> str:
        path, _ = QFileDialog.getOpenFileName(
            self.window, "Load model file", "",
            "Model files (*.py *.eqn);;Python model files (*.py);;Equations (*.eqn)")
        return path

    def ask_trust(self, info) -> str:
        """``"always"``, ``"once"`` or ``"no"``: may the file's code run?"""
        box = QMessageBox(self.window)
        box.setIcon(QMessageBox.Icon.Warning)
        box.setWindowTitle("Run a model file?")
        names = ", ".join(info.class_names) or "no classes"
        box.setText(f"Loading {Path(info.path).name} runs its Python code.")
        box.setInformativeText(f"It defines {names}.\nSHA-256 {info.sha256[:16]}…\n"
                               "Run it only if you trust where it came from.")
        box.setDetailedText(info.source[:20_000])
        always = box.addButton("Trust and run", QMessageBox.ButtonRole.AcceptRole)
        once = box.addButton("Run once", QMessageBox.ButtonRole.YesRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.exec()
        return {always: "always", once: "once"}.get(box.clickedButton(), "no")

    # -- loading -------------------------------------------------------------------------

    def load(self, path: str | None = None) -> list[str]:
        """Load a model file; returns the names its models got in the browser."""
        path = path or self.ask_path()
        if not path:
            return []
        try:
            if path.endswith(".eqn"):
                classes = [dl.models.load_equations(path)]
            else:
                model_file = self._run_if_trusted(path)
                if model_file is None:
                    return []
                self.files[str(Path(model_file.path))] = model_file
                self.watcher.addPath(str(Path(model_file.path)))
                classes = list(model_file.values())
        except (ValueError, OSError) as error:  # ModelFileError, EquationError: in words
            self.lab.log(f"cannot load {path}: {error}", "error")
            return []
        names = [self.lab.add_user_model(cls) for cls in classes]
        self.lab.log(f"loaded {', '.join(names) or 'no models'} from {path}")
        if names:
            self.lab.select_model(names[0])
        return names

    def _run_if_trusted(self, path: str):
        info = dl.models.peek_file(path)
        if not self.store.is_trusted(info.sha256):
            answer = self.ask_trust(info)
            if answer == "no":
                self.lab.log(f"did not run {path}", "warning")
                return None
            if answer == "always":
                self.store.trust(info.sha256, info.path)
        return dl.models.load_file(path, sha256=info.sha256)

    def _file_changed(self, path: str) -> None:
        # editors replace files on save: look again once it is back, and keep watching
        QTimer.singleShot(200, lambda: self.reload(path))

    def reload(self, path: str) -> None:
        """Load a changed file again, keeping parameter values whose names still exist."""
        old = self.files.get(path)
        if old is None or not Path(path).exists():
            return
        if path not in self.watcher.files():
            self.watcher.addPath(path)
        if not old.changed():
            return
        try:
            new = self._run_if_trusted(path)
        except (ValueError, OSError) as error:
            self.lab.log(f"{path} changed but cannot be loaded: {error}", "error")
            return
        if new is None:
            return
        self.files[path] = new
        for name, cls in new.items():
            self.lab.replace_user_model(name, cls)
        self.lab.log(f"reloaded {path}")


def fixed_font(font: QFont) -> QFont:
    """The system's fixed-width font, no smaller than ``font`` (the application's)."""
    fixed = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    if font.pointSizeF() > fixed.pointSizeF():
        fixed.setPointSizeF(font.pointSizeF())
    return fixed


class EquationEditor(QWidget):
    """Type a model as equations; errors show as you type; "Use" builds and selects it."""

    def __init__(self, lab: Lab, parent=None):
        super().__init__(parent)
        self.lab = lab
        self.text = QPlainTextEdit()
        self.text.setObjectName("equations")
        self.text.setFont(fixed_font(self.text.font()))
        self.set_lines(EDITOR_LINES)
        self.text.setPlainText(EXAMPLE)
        self.problems = QLabel()
        self.problems.setWordWrap(True)
        self.use_button = QPushButton("Use this model")
        self.use_button.setObjectName("use_equations")
        self._check_timer = QTimer(self)
        self._check_timer.setSingleShot(True)
        self._check_timer.setInterval(250)
        self._check_timer.timeout.connect(self.check)
        self.text.textChanged.connect(self._check_timer.start)
        self.use_button.clicked.connect(self.build)
        lab.events.model.connect(self._model_changed)
        row = QHBoxLayout()
        row.addWidget(self.problems, 1)
        row.addWidget(self.use_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.text, 1)
        layout.addLayout(row)
        self._model_changed(None)
        self.check()

    def set_lines(self, lines: int) -> None:
        """Show at least ``lines`` lines of the editor's own (fixed-width) font."""
        self.text.setMinimumHeight(lines_tall(self.text, lines))

    def _model_changed(self, event) -> None:
        if getattr(event, "catalog", False):  # the browser changed, not the chosen model
            return
        source = dl.models.source_of(self.lab.model_class(self.lab.model_name))
        if source.kind == "equations" and source.text != self.text.toPlainText():
            self.text.setPlainText(source.text)

    def check(self) -> list:
        """Check the text now; returns the problems (empty when it is a valid model)."""
        problems = dl.models.check_equations(self.text.toPlainText())
        if problems:
            first = problems[0]
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            self.problems.setText(f"<span style='color:#b00020'>line {first.line}, column "
                                  f"{first.column}: {first.message}{more}</span>")
        else:
            self.problems.setText("<span style='color:#2a7a2a'>ok</span>")
        self.use_button.setEnabled(not problems)
        return problems

    def build(self) -> str | None:
        """Build the model and select it; returns its name in the browser."""
        try:
            cls = dl.models.from_equations(self.text.toPlainText())
        except ValueError as error:
            self.lab.log(f"equations: {error}", "error")
            return None
        name = self.lab.add_user_model(cls)
        if name == self.lab.model_name:
            self.lab.replace_user_model(name, cls)
        else:
            self.lab.select_model(name)
        self.lab.log(f"built the equation model {name}")
        return name
