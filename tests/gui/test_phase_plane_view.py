"""The phase plane and bifurcation views: computed off the GUI thread, drawn, clickable."""

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt

import difflab as dl

from .conftest import LONG


def _show(window, key):
    view = window.views[key]
    window.tabs.setCurrentWidget(view)
    return view


def _compute(qtbot, view, box):
    with qtbot.waitSignal(view.finished, timeout=LONG) as blocker:
        view.set_box(box)
        view.compute()
    return blocker.args[0]


def _click(qtbot, plot, x, y):
    """A left click at data point ``(x, y)`` of a ``PlotWidget``."""
    scene = plot.getPlotItem().getViewBox().mapViewToScene(QPointF(x, y))
    pos = plot.mapFromScene(scene)
    qtbot.mouseClick(plot.viewport(), Qt.MouseButton.LeftButton, pos=pos)


def _markers(view):
    return {group: np.column_stack(scatter.getData()) for group, scatter in view.markers.items()}


def test_lotka_volterra_plane_shows_nullclines_through_the_equilibria_and_a_click_runs(
        qtbot, window):
    window.lab.select_model("lotka_volterra")
    window.lab.set_settings(t1=4.0)
    view = _show(window, "phase_plane")
    plane = _compute(qtbot, view, ((-1.0, 10.0), (-1.0, 6.0)))
    model = window.lab.model
    a, b, c, d = (float(getattr(model, n)) for n in ("alpha", "beta", "gamma", "delta"))
    x, y = view.nullclines[0].getData()  # prey' = 0: prey = 0 or predator = a / b
    assert len(x) > 50 and np.all(np.minimum(abs(x), abs(y - a / b)) < 1e-9)
    x, y = view.nullclines[1].getData()  # predator' = 0: predator = 0 or prey = c / d
    assert np.all(np.minimum(abs(y), abs(x - c / d)) < 1e-9)
    markers = _markers(view)
    np.testing.assert_allclose(markers["saddle"], [[0.0, 0.0]], atol=1e-9)
    np.testing.assert_allclose(markers["other"], [[c / d, a / b]], atol=1e-9)  # a centre
    assert len(markers["stable"]) == len(markers["unstable"]) == 0
    assert plane.stability == ("saddle", "centre")
    assert len(view.arrows.getData()[0]) > 100

    view.plot.getPlotItem().setRange(xRange=(5, 7), yRange=(1, 3), padding=0)  # fine pixels
    with qtbot.waitSignal(view.orbit_drawn, timeout=LONG) as blocker:
        _click(qtbot, view.plot, 6.0, 2.0)
    orbit = blocker.args[0]
    px, py = view.point
    assert abs(px - 6.0) < 0.2 and abs(py - 2.0) < 0.2
    assert (view.start_x.value(), view.start_y.value()) == (px, py)
    expected = np.asarray(dl.simulate(model, 4.0, y0=np.array([px, py])).ys)
    np.testing.assert_allclose(np.asarray(orbit.forward.ys), expected, rtol=1e-12)
    fx, fy = view.forward_curve.getData()
    np.testing.assert_allclose(fx, expected[:, 0])
    np.testing.assert_allclose(fy, expected[:, 1])
    assert len(view.backward_curve.getData()[0]) > 10


def test_pendulum_plane_classes_and_redraw_on_a_parameter_change(qtbot, window):
    window.lab.select_model("pendulum")
    view = _show(window, "phase_plane")
    _compute(qtbot, view, ((-4.0, 4.0), (-5.0, 5.0)))
    markers = _markers(view)
    np.testing.assert_allclose(markers["saddle"], [[-np.pi, 0], [np.pi, 0]], atol=1e-9)
    np.testing.assert_allclose(markers["other"], [[0.0, 0.0]], atol=1e-9)
    before = view.plane.v.copy()
    with qtbot.waitSignal(view.finished, timeout=LONG) as blocker:
        window.lab.set_param("g", 2 * float(window.lab.params["g"]))
    np.testing.assert_allclose(blocker.args[0].v, 2 * before, rtol=1e-9, atol=1e-12)
    with qtbot.waitSignal(view.orbit_drawn, timeout=LONG):
        view.start_x.setValue(0.5)
        view.start_y.setValue(0.0)
        view.orbit_button.click()
    assert view.point == (0.5, 0.0)


