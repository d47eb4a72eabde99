"""Light and dark themes: the Qt palette and the colours of every pyqtgraph plot.

:func:`apply_theme` sets the application's palette and pyqtgraph's defaults, and
recolours the plots already on screen; :func:`theme_colors` is what new plots use.
"""

import pyqtgraph as pg
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

THEMES = {
    "light": {"background": "#ffffff", "foreground": "#222222", "axis": "#444444",
              "window": "#efefef", "base": "#ffffff", "text": "#111111",
              "button": "#e6e6e6", "highlight": "#2a7ab0", "disabled": "#8a8a8a",
              "hint": "#6b6b6b", "warning": "#a15c00", "error": "#b00020"},
    "dark": {"background": "#1e1f22", "foreground": "#dddddd", "axis": "#aaaaaa",
             "window": "#2b2d31", "base": "#1e1f22", "text": "#e6e6e6",
             "button": "#3a3d42", "highlight": "#3d8fd1", "disabled": "#777777",
             "hint": "#a0a3a8", "warning": "#f0a040", "error": "#ff6b7a"},
}
_current = ["light"]


def theme_colors(name: str | None = None) -> dict[str, str]:
    """The colours of theme ``name`` (default: the one in use)."""
    name = name or _current[0]
    if name not in THEMES:
        raise ValueError(f"unknown theme {name!r}; choose from {', '.join(THEMES)}")
    return THEMES[name]


def current_theme() -> str:
    return _current[0]


def palette(name: str) -> QPalette:
    c, role = theme_colors(name), QPalette.ColorRole
    p = QPalette()
    for roles, key in (((role.Window,), "window"), ((role.Base, role.AlternateBase), "base"),
                       ((role.WindowText, role.Text, role.ButtonText, role.ToolTipText),
                        "text"), ((role.Button, role.ToolTipBase), "button"),
                       ((role.Highlight,), "highlight")):
        for r in roles:
            p.setColor(r, QColor(c[key]))
    p.setColor(role.HighlightedText, QColor("#ffffff"))
    p.setColor(role.PlaceholderText, QColor(c["hint"]))  # hint labels: palette(placeholder-text)
    for r in (role.Text, role.WindowText, role.ButtonText):
        p.setColor(QPalette.ColorGroup.Disabled, r, QColor(c["disabled"]))
    return p


def apply_theme(name: str) -> None:
    """Use theme ``name`` for the whole application, plots already drawn included."""
    c = theme_colors(name)
    _current[0] = name
    pg.setConfigOptions(background=c["background"], foreground=c["foreground"])
    app = QApplication.instance()
    if app is None:
        return
    app.setPalette(palette(name))
    for widget in app.allWidgets():
        if isinstance(widget, pg.GraphicsView):
            recolor(widget)
        elif "palette(" in widget.styleSheet():  # a style sheet reads the palette once
            widget.setStyleSheet(widget.styleSheet())
        if hasattr(widget, "retheme"):  # a widget that draws in the theme's colours itself
            widget.retheme()


def recolor(view: pg.GraphicsView) -> None:
    """Give a plot widget (and each plot in it) the current theme's colours."""
    c = theme_colors()
    view.setBackground(c["background"])
    for item in view.scene().items():
        if isinstance(item, pg.AxisItem):
            item.setPen(pg.mkPen(c["axis"]))
            item.setTextPen(pg.mkPen(c["foreground"]))
        elif isinstance(item, pg.LegendItem):
            item.setLabelTextColor(c["foreground"])
        elif isinstance(item, pg.LabelItem):
            item.setText(item.text, color=c["foreground"])
