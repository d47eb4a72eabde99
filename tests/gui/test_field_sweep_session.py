"""The Fields tab's sweep in the main window: Stop gives control back at once, and a
finished sweep is saved with the session and comes back on reopen, its points clickable."""

import time

import h5py
import numpy as np
from PySide6.QtCore import QPointF, Qt

from .conftest import LONG


def _sweep_window(window, model: str, t1: float, param: str, low: float, high: float):
    """The sweep window of the Fields tab, on ``model`` over 8 x 8 (16 x 16 for
    Gray-Scott) to ``t1``, set to sweep ``param`` from ``low`` to ``high``."""
    tab = window.views["fields"]
    window.tabs.setCurrentWidget(tab)
    session = tab.view.session
    session.select_model(model, 16 if model == "gray_scott" else 8)
    session.t1 = t1
    sweeps = tab.view.open_sweep()
    sweeps.param_box.setCurrentText(param)
    sweeps.low.setValue(low)
    sweeps.high.setValue(high)
    sweeps.kind_box.setCurrentText("max")
    return sweeps


def test_stop_gives_a_field_sweep_back_at_once(qtbot, window):
    # 1000 steps of Gray-Scott at each of 32 points: seconds of compiling, then of running
    sweeps = _sweep_window(window, "gray_scott", 1000.0, "F", 0.02, 0.06)
    sweeps.points.setValue(32)
    qtbot.mouseClick(sweeps.sweep_button, Qt.MouseButton.LeftButton)
    worker = sweeps.worker
    assert worker is not None and not sweeps.sweep_button.isEnabled()
    qtbot.waitUntil(worker.isRunning, timeout=LONG)
    start = time.monotonic()
    qtbot.mouseClick(sweeps.stop_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(sweeps.sweep_button.isEnabled, timeout=5000)
    assert time.monotonic() - start < 2.0  # half a second's grace, then let go of
    assert sweeps.worker is None and not sweeps.stop_button.isEnabled()
    assert sweeps.status.text() == "stopped"
    assert sweeps.result is None and window.views["fields"].view.session.sweep is None
    assert "field_sweep" not in window.workers
    # let go of, it ends at the end of its chunk
    qtbot.waitUntil(lambda: worker not in window.watch.abandoned, timeout=LONG)


def _click_point(qtbot, sweeps, index: int) -> None:
    x, y = sweeps.curve.getData()
    box = sweeps.curve_plot.getViewBox()
    qtbot.waitUntil(lambda: box.viewRect().contains(QPointF(x[index], y[index])))
    scene = box.mapViewToScene(QPointF(x[index], y[index]))
    qtbot.mouseClick(sweeps.plots.viewport(), Qt.MouseButton.LeftButton,
                     pos=sweeps.plots.mapFromScene(scene))


def test_a_field_sweep_is_saved_with_the_session_and_comes_back(qtbot, window, tmp_path):
    sweeps = _sweep_window(window, "advection_diffusion", 1.0, "D", 0.01, 0.05)
    sweeps.points.setValue(3)
    qtbot.mouseClick(sweeps.sweep_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: sweeps.result is not None, timeout=LONG)
    values = np.array(sweeps.result["max_u"])
    finals = np.array(sweeps.result.final["u"])
    assert window.lab.dirty
    path = tmp_path / "fields.h5"
    assert window.files._save_to(path)
    with h5py.File(path, "r") as f:  # read by another library, bit for bit
        assert np.array_equal(f["sweeps/field_sweep/max_u"][()], values)
        assert np.array_equal(f["sweeps/field_sweep/u"][()], finals)

    window.files.new()
    assert sweeps.result is None and len(sweeps.dots.data) == 0
    assert window.files.open(str(path))
    assert sweeps.result is not None and not window.lab.dirty
    x, y = sweeps.curve.getData()
    assert np.array_equal(x, [0.01, 0.03, 0.05]) and np.array_equal(y, values)
    picked = []
    sweeps.picked.connect(picked.append)
    _click_point(qtbot, sweeps, 1)
    assert picked == [1]
    assert np.array_equal(np.asarray(sweeps.panel.image.image), finals[1])
