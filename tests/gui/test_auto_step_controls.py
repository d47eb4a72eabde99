"""The run settings panel on auto: the greyed dt and points boxes show what the current run
used (the engine's automatic step), and unticking "auto" keeps those values."""

import pytest
from PySide6.QtCore import Qt

import difflab as dl
from difflab.app.lab import Lab
from difflab.gui.panels import RunSettingsPanel


@pytest.fixture
def panel(qtbot):
    lab = Lab("lorenz")
    lab.set_settings(t1=100.0)
    panel = RunSettingsPanel(lab)
    qtbot.addWidget(panel)
    panel.show()
    return panel


def test_the_greyed_boxes_show_the_step_and_points_in_use(panel):
    run = panel.lab.solve_now()
    assert run.ok
    expected = dl.solvers.auto_step(dl.models.get("lorenz")(), 100.0).dt
    assert run.settings.dt == expected  # the engine's rule, not t1 / 1000 = 0.1
    assert not panel.dt.isEnabled() and not panel.n_save.isEnabled()
    assert panel.dt.value() == pytest.approx(run.settings.dt, rel=1e-8)
    assert panel.n_save.value() == run.settings.n_save
    assert f"dt = {run.settings.dt:.3g}" in panel.chosen.text()


def test_unticking_auto_keeps_the_step_in_use(qtbot, panel):
    used = panel.lab.solve_now().settings
    qtbot.mouseClick(panel.dt_auto, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(panel.n_auto, Qt.MouseButton.LeftButton)
    assert not panel.dt_auto.isChecked() and panel.dt.isEnabled()
    assert panel.lab.settings.dt == pytest.approx(used.dt, rel=1e-8)  # not a stale 0.1
    assert panel.lab.settings.n_save == used.n_save
    again = panel.lab.solve_now()
    assert again.ok and again.settings.dt == pytest.approx(used.dt, rel=1e-8)