@pytest.mark.slow
def test_lorenz_bifurcation_diagram_labels_and_a_click_sets_rho(qtbot, window):
    window.lab.select_model("lorenz")
    view = _show(window, "bifurcation")
    view.param.setCurrentText("rho")
    view.state.setCurrentText("x")
    view.start.setValue(0.0)
    view.stop.setValue(30.0)
    with qtbot.waitSignal(view.finished, timeout=LONG) as blocker:
        view.compute_button.click()
    diagram = blocker.args[0]
    labels = {(t.toPlainText(), round(t.pos().x(), 4)) for t in view.texts}
    assert ("BP", 1.0) in labels and ("H", 24.7368) in labels
    hopf = [t.pos().x() for t in view.texts if t.toPlainText() == "H"]
    np.testing.assert_allclose(hopf, 10 * (10 + 8 / 3 + 3) / (10 - 8 / 3 - 1), rtol=1e-9)
    assert {c.stable for c in view.curves} == {True, False}
    origin = [c for c in view.curves if np.allclose(c.getData()[1], 0.0)]
    assert any(c.stable and c.getData()[0].max() <= 1.0 + 1e-9 for c in origin)
    assert diagram.request.param == "rho"

    view.plot.getPlotItem().setRange(xRange=(8, 12), yRange=(3, 7), padding=0)  # fine pixels
    _click(qtbot, view.plot, 10.0, np.sqrt(8 / 3 * 9))  # on the C+ branch at rho = 10
    assert abs(window.lab.params["rho"] - 10.0) < 0.5, window.lab.params["rho"]
    assert window.lab.undo_stack.undo_text.endswith("from the bifurcation diagram")
    assert view.value_line.value() == window.lab.params["rho"]
    window.lab.undo()
    assert window.lab.params["rho"] == 28.0


def test_a_one_state_model_clears_the_last_plane(qtbot, window):
    """After heat1d's plane, ornstein_uhlenbeck (one state) said a plane needs two states
    beside heat1d's nullclines, arrows and equilibrium; now the plot is empty."""
    window.lab.select_model("lotka_volterra")
    view = _show(window, "phase_plane")
    _compute(qtbot, view, ((-1.0, 10.0), (-1.0, 6.0)))
    assert len(view.arrows.getData()[0]) > 100
    window.lab.select_model("ornstein_uhlenbeck")
    qtbot.waitUntil(lambda: "needs two" in view.status.text(), timeout=LONG)
    drawn = [view.arrows, *view.nullclines, *view.markers.values()]
    assert all(c.getData()[0] is None or len(c.getData()[0]) == 0 for c in drawn)


def test_a_plane_that_ends_after_its_window_was_deleted_draws_nothing(qtbot, settings):
    """A window closed after a plane was computed but before the GUI thread heard of it:
    the task's end finds no view to draw into."""
    import shiboken6
    from PySide6.QtCore import QCoreApplication, QEvent

    from difflab.gui import workers
    from difflab.gui.main_window import MainWindow

    window = MainWindow(settings=settings)
    window.files.ask_unsaved = lambda: "discard"
    window.show()
    qtbot.waitUntil(lambda: window.lab.current is not None, timeout=LONG)
    window.lab.select_model("lotka_volterra")
    view = _show(window, "phase_plane")
    view.set_box(((-1.0, 10.0), (-1.0, 6.0)))
    view.compute()
    worker = view.task.worker
    qtbot.waitUntil(worker.isRunning, timeout=LONG)
    assert worker.wait(LONG)  # it has ended; its end is not delivered yet
    window.shutdown()
    window.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    assert not shiboken6.isValid(view)
    qtbot.waitUntil(lambda: not workers._running, timeout=LONG)
    qtbot.wait(100)  # the task's end is delivered; an exception here fails the test
