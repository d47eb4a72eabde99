"""The 3-D phase view (three states turned by hand) and the colours of many states."""

import numpy as np
import pytest
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QColor, QMouseEvent, QWheelEvent
from PySide6.QtWidgets import QApplication

from difflab.app.session_io import save_lab
from difflab.gui.plots import CURRENT, PALETTE, PHASE_POINTS, state_color

from .conftest import LONG, solved

KEY = (CURRENT, "phase3d")


def shown(qtbot, window):
    view = window.views["phase3d"]
    window.tabs.setCurrentWidget(view)
    qtbot.waitUntil(lambda: KEY in view.curves, timeout=LONG)
    return view


def by_hand(points, lo, hi, azimuth, elevation):
    """Scale into [-1, 1]^3, then x right, z up at (0, 0), turned about z, tilted."""
    q = 2 * (points - lo) / (hi - lo) - 1
    a, e = np.radians(azimuth), np.radians(elevation)
    sx = q[:, 0] * np.cos(a) + q[:, 1] * np.sin(a)
    sy = (-q[:, 0] * np.sin(a) + q[:, 1] * np.cos(a)) * np.sin(e) + q[:, 2] * np.cos(e)
    return sx, sy


def drawn(view, key=KEY):
    x, y = view.curves[key].getData()
    return np.asarray(x), np.asarray(y)


