"""The fit and sensitivity views: work off the GUI thread, results drawn and kept."""

import h5py
import numpy as np
import pytest

import difflab as dl

from .conftest import LONG


@pytest.mark.slow
def test_fit_draws_its_loss_live_and_recovers_known_parameters(qtbot, window, tmp_path):
    lv = dl.models.get("lotka_volterra")
    truth = {"alpha": 1.1, "beta": 0.4}
    traj = dl.simulate(lv(**truth), 10.0, n_save=41)
    data = dl.io.Observations(np.asarray(traj.ts), np.asarray(traj.ys), traj.state_names)
    dl.io.write_observations_csv(tmp_path / "observations.csv", data.with_noise(0.2, seed=3))
    window.lab.select_model("lotka_volterra")
    panel = window.views["fit"]
    window.tabs.setCurrentWidget(panel)
    assert panel.load_data(str(tmp_path / "observations.csv"))
    panel.set_chosen(["alpha", "beta"])
    progress = []
    with qtbot.waitSignal(panel.finished, timeout=LONG) as blocker:
        panel.fit_button.click()
        panel.worker.item.connect(lambda record: progress.append(len(record.losses)))
    record = blocker.args[0]
    assert progress and record.ok and isinstance(record, dl.FitResult)
    for name, value in truth.items():
        assert abs(record.params[name] - value) <= 2.0 * record.stderr[name]
    x, y = panel.loss_curve.getData()
    assert len(x) == len(record.loss_history) >= 2 and y[-1] <= y[0]
    assert panel.table.rowCount() == 2 and panel.table.item(0, 0).text() == "alpha"
    assert float(panel.table.item(0, 2).text()) == pytest.approx(record.stderr["alpha"], rel=0.05)
    assert f"χ² = {record.chi2:.6g}, {record.dof} degrees of freedom" in panel.status.text()
    assert set(panel.model_items) == {"prey", "predator"}
    assert "fit0" in window.lab.results["fit"]
    panel.apply_button.click()
    assert window.lab.params["alpha"] == record.params["alpha"]
    window.lab.undo()
    assert window.lab.params["alpha"] == lv().parameter_specs()["alpha"].default

    assert window.files._save_to(tmp_path / "fitted.h5")  # the fit goes into the session file
    assert dl.open(tmp_path / "fitted.h5").fits.names() == ["fit0"]
    window.files.new()
    assert not window.lab.results["fit"]
    assert window.files.open(str(tmp_path / "fitted.h5"))
    back = window.lab.results["fit"]["fit0"]
    assert back.params == record.params and back.stderr == record.stderr
    assert (back.chi2, back.dof, back.message) == (record.chi2, record.dof, record.message)
    np.testing.assert_array_equal(back.loss_history, record.loss_history)
    qtbot.waitUntil(lambda: set(panel.model_items) == {"prey", "predator"}, timeout=LONG)
    assert panel.record.fit is back and panel.picker.names.currentText() == "fit0"
    assert f"χ² = {record.chi2:.6g}, {record.dof} degrees of freedom" in panel.status.text()
    assert float(panel.table.item(0, 2).text()) == pytest.approx(record.stderr["alpha"], rel=0.05)

    # change something and save again: the fit read from the file stays as it is
    path = tmp_path / "fitted.h5"
    with h5py.File(path, "r", locking=False) as f:
        stored = dict(f["fits/fit0"].attrs)
    window.lab.set_param("beta", 0.5)
    window.actions["save"].trigger()
    assert not window.lab.dirty and dl.open(path).app_settings["params"]["beta"] == 0.5
    with h5py.File(path, "r", locking=False) as f:
        np.testing.assert_equal({k: v for k, v in f["fits/fit0"].attrs.items()},
                                stored)
    panel.picker.delete_button.click()  # Delete, saved; Undo, saved: back in the file
    assert panel.record is None and not window.lab.results["fit"]
    window.actions["save"].trigger()
    assert dl.open(path).fits.names() == []
    window.actions["undo"].trigger()
    assert panel.record.fit is back
    window.actions["save"].trigger()
    session = dl.open(path)
    fit, stored = session.fits["fit0"], session.stored("fits", "fit0")
    assert (stored.attrs["chi2"], stored.attrs["dof"]) == (record.chi2, record.dof)
    assert (fit.chi2, fit.dof) == (record.chi2, record.dof)


@pytest.mark.slow
def test_sensitivity_of_the_current_run_matches_finite_differences(qtbot, window, tmp_path):
    view = window.views["sensitivity"]
    window.tabs.setCurrentWidget(view)
    with qtbot.waitSignal(view.finished, timeout=LONG) as blocker:
        view.compute_button.click()
    record = blocker.args[0]
    assert record.parameters == ("g", "length", "theta0")
    pendulum, h = dl.models.get("pendulum"), 1e-5
    up = np.asarray(dl.simulate(pendulum(g=9.81 + h), 10.0)["theta"])
    down = np.asarray(dl.simulate(pendulum(g=9.81 - h), 10.0)["theta"])
    np.testing.assert_allclose(record.curve("theta", "g"), (up - down) / (2 * h), atol=1e-5)
    x, y = view.curves["g"].getData()
    np.testing.assert_allclose(y, record.curve("theta", "g"))
    view.normalized.setChecked(True)
    assert "log" in view.plot.getPlotItem().getAxis("left").labelText
    assert "sensitivity0" in window.lab.results["sensitivity"]
    assert window.files._save_to(tmp_path / "sens.h5")
    window.files.new()
    assert window.files.open(str(tmp_path / "sens.h5"))
    back = window.lab.results["sensitivity"]["sensitivity0"]
    np.testing.assert_array_equal(back.raw, record.raw)
    assert list(window.lab.runs) == []  # the sensitivity's own run is not a kept run
