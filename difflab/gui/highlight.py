"""Colours for the equations editor: section words, derivatives, functions, numbers, comments."""

import re

from PySide6.QtGui import QColor, QFont, QSyntaxHighlighter, QTextCharFormat

RULES = (  # pattern, colour, bold; later rules win where they overlap
    (r"\b[A-Za-z_]\w*(?=\s*\()", "#8e44ad", False),  # a function call
    (r"\bd[A-Za-z_]\w*\s*/\s*dt\b", "#1f77b4", True),  # a derivative dx/dt
    (r"^\s*(params|init|name|description)\s*:", "#c0392b", True),  # a section word
    (r"(?<![\w.])\d+\.?\d*(?:[eE][-+]?\d+)?", "#d35400", False),  # a number
    (r"#.*$", "#7f8c8d", False),  # a comment
)


def _format(color: str, bold: bool) -> QTextCharFormat:
    fmt = QTextCharFormat()
    fmt.setForeground(QColor(color))
    if bold:
        fmt.setFontWeight(QFont.Weight.Bold)
    return fmt


class EquationHighlighter(QSyntaxHighlighter):
    """Highlights equations text (the syntax of ``difflab.models.from_equations``)."""

    def __init__(self, document):
        super().__init__(document)
        self.rules = [(re.compile(p), _format(c, b)) for p, c, b in RULES]

    def highlightBlock(self, text: str) -> None:  # noqa: N802 (Qt override)
        for pattern, fmt in self.rules:
            for match in pattern.finditer(text):
                self.setFormat(match.start(), match.end() - match.start(), fmt)
