"""Views chosen by the model (a field's image, derived quantities) and the window's looks."""

import numpy as np
import pytest
from PySide6.QtCore import QByteArray, QSettings, Qt

import difflab as dl
from difflab.app.fields import FieldSession
from difflab.app.lab import Lab
from difflab.app.layout import same_scale
from difflab.gui.field2d_view import Field2DView
from difflab.gui.plots import CURRENT
from difflab.gui.theme import THEMES, apply_theme

from tests.models_for_tests import Rod

from .conftest import LONG, solved


def tab_titles(window):
    return [window.tabs.tabText(i) for i in range(window.tabs.count())]


def test_a_method_of_lines_model_has_a_field_view_with_the_exact_decaying_profile(
        qtbot, window):
    assert "Field" not in tab_titles(window)  # the pendulum's states are no field
    run = solved(qtbot, window, window.lab.add_user_model(Rod, "rod"))
    assert "Field" in tab_titles(window)
    view = window.views["field"]
    window.tabs.setCurrentWidget(view)
    model = window.lab.model
    qtbot.waitUntil(lambda: view.image.image is not None, timeout=LONG)  # drawn throttled
    assert view.image.image.shape == (model.n, len(run.ts))  # x across, t up
    view.set_time(1.0)
    x, u = view.profile.getData()
    t = float(run.ts[np.argmin(abs(np.asarray(run.ts) - 1.0))])
    # the semi-discrete heat equation decays sin(pi x) at D 4 sin^2(pi dx / 2) / dx^2
    rate = float(model.D) * 4 * np.sin(np.pi * model.dx / 2) ** 2 / model.dx**2
    np.testing.assert_allclose(x, model.grid())
    np.testing.assert_allclose(u, np.sin(np.pi * x) * np.exp(-rate * t), rtol=1e-3, atol=1e-6)
    assert f"t = {t:.4g}" in view.profile_plot.titleLabel.text
    solved(qtbot, window, "lorenz")
    assert "Field" not in tab_titles(window) and view.field is None


def test_heat1d_runs_in_the_fields_tab_as_its_exactly_decaying_profile(qtbot):
    session = FieldSession(Lab(), "heat1d", 40, ndim=1)
    session.t1, session.n_frames, session.dt = 1.0, 6, 0.01
    view = Field2DView(session)
    qtbot.addWidget(view)
    view.resize(900, 500)
    view.show()
    assert view.points_box.currentText() == "40"  # its own grid, though not a listed choice
    view.run(0)
    qtbot.waitUntil(lambda: session.complete and view.worker is None, timeout=LONG)
    qtbot.keyClick(view.scrubber, Qt.Key.Key_End)
    last = session.frames[-1]["u"]
    qtbot.waitUntil(lambda: np.array_equal(view.profiles["u"].getData()[1], last))  # throttled
    x, u = view.profiles["u"].getData()
    t, h = session.ts[-1], 1 / 40
    rate = 0.1 * 4 / h**2 * np.sin(np.pi * h / 2) ** 2  # sin(pi x) on the grid of 40 cells
    assert t == pytest.approx(1.0)
    np.testing.assert_allclose(x, (np.arange(40) + 0.5) * h)  # the walls are 0 and 1
    np.testing.assert_allclose(u, np.exp(-rate * t) * np.sin(np.pi * x), atol=1e-5)
    view.shutdown()


def derived_curve(qtbot, window, name):
    plot = window.time_plot
    window.tabs.setCurrentWidget(plot)
    plot.show_derived(name, True)
    qtbot.waitUntil(lambda: (CURRENT, name) in plot.curves, timeout=LONG)
    curve = plot.curves[(CURRENT, name)]  # the data set, not what this width displays
    return curve.xData, curve.yData


def test_derived_quantities_are_plotted_from_the_model(qtbot, window):
    run = solved(qtbot, window, "kuramoto")
    assert window.time_plot.derived == ("order parameter r", "mean phase psi")
    menu = [a.text() for a in window.time_plot.states_menu.actions()]
    assert menu[:3] == ["Derived", "order parameter r", "mean phase psi"]
    assert len(menu) < 20  # 100 phases come in submenus of 20
    t, r = derived_curve(qtbot, window, "order parameter r")
    np.testing.assert_allclose(r, np.abs(np.exp(1j * np.asarray(run.ys)).mean(axis=1)),
                               rtol=1e-9)
    with pytest.raises(ValueError, match="no derived quantity 'energy H'"):
        window.time_plot.show_derived("energy H", True)
    run = solved(qtbot, window, "pendulum")
    _, energy = derived_curve(qtbot, window, "energy H")
    theta, omega = np.asarray(run.ys).T
    np.testing.assert_allclose(energy, omega**2 / 2 + 9.81 * (1 - np.cos(theta)), rtol=1e-9)


