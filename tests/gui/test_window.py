"""The main window: live re-solve from the parameter widgets, undo, runs, streaming, models."""

import math

import numpy as np
import pytest
from PySide6.QtCore import Qt

import difflab as dl
from difflab.app import runs
from difflab.app.runs import complete
from difflab.solvers import _simulate

from .conftest import LONG


def _plotted(window, state):
    curve = window.time_plot.curves.get(("current", state))
    return None if curve is None else curve.yData


def _compiled() -> int:
    """The programs of ``simulate`` compiled so far (quickly, or optimized)."""
    return _simulate._solve._cache_size() + _simulate._solve_quickly._cache_size()


def _wait_for_curve(qtbot, window, state, expected):
    """Wait until the time-series plot holds ``expected`` for ``state`` of the current run."""

    def holds():
        y = _plotted(window, state)
        return y is not None and y.shape == expected.shape and np.allclose(y, expected, rtol=0,
                                                                          atol=1e-12)

    qtbot.waitUntil(holds, timeout=LONG)


@pytest.mark.slow
def test_slider_moves_resolve_and_redraw_without_recompiling(qtbot, window, monkeypatch):
    monkeypatch.setattr(runs, "SLOW_RUN", math.inf)  # however loaded the machine
    pendulum = dl.models.get("pendulum")
    expected = np.asarray(dl.simulate(pendulum(), 10.0)["theta"])
    _wait_for_curve(qtbot, window, "theta", expected)
    compiled = _compiled()

    row = window.parameter_panel.rows["g"]
    row.slider.setFocus()
    for _ in range(3):
        qtbot.keyClick(row.slider, Qt.Key.Key_PageUp)
    g = window.lab.params["g"]
    assert g > 9.81 and g == pytest.approx(row.scale.value(row.slider.value()))
    assert row.spin.value() == pytest.approx(g)

    expected = np.asarray(dl.simulate(pendulum(g=g), 10.0)["theta"])
    _wait_for_curve(qtbot, window, "theta", expected)
    assert _compiled() == compiled  # new values, same compiled program
    # A stronger pull swings faster: the first zero crossing of theta comes earlier.
    ts = window.lab.current.ts
    old = np.asarray(dl.simulate(pendulum(), 10.0)["theta"])
    assert ts[np.argmax(expected < 0)] < ts[np.argmax(old < 0)]


def test_spin_box_edit_then_undo_and_redo(qtbot, window):
    row = window.parameter_panel.rows["length"]
    row.spin.lineEdit().selectAll()
    qtbot.keyClicks(row.spin.lineEdit(), "2.5")
    qtbot.keyClick(row.spin.lineEdit(), Qt.Key.Key_Return)
    assert window.lab.params["length"] == 2.5
    assert window.actions["undo"].isEnabled() and "length = 2.5" in window.actions["undo"].text()
    expected = np.asarray(dl.simulate(dl.models.get("pendulum")(length=2.5), 10.0)["theta"])
    _wait_for_curve(qtbot, window, "theta", expected)

    window.actions["undo"].trigger()
    assert window.lab.params["length"] == 1.0 and row.spin.value() == 1.0
    expected = np.asarray(dl.simulate(dl.models.get("pendulum")(), 10.0)["theta"])
    _wait_for_curve(qtbot, window, "theta", expected)
    window.actions["redo"].trigger()
    assert window.lab.params["length"] == 2.5 and row.slider.value() == row.scale.position(2.5)


@pytest.mark.slow
def test_a_slider_drag_undoes_in_one_step(qtbot, window):
    row = window.parameter_panel.rows["theta0"]
    row.slider.sliderPressed.emit()
    for position in (600, 650, 700):
        row.slider.setValue(position)
    row.slider.sliderReleased.emit()
    assert window.lab.params["theta0"] == pytest.approx(row.scale.value(700))
    window.lab.undo()
    assert window.lab.params["theta0"] == 1.0
    assert not window.lab.undo_stack.can_undo


@pytest.mark.slow
def test_kept_runs_overlay_in_both_plots_and_can_be_renamed(qtbot, window):
    window.actions["keep"].trigger()
    assert list(window.lab.runs) == ["run0"]
    window.lab.set_param("g", 3.0)
    qtbot.waitUntil(lambda: window.lab.current.model.g == 3.0, timeout=LONG)
    qtbot.waitUntil(lambda: ("run0", "theta") in window.time_plot.curves, timeout=LONG)
    assert not window.phase_plot.curves  # hidden views draw when they are shown
    window.tabs.setCurrentWidget(window.phase_plot)
    assert {("run0", "phase"), ("current", "phase")} <= set(window.phase_plot.curves)
    window.tabs.setCurrentWidget(window.time_plot)
    item = window.runs_panel.list.item(0)
    item.setText("earth")
    assert list(window.lab.runs) == ["earth"]
    qtbot.waitUntil(lambda: ("earth", "theta") in window.time_plot.curves, timeout=LONG)
    assert ("run0", "theta") not in window.time_plot.curves
    item = window.runs_panel.list.item(0)
    item.setCheckState(Qt.CheckState.Unchecked)
    qtbot.waitUntil(lambda: ("earth", "theta") not in window.time_plot.curves, timeout=LONG)


