"""A fit reopened from a session file shows the settings that made it (issue 35, item 6):
its parameters, method, step limit and noise level, not the panel's defaults."""

import numpy as np
from PySide6.QtCore import Qt

import difflab as dl
from difflab.app.lab import Lab
from difflab.app.fits import load_fits
from difflab.gui.fit_panel import FitPanel


def _stored_fit(path):
    """A fit of alpha alone, by BFGS, at most 7 steps, σ = 0.2."""
    lv = dl.models.get("lotka_volterra")
    traj = dl.simulate(lv(alpha=1.1), 4.0, n_save=21)
    data = dl.io.Observations(np.asarray(traj.ts), np.asarray(traj.ys), traj.state_names,
                              np.full(np.shape(traj.ys), 0.2))
    fit = dl.fit(lv(), data, ["alpha"], method="bfgs", fit_max_steps=7, t1=4.0, throw=False)
    with dl.io.write_session(path) as writer:
        dl.io.add(writer, fit, name="fitted")
    return fit


def test_a_reopened_fit_shows_its_own_settings(qtbot, tmp_path):
    fit = _stored_fit(tmp_path / "fit.h5")
    lab = Lab()
    lab.select_model("lotka_volterra")
    panel = FitPanel(lab)
    qtbot.addWidget(panel)
    assert (panel.method.currentText(), panel.max_steps.value()) == ("lm", 0)  # defaults
    assert len(panel.chosen()) == len(lab.specs) > 1 and panel.sigma.text() == ""
    load_fits(lab, dl.open(tmp_path / "fit.h5"))
    back = lab.results["fit"]["fitted"]
    panel.show_record(back)
    assert panel.chosen() == ("alpha",) == tuple(back.names)
    assert panel.method.currentText() == "bfgs" == back.method
    assert panel.max_steps.value() == 7 == back.max_steps == fit.max_steps
    assert float(panel.sigma.text()) == 0.2 and not panel.sigma.isEnabled()
    checked = [panel.params.item(i).checkState() == Qt.CheckState.Checked
               for i in range(panel.params.count())]
    assert checked == [name == "alpha" for name in lab.specs]
