"""A computation that does not come back never takes the window with it: Stop returns
control within a second, the stuck task is named, live solves and saves go on."""

import threading
import time

import h5py
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from difflab.gui import task_watch
from difflab.models import Model, param

from .conftest import LONG

GATE = threading.Event()  # opened at the end of the test: the stuck solve comes back
ARMED = threading.Event()  # while set, the sweep's first call at k = SWEPT_FIRST waits
ENTERED = threading.Event()
SWEPT_FIRST = 0.25  # the sweep's first value of k, which no other computation uses


def _wait_once(y, k):
    if ARMED.is_set() and np.any(k == SWEPT_FIRST) and not ENTERED.is_set():
        ENTERED.set()
        GATE.wait()
    return np.asarray(y)


class Blocking(Model):
    """Decay whose vector field goes through the host, and once waits there for a gate."""

    k: float = param(1.0, bounds=(0.1, 2.0))
    state_names = ("x",)

    def vector_field(self, t, y):
        shape = jax.ShapeDtypeStruct(y.shape, y.dtype)
        y = jax.pure_callback(_wait_once, shape, y, self.k, vmap_method="broadcast_all")
        return -self.k * y

    def initial_state(self):
        return jnp.ones(1)


@pytest.fixture
def stuck_sweep(qtbot, window, monkeypatch):
    """The window with a sweep of the blocking model stuck inside its computation."""
    monkeypatch.setattr(task_watch, "STUCK_AFTER_S", 1.0)
    panel = _stick(qtbot, window)
    yield window, panel
    GATE.set()  # whatever happened, the stuck computation comes back


def _stick(qtbot, window):
    """Start a sweep of the blocking model in ``window`` and wait until it is stuck."""
    GATE.clear(), ARMED.clear(), ENTERED.clear()
    lab = window.lab
    lab.add_user_model(Blocking, "blocking")
    lab.select_model("blocking")
    lab.set_settings(t1=1.0)
    qtbot.waitUntil(lambda: lab.current is not None and lab.current.ts[-1] == 1.0
                    and lab.name_of(lab.current.model) == "blocking"
                    and window.live_solver.solving is None, timeout=LONG)
    panel = window.views["sweep"]
    window.tabs.setCurrentWidget(panel)
    panel.two_d.setChecked(False)  # a window's settings may bring back a 2-D sweep
    panel.axis1.n.setValue(8)
    panel.axis1.lo.setValue(SWEPT_FIRST)
    panel.reduction.setCurrentText("final")
    ARMED.set()
    panel.run_button.click()
    qtbot.waitUntil(ENTERED.is_set, timeout=LONG)  # the sweep waits in its vector field
    return panel


def _released(qtbot, window) -> None:
    """Open the gate: the computation let go of ends, and its thread is released."""
    GATE.set()
    qtbot.waitUntil(lambda: not window.watch.abandoned, timeout=LONG)


def test_stop_returns_at_once_and_the_app_goes_on_while_a_sweep_is_stuck(
        qtbot, stuck_sweep, tmp_path):
    window, panel = stuck_sweep
    lab = window.lab
    # the user is told which task is stuck, in the log and the status bar
    qtbot.waitUntil(lambda: any("sweep of blocking: no result for" in text
                                for _, text in lab.messages), timeout=10_000)
    assert "still running in the background" in window.status.text()

    start = time.monotonic()
    panel.stop_button.click()
    qtbot.waitUntil(panel.run_button.isEnabled, timeout=1000)
    assert time.monotonic() - start < 1.0
    assert not window.actions["stop"].isEnabled() and panel.worker is None
    assert any("goes on in the background" in text for _, text in lab.messages)
    assert not GATE.is_set()  # the computation is still stuck

    lab.set_param("k", 0.5)  # a later live solve still works
    qtbot.waitUntil(lambda: float(lab.current.model.k) == 0.5, timeout=LONG)
    np.testing.assert_allclose(lab.current["x"][-1], np.exp(-0.5), rtol=1e-4)

    path = tmp_path / "stuck.h5"  # a save finishes while the sweep is stuck
    assert window.files._save_to(path)
    assert not lab.dirty
    with h5py.File(path, "r") as f:
        assert "current" in f["runs"]
    assert not list(tmp_path.glob(".stuck.h5.*.tmp"))
    _released(qtbot, window)


def test_a_task_let_go_of_outlives_its_window(qtbot, settings):
    """Closing the window lets go of the stuck sweep; the window is deleted and collected
    while the thread still runs (a running QThread deleted aborts the process), and the
    thread is released when its computation comes back."""
    import gc

    from difflab.gui.main_window import MainWindow

    window = MainWindow(settings=settings)
    window.show()
    try:
        _stick(qtbot, window)
        window.shutdown()
        assert task_watch._let_go_of and all(t.isRunning() for t in task_watch._let_go_of)
        window.deleteLater()
        del window
        qtbot.wait(50)
        gc.collect()
    finally:
        GATE.set()
    qtbot.waitUntil(lambda: not task_watch._let_go_of, timeout=LONG)