@pytest.mark.slow
def test_streamed_run_draws_as_chunks_arrive_and_stops(qtbot, window):
    window.actions["live"].trigger()  # live re-solve off: only the streamed run computes
    window.lab.set_settings(t1=20_000.0, dt=1e-3, n_save=200_000)
    chunks = []
    window.run_stream()
    worker = window.workers["stream"]
    worker.item.connect(lambda item: chunks.append(item[1].progress))
    qtbot.waitUntil(lambda: len(chunks) >= 2, timeout=LONG)
    with qtbot.waitSignal(worker.done, timeout=LONG):
        window.actions["stop"].trigger()
    run = window.lab.current
    assert not complete(run) and 0 < len(run.ts) < 200_001 == run.settings.n_save + 1
    assert chunks == sorted(chunks) and chunks[-1] < 1
    curve = window.time_plot.curves[("current", "theta")]
    n, theta = len(run.ts), run.ys[:, 0]
    # the plot redraws on its timer: wait for it to hold the last chunk
    qtbot.waitUntil(lambda: curve.xData[-1] == run.ts[n - 1], timeout=LONG)
    # a growing curve is drawn peak-decimated: a few thousand points with every extreme
    assert len(curve.yData) <= 4002
    assert curve.yData.max() == theta.max() and curve.yData.min() == theta.min()
    assert "stopped pendulum" in window.log_panel.plain_text()
    assert not window.actions["stop"].isEnabled()


def test_model_browser_switches_model_panels_and_plots(qtbot, window):
    tree = window.model_browser.tree
    item = tree.findItems("lorenz", Qt.MatchFlag.MatchRecursive | Qt.MatchFlag.MatchExactly)[0]
    tree.itemClicked.emit(item, 0)
    assert window.lab.model_name == "lorenz"
    assert set(window.parameter_panel.rows) == {"sigma", "rho", "beta"}
    qtbot.waitUntil(lambda: window.lab.current is not None
                    and window.lab.name_of(window.lab.current.model) == "lorenz", timeout=LONG)
    expected = np.asarray(dl.simulate(dl.models.get("lorenz")(), 10.0)["z"])
    _wait_for_curve(qtbot, window, "z", expected)
    window.phase_plot.y_box.setCurrentText("z")
    assert (window.lab.layout.phase_x, window.lab.layout.phase_y) == ("x", "z")
    window.lab.undo()  # the model switch is undoable too
    assert window.lab.model_name == "pendulum" and "g" in window.parameter_panel.rows


@pytest.mark.slow
def test_a_failed_run_is_reported_in_words(qtbot, window):
    window.lab.select_model("lorenz")
    window.lab.set_settings(solver="euler", dt=1.0, t1=200.0)
    qtbot.waitUntil(lambda: "diverged" in window.log_panel.plain_text(), timeout=LONG)
    text = window.log_panel.plain_text()
    assert "lorenz (sigma=10, rho=28, beta=2.66667)" in text and "euler" in text
    assert "failed" in window.status.text()


@pytest.mark.slow
def test_reference_cycles_are_freed_on_the_gui_thread_while_and_after_a_window_is_open(
        qtbot, make_window):
    """A Qt object in a cycle freed by a worker's collection kills the process (a
    segmentation fault): it is freed on the GUI thread, also once its window has closed."""
    import gc
    import threading
    import weakref

    from PySide6.QtCore import QObject

    def freed_on_which_thread():
        freed_in = []
        cycle = QObject()
        cycle.itself = cycle
        weakref.finalize(cycle, lambda: freed_in.append(threading.current_thread()))
        del cycle
        kept = []  # enough new containers to set off an automatic collection
        worker = threading.Thread(target=lambda: kept.append([[] for _ in range(10_000)]))
        worker.start()
        worker.join()
        qtbot.waitUntil(lambda: bool(freed_in), timeout=5_000)
        return freed_in

    window = make_window()
    assert freed_on_which_thread() == [threading.main_thread()]
    window.shutdown()
    assert freed_on_which_thread() == [threading.main_thread()] and not gc.isenabled()


@pytest.mark.slow
def test_every_visible_dock_tab_bar_sits_under_its_docks(qtbot, window):
    from PySide6.QtWidgets import QTabBar

    def placed():
        direct = Qt.FindChildOption.FindDirectChildrenOnly
        bars = [b for b in window.findChildren(QTabBar, options=direct) if b.isVisible()]
        titles = {d.windowTitle(): d.geometry() for d in window.docks.values()}
        spots = [(tuple(b.tabText(i) for i in range(b.count())), b.geometry()) for b in bars]
        return len(bars) == 2 and all(
            abs(bar.top() - titles[tabs[0]].bottom()) <= 8 for tabs, bar in spots)

    qtbot.waitUntil(placed, timeout=5_000)
    window.restore_default_layout()
    qtbot.wait(50)
    qtbot.waitUntil(placed, timeout=5_000)
