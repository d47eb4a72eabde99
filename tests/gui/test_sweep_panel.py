"""The sweep view: a sweep fills in chunk by chunk off the GUI thread; a click simulates a point."""

import time

import numpy as np
import pytest
from PySide6.QtCore import QTimer

import difflab as dl

from .conftest import LONG


def _configure(panel, p1, n1, p2=None, n2=None, reduction="max", state="z"):
    panel.axis1.name.setCurrentText(p1)
    panel.axis1.n.setValue(n1)
    panel.two_d.setChecked(p2 is not None)
    if p2 is not None:
        panel.axis2.name.setCurrentText(p2)
        panel.axis2.n.setValue(n2)
    panel.reduction.setCurrentText(reduction)
    panel.state.setCurrentText(state)


@pytest.mark.slow
def test_sweep_finishes_and_matches_simulate_and_a_click_simulates_the_point(qtbot, window):
    window.lab.select_model("lorenz")
    window.lab.set_settings(t1=2.0)
    panel = window.views["sweep"]
    window.tabs.setCurrentWidget(panel)
    _configure(panel, "rho", 12)
    with qtbot.waitSignal(panel.finished, timeout=LONG) as blocker:
        panel.run_button.click()
    data = blocker.args[0]
    assert isinstance(data, dl.SweepResult) and data.complete and data.ok and len(data) == 12
    rhos = np.linspace(0.0, 100.0, 12)  # lorenz rho bounds
    np.testing.assert_allclose(data.space["rho"], rhos)
    lorenz = dl.models.get("lorenz")
    for i in (0, 7):
        traj = dl.simulate(lorenz(rho=rhos[i]), 2.0)
        np.testing.assert_allclose(data.observables["max_z"][i], np.max(np.asarray(traj["z"])),
                                   rtol=1e-9)
    x, y = panel.curve.getData()
    np.testing.assert_allclose(y, data.observables["max_z"])
    assert "sweep0" in window.lab.results["sweep"]

    panel.select_point(7)
    assert window.lab.params["rho"] == rhos[7]
    expected = np.asarray(dl.simulate(lorenz(rho=rhos[7]), 2.0)["z"])
    qtbot.waitUntil(lambda: window.lab.current.model.rho == rhos[7], timeout=LONG)
    curve = panel.preview_curves[2]
    qtbot.waitUntil(lambda: np.allclose(curve.yData, expected), timeout=LONG)
    assert window.lab.undo_stack.undo_text.startswith("Simulate sweep point rho")


@pytest.mark.slow
def test_the_event_loop_keeps_running_during_a_large_sweep(qtbot, window):
    """Timer ticks every 10 ms while a 6,400-point heatmap sweep runs; no gap above 100 ms."""
    window.lab.select_model("lorenz")
    window.lab.set_settings(t1=5.0, dt=1e-4)  # 50,000 steps a point
    panel = window.views["sweep"]
    window.tabs.setCurrentWidget(panel)
    _configure(panel, "rho", 80, "sigma", 80)
    # Measure the sweep alone: the live re-solve of the new model has drawn, and so has the view.
    qtbot.waitUntil(lambda: window.lab.current is not None
                    and window.lab.name_of(window.lab.current.model) == "lorenz"
                    and window.lab.current.settings.dt == 1e-4, timeout=LONG)
    qtbot.wait(200)
    ticks, chunks = [], []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    timer.start(10)
    start = time.perf_counter()
    with qtbot.waitSignal(panel.finished, timeout=LONG) as blocker:
        panel.run_button.click()
        panel.worker.item.connect(lambda item: chunks.append(time.perf_counter()))
    timer.stop()
    data = blocker.args[0]
    assert data.complete and len(data) == 6400 and len(chunks) > 10
    assert np.isfinite(panel.image.image).sum() == 6400 - len(data.failed)
    gaps = np.diff(ticks)
    assert len(gaps) > 50
    worst = int(np.argmax(gaps))
    assert gaps.max() < 0.100, (
        f"the event loop stalled for {gaps.max() * 1e3:.0f} ms, "
        f"{ticks[worst] - start:.2f} s after the start (chunks from {chunks[0] - start:.2f} s "
        f"to {chunks[-1] - start:.2f} s)")


@pytest.mark.slow
def test_stop_ends_a_sweep_between_chunks(qtbot, window):
    window.lab.select_model("lorenz")
    window.lab.set_settings(t1=20.0)
    panel = window.views["sweep"]
    _configure(panel, "rho", 100, "beta", 40)
    panel.run_button.click()
    qtbot.waitUntil(lambda: panel.data is not None and panel.data.done > 0, timeout=LONG)
    with qtbot.waitSignal(panel.finished, timeout=LONG) as blocker:
        window.actions["stop"].trigger()
    data = blocker.args[0]
    assert not data.complete and 0 < np.count_nonzero(data.result != -1) < 4000
    assert data.stats["stopped"]
    assert "(stopped)" in panel.summary.text()
