"""The dialog in which a derived quantity is typed as an expression (``x*y - beta*z``)."""

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QLineEdit, QVBoxLayout

from .widgets import font_scaled, hint_label, show_error

NAMES_SHOWN = 12  # names listed under the line; a model with many states lists the first


def names_hint(names) -> str:
    """The names an expression may use, shortened for models with many states."""
    names = list(names)
    more = len(names) - NAMES_SHOWN
    shown = ", ".join(names[:NAMES_SHOWN]) + (f" and {more} more" if more > 0 else "")
    return f"Names: {shown}; functions such as sqrt, sin, exp, where; the constant pi."


class ExpressionDialog(QDialog):
    """One line for an expression; ``submit(text)`` takes it or raises ``ValueError``,
    whose message is shown in red under the line while the dialog stays open."""

    def __init__(self, names, submit: Callable[[str], object], parent=None):
        super().__init__(parent)
        self.setWindowTitle("Add expression")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self._submit = submit
        self.line = QLineEdit()
        self.line.setPlaceholderText("for example: x*y - beta*z, sqrt(x**2 + y**2)")
        self.line.setMinimumWidth(font_scaled(self.line, 360))
        hint = hint_label(names_hint(names))
        hint.setWordWrap(True)
        self.message = QLabel()
        self.message.setObjectName("expression_error")
        self.message.setWordWrap(True)
        self.message.hide()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.submit)
        buttons.rejected.connect(self.reject)
        self.line.textEdited.connect(lambda _: self.message.hide())
        layout = QVBoxLayout(self)
        for widget in (QLabel("Plot the expression:"), self.line, self.message, hint, buttons):
            layout.addWidget(widget)

    def submit(self) -> None:
        """Hand the text on and close, or show why it was refused."""
        try:
            self._submit(self.line.text())
        except ValueError as error:
            show_error(self.message, str(error))
            return
        self.accept()