def test_dark_theme_colours_the_plots_and_is_remembered(qtbot, make_window, settings):
    window = make_window()
    try:
        window.actions["dark"].trigger()
        dark, dark_colors = THEMES["dark"]["background"], THEMES["dark"]
        assert window.time_plot.plot.backgroundBrush().color().name() == dark
        assert window.views["fit"].residuals.backgroundBrush().color().name() == dark
        assert settings.value("theme") == "dark"
        window.lab.log("a message after the switch")
        html_text = window.log_panel.text.document().toHtml()  # all in the dark colours
        assert THEMES["light"]["text"] not in html_text and "after the switch" in html_text
        assert dark_colors["text"] in html_text and dark_colors["hint"] in html_text
        hint = window.views["fit"].data_label  # a hint label made before the switch
        hint.ensurePolished()
        assert hint.palette().color(hint.foregroundRole()).name() == dark_colors["hint"]
        window.lab.solve_now()  # the current run in the theme's foreground, not black
        pens = [pen.color().name() for (run, _), (pen, *_) in window.phase_plot.wanted().items()
                if run == "current"]
        assert pens == [dark_colors["foreground"]]
        row = next(iter(window.parameter_panel.rows.values()))
        row.refuse("a refused value")  # in the dark theme's red, legible on its background
        assert row.message.isVisible() and dark_colors["error"] in row.message.styleSheet()
        window.shutdown()
        again = make_window()
        assert again.actions["dark"].isChecked()
        assert again.phase_plot.plot.backgroundBrush().color().name() == dark
    finally:
        apply_theme("light")


def test_axes_show_plain_values_and_legends_sit_outside_the_data(window):
    item = window.time_plot.plot.getPlotItem()
    assert not item.getAxis("left").autoSIPrefix and not item.getAxis("bottom").autoSIPrefix
    legend, box = window.time_plot.legend, item.getViewBox()
    assert legend.mapRectToScene(legend.boundingRect()).left() + 1 >= \
        box.mapRectToScene(box.boundingRect()).right()


def test_help_shows_the_guide_and_finds_models(qtbot, window):
    window.actions["guide"].trigger()
    guide = window.guide
    pages = [guide.page_list.item(i).text() for i in range(guide.page_list.count())]
    assert pages[0] == "Overview" and {"Fitting", "Sweeps", "Architecture"} <= set(pages)
    guide.page_list.setCurrentRow(pages.index("Fitting"))
    assert "fit" in guide.page.toPlainText().lower()
    guide.search.setText("lorenz")
    assert [guide.model_list.item(i).text() for i in range(guide.model_list.count())] == ["lorenz"]
    assert "sigma" in guide.model_text.toPlainText() and "rho" in guide.model_text.toPlainText()
    guide.search.setText("no such thing")
    assert guide.model_list.count() == 0


def test_oscillators_are_not_filed_under_chaos():
    assert dl.models.get("van_der_pol").domain == "oscillators"
    assert dl.models.get("fitzhugh_nagumo").domain == "neural"
    assert dl.models.get("lorenz").domain == "chaos"


def test_equations_editor_is_tall_and_highlighted(window):
    """Ten lines of the editor's font, or at least three where a short screen (or a large
    font) leaves no room for ten in the window or in its share of the screen's height
    (the 800-pixel offscreen screen: the window gives up editor lines)."""
    from difflab.gui.main_window import EDITOR_LINES, EDITOR_SHARE, MIN_EDITOR_LINES

    editor = window.equation_editor.text
    line = editor.fontMetrics().lineSpacing()
    lines = editor.minimumHeight() / line
    height = window.screen().availableGeometry().height()
    dock = window.docks["equations"].minimumSizeHint().height()
    more = (EDITOR_LINES - lines) * line  # with ten lines
    short = window.minimumSizeHint().height() + more > height or \
        dock + more > EDITOR_SHARE * height
    assert lines >= 0.9 * EDITOR_LINES or (short and lines >= 0.9 * MIN_EDITOR_LINES), lines
    assert dock <= EDITOR_SHARE * height or lines <= MIN_EDITOR_LINES, dock
    editor.setPlainText("dx/dt = -k*x  # decay")
    block = editor.document().firstBlock()
    colours = {(f.start, f.length): f.format.foreground().color().name()
               for f in block.layout().formats()}
    assert colours[(0, 5)] == "#1f77b4" and colours[(14, 7)] == "#7f8c8d"


def test_a_layout_saved_at_another_screen_scale_is_not_restored(qtbot, make_window, tmp_path):
    assert same_scale("1.0", 1.0) and same_scale(None, 1.0) and same_scale(1.5, 1.5)
    assert not same_scale("1.5", 1.0) and not same_scale("nan", 1.0)
    assert not same_scale("wide", 1.0)
    window = make_window()
    window.resize(700, 500)
    window.save_window_settings()
    stored = QSettings(window.settings.fileName(), QSettings.Format.IniFormat)
    assert isinstance(stored.value("geometry"), QByteArray)
    assert same_scale(stored.value("window_scale"), window.screen_scale())
    window.settings.setValue("window_scale", 1.5 * window.screen_scale())
    window.shutdown()
    again = make_window()
    assert (again.width(), again.height()) != (700, 500)


def test_sizes_follow_the_font(qtbot):
    """Sizes given for a 9-point font grow with a larger one: text boxes by their own
    lines, control columns by the font's line spacing."""
    from PySide6.QtGui import QFont
    from PySide6.QtWidgets import QPlainTextEdit, QWidget

    from difflab.gui.widgets import font_scaled, lines_tall

    small, large = QWidget(), QWidget()
    small.setFont(QFont(small.font().family(), 9))
    large.setFont(QFont(large.font().family(), 18))
    assert font_scaled(large, 300) > 1.5 * font_scaled(small, 300)
    editor = QPlainTextEdit()
    qtbot.addWidget(editor)
    editor.setFont(QFont("monospace", 20))
    assert lines_tall(editor, 10) >= 10 * editor.fontMetrics().lineSpacing()
