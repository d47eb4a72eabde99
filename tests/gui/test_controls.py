"""Honest controls: refused values say why, ranges widen, solvers fit the model, initial
states are set in the window, the status never goes stale, CSV exports say what made them."""

import numpy as np
from PySide6.QtCore import Qt

import difflab as dl
from difflab.app.lab import Lab

from .conftest import LONG


def _type(qtbot, spin, text: str) -> None:
    spin.setFocus()
    spin.lineEdit().selectAll()
    qtbot.keyClicks(spin.lineEdit(), text)
    qtbot.keyClick(spin.lineEdit(), Qt.Key.Key_Return)


def test_out_of_range_and_non_numbers_are_refused_in_words_until_the_range_widens(
        qtbot, make_window):
    window = make_window(Lab("lorenz"))
    row = window.parameter_panel.rows["rho"]
    for text, reason in (("-5", "-5 is outside the range [0, 100]"),
                         ("1e3", "1000 is outside the range [0, 100]"),
                         ("abc", "'abc' is not a number")):
        _type(qtbot, row.spin, text)
        assert window.lab.params["rho"] == 28.0 and row.spin.value() == 28.0  # unchanged
        assert row.message.isVisible() and reason in row.message.text()
    assert not window.lab.undo_stack.can_undo

    row.range_button.click()
    assert row.range_box.isVisible()
    _type(qtbot, row.range_min, "-10")
    _type(qtbot, row.range_max, "2000")
    assert row.bounds == (-10.0, 2000.0) and row.hi_label.text().startswith("2000")
    _type(qtbot, row.spin, "1e3")
    assert window.lab.params["rho"] == 1000.0 and not row.message.isVisible()
    assert row.slider.value() == row.scale.position(1000.0)
    _type(qtbot, row.spin, "-5")
    assert window.lab.params["rho"] == -5.0

    _type(qtbot, row.range_min, "3000")  # min above max: refused, the range kept
    assert row.bounds == (-10.0, 2000.0) and "min < max" in row.message.text()


def test_the_solver_list_offers_only_solvers_that_fit_the_model(qtbot, make_window):
    window = make_window(Lab("van_der_pol"))
    combo = window.settings_panel.solver

    def offered():
        return [combo.itemData(i) for i in range(combo.count())]

    assert offered()[0] is None and offered()[1:] == dl.solvers.solvers_for(window.lab.model)
    assert "leapfrog" not in offered() and "euler_maruyama" not in offered()
    window.lab.select_model("pendulum")  # Hamiltonian: leapfrog fits
    assert "leapfrog" in offered()
    window.lab.select_model("ornstein_uhlenbeck")
    assert offered() == [None, "euler_maruyama"]


def test_initial_state_boxes_restart_the_run_and_auto_says_what_it_chose(qtbot, make_window):
    window = make_window(Lab("lorenz"))
    panel = window.initial_panel
    assert list(panel.boxes) == ["x", "y", "z"]
    _type(qtbot, panel.boxes["x"], "5")
    assert window.lab.settings.y0 == (5.0, 1.0, 1.0)
    qtbot.waitUntil(lambda: window.lab.current is not None and len(window.lab.current.ts)
                    and window.lab.current.ys[0, 0] == 5.0, timeout=LONG)
    expected = dl.simulate(dl.models.get("lorenz")(), 10.0, y0=np.array([5.0, 1.0, 1.0]))
    np.testing.assert_allclose(window.lab.current.ys, expected.ys, rtol=0, atol=1e-12)

    window.lab.set_settings(t1=50.0)  # t1 / 1000 would be too coarse here
    qtbot.waitUntil(lambda: window.lab.current.settings.t1 == 50.0, timeout=LONG)
    qtbot.waitUntil(lambda: "failed" not in window.status.text()
                    and "solving" not in window.status.text(), timeout=LONG)
    dt = window.lab.current.settings.dt
    assert dt < 0.02
    assert f"dt = {dt:.3g}" in window.settings_panel.chosen.text()
    assert f"dt = {dt:.3g}" in window.status.text()
    window.initial_panel.own.click()
    assert window.lab.settings.y0 is None and panel.boxes["x"].value() == 1.0


def test_many_states_are_set_as_one_line_of_numbers(qtbot, make_window):
    window = make_window(Lab("kuramoto"))
    panel = window.initial_panel
    n = len(window.lab.state_names)
    assert not panel.boxes and panel.text.isVisible() and n > 12
    panel.text.setText("1, 2")
    panel.text.returnPressed.emit()
    assert window.lab.settings.y0 is None and "2 numbers for" in panel.message.text()
    panel.text.setText(" ".join(["0.5"] * n))
    panel.text.returnPressed.emit()
    assert window.lab.settings.y0 == (0.5,) * n


def test_the_status_never_stays_on_solving_after_an_error(qtbot, make_window):
    window = make_window(Lab("lorenz"))
    window.lab.set_settings(t1=10.0, dt=1.0, n_save=100)  # more points than steps: refused
    qtbot.waitUntil(lambda: "n_save=100" in window.status.text(), timeout=LONG)
    assert "solving" not in window.status.text()
    window.lab.set_settings(solver="euler", dt=1.0, t1=200.0, n_save=None)
    qtbot.waitUntil(lambda: "euler failed" in window.status.text(), timeout=LONG)
    assert "steps" not in window.status.text()
    log = window.log_panel.plain_text()
    assert log.count("diverged") == 1


def test_exported_csv_from_the_window_names_model_parameters_and_settings(
        qtbot, window, tmp_path):
    path = tmp_path / "data.csv"
    assert window.files.export_csv(str(path))
    lines = path.read_text().splitlines()
    assert lines[0] == f"# DiffLab {dl.__version__}" and lines[1] == "# model: pendulum"
    assert "g=9.81" in lines[2] and "solver=rk4" in lines[3]
    table = np.loadtxt(path, delimiter=",", comments="#", skiprows=5)
    np.testing.assert_array_equal(table[:, 1], window.lab.current.ys[:, 0])