def states_of(run, names):
    step = max(1, len(run.ts) // PHASE_POINTS)
    return np.asarray(run.ys)[::step][:, [run.state_names.index(n) for n in names]]


def test_lorenz_is_drawn_as_the_projection_of_its_states(qtbot, window):
    run = solved(qtbot, window, "lorenz")
    view = shown(qtbot, window)
    assert view.axes == ("x", "y", "z") and view.plot.isVisible()
    xyz = states_of(run, "xyz")
    lo, hi = xyz.min(axis=0), xyz.max(axis=0)
    for azimuth, elevation in ((view.azimuth, view.elevation), (90, 0), (10, 90)):
        view.set_view(azimuth, elevation)
        view.draw()
        np.testing.assert_allclose(drawn(view), by_hand(xyz, lo, hi, azimuth, elevation),
                                   atol=1e-12)
    # a quarter turn shows y across and z up: the y-z plane
    view.set_view(90, 0)
    view.draw()
    q = 2 * (xyz - lo) / (hi - lo) - 1
    np.testing.assert_allclose(drawn(view), (q[:, 1], q[:, 2]), atol=1e-12)
    assert [item.toPlainText() for item in view.names] == ["x", "y", "z"]
    values = [item.toPlainText() for item in view.values]
    assert values == [f"{v:.3g}" for k in range(3) for v in (lo[k], hi[k])]


def test_kept_runs_and_other_states_share_the_box(qtbot, window):
    kept = solved(qtbot, window, "lorenz")
    view = shown(qtbot, window)
    window.lab.keep_current("first")
    window.lab.set_params({"rho": 15.0})
    qtbot.waitUntil(lambda: window.lab.current is not kept, timeout=LONG)
    qtbot.waitUntil(lambda: ("first", "phase3d") in view.curves, timeout=LONG)
    view.set_axes("z", "x", "y")
    view.set_view(0, 0)
    view.draw()
    current, old = states_of(window.lab.current, "zxy"), states_of(kept, "zxy")
    both = np.concatenate([current, old])
    lo, hi = both.min(axis=0), both.max(axis=0)
    np.testing.assert_allclose(drawn(view), by_hand(current, lo, hi, 0, 0), atol=1e-12)
    np.testing.assert_allclose(drawn(view, ("first", "phase3d")), by_hand(old, lo, hi, 0, 0),
                               atol=1e-12)
    assert view.curves[("first", "phase3d")].opts["pen"].style() == Qt.PenStyle.DashLine
    with pytest.raises(ValueError, match="lorenz has no state 'w'"):
        view.set_axes("x", "y", "w")


def _send(widget, kind, pos, buttons):
    button = Qt.MouseButton.LeftButton if kind != QEvent.Type.MouseMove else \
        Qt.MouseButton.NoButton
    event = QMouseEvent(kind, QPointF(pos), QPointF(widget.mapToGlobal(pos)), button, buttons,
                        Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(widget, event)


def drag(qtbot, widget, start: QPoint, end: QPoint, steps: int = 10):
    """A left-button drag from ``start`` to ``end`` (widget pixels), its moves 20 ms
    apart (pyqtgraph drops moves that come within 10 ms of the last)."""
    held = Qt.MouseButton.LeftButton
    _send(widget, QEvent.Type.MouseButtonPress, start, held)
    for i in range(1, steps + 1):
        qtbot.wait(20)
        _send(widget, QEvent.Type.MouseMove, start + (end - start) * (i / steps), held)
    _send(widget, QEvent.Type.MouseButtonRelease, end, Qt.MouseButton.NoButton)


def test_dragging_turns_the_view_and_the_wheel_zooms(qtbot, window):
    solved(qtbot, window, "lorenz")
    view = shown(qtbot, window)
    view.set_view(0, 0)
    view.draw()
    before = drawn(view)
    viewport = view.plot.viewport()
    middle = viewport.rect().center()
    drag(qtbot, viewport, middle, middle + QPoint(50, 0))  # to the right: the front follows
    assert view.azimuth == pytest.approx(-20.0, abs=1.0) and view.elevation == 0.0
    drag(qtbot, viewport, middle, middle + QPoint(0, 25))  # down: seen more from above
    assert view.elevation == pytest.approx(10.0, abs=1.0)
    qtbot.waitUntil(lambda: not np.allclose(drawn(view)[0], before[0]), timeout=5_000)
    (x0, x1), _ = view.plot.getPlotItem().viewRange()
    wheel = QWheelEvent(QPointF(middle), QPointF(viewport.mapToGlobal(middle)), QPoint(0, 0),
                        QPoint(0, 240), Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
                        Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(viewport, wheel)
    (z0, z1), _ = view.plot.getPlotItem().viewRange()
    assert z1 - z0 < 0.9 * (x1 - x0)  # zoomed in
    view.set_view(190, 120)
    assert (view.azimuth, view.elevation) == (-170.0, 90.0)
    view.reset_button.click()
    (r0, r1), _ = view.plot.getPlotItem().viewRange()
    assert r1 - r0 == pytest.approx(x1 - x0)


def test_a_model_with_two_states_shows_a_message_instead(qtbot, window):
    view = window.views["phase3d"]
    window.tabs.setCurrentWidget(view)
    assert window.lab.model_name == "pendulum"
    assert view.message.isVisible() and not view.plot.isVisible()
    assert "needs a model with at least 3 states; pendulum has 2" in view.message.text()
    assert not any(box.isEnabled() for box in view.boxes)
    assert view.curves == {}
    solved(qtbot, window, "lorenz")
    qtbot.waitUntil(lambda: KEY in view.curves, timeout=LONG)
    assert view.plot.isVisible() and not view.message.isVisible()


def test_many_states_get_distinct_colours_and_few_keep_the_palette(qtbot, window):
    colors = [state_color(i, 100).name() for i in range(100)]
    assert len(set(colors)) == 100

    def apart(a, b):  # how far apart two colours are, in RGB
        return np.linalg.norm(np.subtract(QColor(a).getRgb()[:3], QColor(b).getRgb()[:3]))

    neighbours = [apart(colors[i], colors[i + 1]) for i in range(99)]
    assert min(neighbours + [apart(colors[0], colors[99])]) > 80  # theta0 vs theta1, theta99
    assert [state_color(i, 3).name() for i in range(3)] == PALETTE[:3]
    assert [state_color(i).name() for i in range(12)] == PALETTE + PALETTE[:2]
    solved(qtbot, window, "kuramoto")
    plot = window.time_plot
    window.tabs.setCurrentWidget(plot)
    window.lab.set_layout(time_states=("theta0", "theta10", "theta50"))
    qtbot.waitUntil(lambda: (CURRENT, "theta50") in plot.curves, timeout=LONG)
    pens = {s: plot.curves[(CURRENT, s)].opts["pen"].color().name()
            for s in ("theta0", "theta10", "theta50")}
    assert pens == {s: colors[int(s[5:])] for s in pens} and len(set(pens.values())) == 3


def test_the_chosen_states_are_kept_with_the_session(qtbot, window, tmp_path):
    solved(qtbot, window, "lorenz")
    view = window.views["phase3d"]
    view.set_axes("z", "x", "y")
    assert window.lab.layout.phase3d == ("z", "x", "y")
    path = tmp_path / "lab.h5"
    save_lab(window.lab, path, plot_layout=window.plot_layout())
    view.set_axes("x", "y", "z")
    assert window.files.open(str(path))
    assert view.axes == ("z", "x", "y")
    assert [box.currentText() for box in view.boxes] == ["z", "x", "y"]
    window.lab.select_model("pendulum")  # two states: none to choose
    assert view.axes == ("", "", "") and not view.plot.isVisible()
