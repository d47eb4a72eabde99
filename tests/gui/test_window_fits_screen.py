"""The window fits its screen's available geometry, whatever model and size it remembers
(issue 35: heat1d remembered opened 1360x2013 on a 1000-pixel screen)."""

from PySide6.QtWidgets import QMainWindow

from difflab.app.lab import DEFAULT_MODEL
from difflab.app.layout import fitted


def _inside(window) -> bool:
    return window.screen().availableGeometry().contains(window.frameGeometry())


def _unsqueezed(view) -> bool:
    """Whether a view has the room its controls need (else they overlap or are cut)."""
    need = view.minimumSizeHint()
    return need.width() <= view.width() and need.height() <= view.height()


def test_a_remembered_big_model_and_window_open_inside_the_screen(qtbot, settings, make_window):
    big = QMainWindow()  # what a window laid out for 100 states on a tall screen remembered
    big.resize(1360, 2013)
    settings.setValue("model", "kuramoto")
    settings.setValue("geometry", big.saveGeometry())
    settings.setValue("window_scale", 1.0)
    window = make_window()
    assert window.lab.model_name == "kuramoto" and window.screen_scale() == 1.0
    area = window.screen().availableGeometry()
    assert area.height() < 2013
    assert _inside(window), (window.frameGeometry(), area)
    for key, view in window.views.items():  # some with long columns of controls
        if window.tabs.indexOf(view) < 0:
            continue
        window.tabs.setCurrentWidget(view)
        qtbot.wait(10)
        assert _inside(window), key
        assert _unsqueezed(view), (key, view.minimumSizeHint(), view.size())

    window.resize(3000, 3000)  # Restore default layout brings it back inside
    window.restore_default_layout()
    assert _inside(window)
    assert window.minimumSizeHint().height() <= area.height()
    assert window.minimumSizeHint().width() <= area.width()


def test_a_remembered_model_that_is_now_a_field_model_opens_the_default(settings,
                                                                       make_window):
    """heat1d was an ODE model of the lab; a window that remembers it opens all the same."""
    settings.setValue("model", "heat1d")
    assert make_window().lab.model_name == DEFAULT_MODEL


def test_a_window_is_fitted_into_the_available_area():
    # at QT_SCALE_FACTOR=1.5 it opened 2040x1290 on 1600x1000
    assert fitted((0, 0, 2040, 1290), (0, 0, 1600, 1000)) == (0, 0, 1600, 1000)
    assert fitted((900, 700, 800, 500), (0, 0, 1600, 1000), (10, 30)) == (790, 470, 800, 500)
    assert fitted((-50, 40, 400, 300), (100, 0, 1000, 800)) == (100, 40, 400, 300)


def test_the_state_boxes_show_the_whole_names_of_the_next_model(qtbot, window):
    from .conftest import solved

    solved(qtbot, window, "pendulum")  # short names first: theta, omega
    solved(qtbot, window, "lotka_volterra")
    qtbot.wait(20)
    for box in (window.phase_plot.y_box, *window.phase3d_view.boxes):
        if box.isEnabled() and box.currentText():
            text = box.fontMetrics().horizontalAdvance(box.currentText())
            assert box.sizeHint().width() > text, box.currentText()
    assert window.phase_plot.y_box.currentText() == "predator"
