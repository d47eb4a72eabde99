"""The sweep view: a sweep fills in chunk by chunk off the GUI thread; a click simulates a point."""

import time

import jax.numpy as jnp
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
    for i in (0, 7):
        traj = data.rerun(i)  # the sweep's step (its fastest point's) and saved points
        assert traj.settings.dt == data.settings["dt"]
        np.testing.assert_allclose(data.observables["max_z"][i], np.max(np.asarray(traj["z"])),
                                   rtol=1e-9)
    x, y = panel.curve.getData()
    np.testing.assert_allclose(y, data.observables["max_z"])
    assert "sweep0" in window.lab.results["sweep"]

    panel.select_point(7)
    assert window.lab.params["rho"] == rhos[7]
    # simulated as the sweep simulated it: its t1, dt and solver (the live view's points)
    expected = float(np.asarray(data.rerun(7)["z"])[-1])
    qtbot.waitUntil(lambda: window.lab.current.model.rho == rhos[7], timeout=LONG)
    curve = panel.preview_curves[2]
    qtbot.waitUntil(lambda: curve.yData is not None and len(curve.yData) > 0
                    and np.isclose(curve.yData[-1], expected, rtol=1e-9), timeout=LONG)
    assert window.lab.undo_stack.undo_text.startswith("Simulate sweep point rho")
    title = panel.preview.getPlotItem().titleLabel
    assert title.text.startswith("rho = ")

    panel.show_data(None)  # another sweep shown: the point described was of this one
    assert title.text == "click a point of the sweep to simulate it"


@pytest.mark.slow
def test_the_event_loop_keeps_running_during_a_large_sweep(qtbot, window):
    """Timer ticks every 10 ms while a 6,400-point heatmap sweep runs; no gap above 100 ms."""
    window.lab.select_model("lorenz")
    # 12,500 steps a point: the sweep takes about 2 s here (the tests' programs are compiled
    # without LLVM's optimizations; at XLA's default level 50,000 steps took as long)
    window.lab.set_settings(t1=5.0, dt=4e-4)
    panel = window.views["sweep"]
    window.tabs.setCurrentWidget(panel)
    _configure(panel, "rho", 80, "sigma", 80)
    # Measure the sweep alone: the live re-solve of the new model has drawn, and so has the view.
    qtbot.waitUntil(lambda: window.lab.current is not None
                    and window.lab.name_of(window.lab.current.model) == "lorenz"
                    and window.lab.current.settings.dt == 4e-4, timeout=LONG)
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


class Rossler(dl.Model):
    """Rossler's system: with a = b = 0.2 its cycle doubles as c grows."""

    a: float = dl.param(0.2, bounds=(0.0, 1.0))
    b: float = dl.param(0.2, bounds=(0.0, 2.0))
    c: float = dl.param(5.7, bounds=(1.0, 10.0))
    state_names = ("x", "y", "z")

    def vector_field(self, t, y):
        x, yy, z = y
        return jnp.stack([-yy - z, x + self.a * yy, self.b + z * (x - self.c)])

    def initial_state(self):
        return jnp.array([1.0, 1.0, 0.0])


def _rossler(window, t1):
    window.lab.select_model(window.lab.add_user_model(Rossler))
    window.lab.set_settings(t1=t1, dt=0.01, solver="rk4")
    panel = window.views["sweep"]
    window.tabs.setCurrentWidget(panel)
    return panel


@pytest.mark.slow
def test_a_sweep_of_maxima_draws_an_orbit_diagram(qtbot, window):
    """c = 2.5, 3.5, 4: a cycle of 1, 2 and 4 maxima; every value of every point is a dot."""
    panel = _rossler(window, 300.0)
    _configure(panel, "c", 3, reduction="maxima", state="x")
    panel.axis1.lo.setValue(2.5)
    panel.axis1.hi.setValue(3.5)  # 2.5, 3, 3.5
    panel.after.setValue(150.0)
    with qtbot.waitSignal(panel.finished, timeout=LONG) as blocker:
        panel.run_button.click()
    data = blocker.args[0]
    values = data.observables["maxima_x"]
    assert data.observable_specs["maxima_x"] == "maxima(x, after=150)" and values.shape == (3, 64)
    x, y = panel.orbit.getData()
    finite = np.isfinite(values)
    assert len(x) == finite.sum() > 3 * 20 and panel.orbit.isVisible()
    assert not panel.curve.isVisible()
    np.testing.assert_array_equal(np.sort(y), np.sort(values[finite]))
    np.testing.assert_array_equal(np.sort(x), np.sort(np.repeat([2.5, 3.0, 3.5], finite.sum(1))))
    distinct = [1 + np.sum(np.diff(np.sort(v[np.isfinite(v)])) > 0.01) for v in values]
    assert distinct[0] == 1 and distinct[2] == 2
    panel.select_point(2)  # the point's values, marked on its line
    mx, my = panel.marker.getData()
    np.testing.assert_array_equal(my, values[2][finite[2]])


@pytest.mark.slow
def test_a_chaos_map_is_a_heat_map_centred_at_zero(qtbot, window):
    """lyapunov over Lorenz's (rho, sigma): negative where an equilibrium is stable."""
    window.lab.select_model("lorenz")
    window.lab.set_settings(t1=20.0, dt=0.01, solver="rk4")
    panel = window.views["sweep"]
    window.tabs.setCurrentWidget(panel)
    _configure(panel, "rho", 2, "sigma", 2, reduction="lyapunov")
    panel.axis1.lo.setValue(0.5)
    panel.axis1.hi.setValue(28.0)
    panel.axis2.lo.setValue(10.0)
    panel.axis2.hi.setValue(12.0)
    assert not panel.state.isEnabled() and not panel.after.isEnabled()
    with qtbot.waitSignal(panel.finished, timeout=LONG) as blocker:
        panel.run_button.click()
    data = blocker.args[0]
    grid = data.reshape(data.observables["lyapunov"])
    assert data.observable_specs["lyapunov"] == "lyapunov(20)"
    assert (grid[0] < -0.3).all() and (grid[1] > 0.5).all()
    np.testing.assert_array_equal(panel.image.image, grid)
    lo, hi = panel.colorbar.levels()
    assert lo == -hi == -np.abs(grid).max()
    assert panel.colorbar.colorMap().name == "CET-D1"
