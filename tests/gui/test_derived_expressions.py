"""Typing a derived quantity in the time-series menu: refused inline, or plotted and kept."""

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox

import difflab as dl
from difflab.app.session_io import save_lab
from difflab.app.views import ExpressionBook
from difflab.gui.derived_dialog import ExpressionDialog
from difflab.gui.plots import CURRENT

from .conftest import LONG, solved


def menu_texts(plot):
    return [a.text() for a in plot.states_menu.actions()]


def open_dialog(plot) -> ExpressionDialog:
    action = next(a for a in plot.states_menu.actions() if a.text() == "Add expression…")
    action.trigger()
    return plot.findChildren(ExpressionDialog)[-1]


def type_and_ok(qtbot, dialog, text):
    dialog.line.setText(text)
    ok = dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok)
    qtbot.mouseClick(ok, Qt.MouseButton.LeftButton)


def test_a_typed_expression_is_refused_inline_or_plotted(qtbot, window):
    run = solved(qtbot, window, "lorenz")
    plot = window.time_plot
    window.tabs.setCurrentWidget(plot)
    before = menu_texts(plot)
    dialog = open_dialog(plot)
    for bad, message in (("x +* y", "syntax error"), ("__class__", "'_'"),
                         ("xx", "did you mean x")):
        type_and_ok(qtbot, dialog, bad)
        assert dialog.isVisible() and dialog.message.isVisible()
        assert message in dialog.message.text()
    assert menu_texts(plot) == before and plot.expressions.to_json() == {}

    type_and_ok(qtbot, dialog, "x*y - beta*z")
    assert not dialog.isVisible()
    entry = next(a for a in plot.states_menu.actions() if a.text() == "x*y - beta*z")
    assert entry.isCheckable() and entry.isChecked()
    key = (CURRENT, "= x*y - beta*z")
    qtbot.waitUntil(lambda: key in plot.curves, timeout=LONG)
    curve = plot.curves[key]  # the data set, not what a plot of this width displays
    t, value = curve.xData, curve.yData
    x, y, z = np.asarray(run.ys).T
    np.testing.assert_allclose(value, x * y - run.model.beta * z, rtol=1e-12)
    np.testing.assert_allclose(t, run.ts)
    assert "x*y - beta*z" in [label.text for _, label in plot.legend.items]

    entry.trigger()  # unchecked: hidden, still offered
    qtbot.waitUntil(lambda: key not in plot.curves, timeout=LONG)
    assert "x*y - beta*z" in menu_texts(plot)


def test_expressions_are_kept_per_model_removable_and_saved(qtbot, window, tmp_path):
    solved(qtbot, window, "lorenz")
    plot = window.time_plot
    plot.add_expression("sqrt(x**2 + y**2)")
    solved(qtbot, window, "pendulum")
    assert "sqrt(x**2 + y**2)" not in menu_texts(plot)
    solved(qtbot, window, "lorenz")
    assert "sqrt(x**2 + y**2)" in menu_texts(plot)

    path = tmp_path / "lab.h5"
    save_lab(window.lab, path, plot_layout=window.plot_layout())
    assert dl.open(path).plot_layout["expressions"] == {"lorenz": ["sqrt(x**2 + y**2)"]}
    plot.expressions = ExpressionBook()  # as a fresh window would have
    assert window.files.open(str(path))
    assert "sqrt(x**2 + y**2)" in menu_texts(plot)

    remove = next(a for a in plot.states_menu.actions() if a.text() == "Remove expression")
    remove.menu().actions()[0].trigger()
    assert "sqrt(x**2 + y**2)" not in menu_texts(plot) and plot.expressions.of("lorenz") == ()
