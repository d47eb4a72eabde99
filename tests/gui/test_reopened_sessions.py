"""Reopened sessions show results under the settings that made them (issue 35, item 6):
a CLI sweep opened in the app shows its own axes and observables, every observable can be
drawn, a clicked point is simulated with the sweep's t1, dt and solver, and every typed
model of the session is saved."""

import numpy as np

import difflab as dl

from .conftest import LONG

RHOS = np.linspace(20.0, 30.0, 6)


def _cli_session(path):
    """A sweep as ``difflab sweep`` stores one: its own t1, dt and solver, two observables."""
    result = dl.sweep(dl.models.get("lorenz")(), dl.grid({"rho": RHOS}), 3.0, dt=0.005,
                      solver="rk4", observables={"zmax": "max(z)", "xfinal": "final(x)"})
    with dl.io.write_session(path) as writer:
        dl.io.add(writer, result, name="cli")
    return result


def test_a_cli_sweep_reopens_under_its_own_settings(qtbot, window, tmp_path):
    result = _cli_session(tmp_path / "cli.h5")
    lab = window.lab
    lab.select_model("lorenz")
    lab.set_settings(t1=10.0, dt=None, solver=None)  # the app's last ones differ
    assert window.files.open(str(tmp_path / "cli.h5"))
    panel = window.views["sweep"]
    window.tabs.setCurrentWidget(panel)
    qtbot.waitUntil(lambda: panel.data is not None, timeout=LONG)
    # the controls show the sweep's grid and observable, not the panel's defaults
    axis = panel.axis1.axis()
    assert (axis.name, axis.lo, axis.hi, axis.n) == ("rho", 20.0, 30.0, 6)
    assert not panel.two_d.isChecked()
    specs = {"zmax": ("max", "z"), "xfinal": ("final", "x")}
    assert (panel.reduction.currentText(), panel.state.currentText()) == \
        specs[panel.data.observable]

    # every observable can be drawn, not only the first
    assert not panel.shown.isHidden() and panel.shown.count() == 2
    for name in [n for n in specs if n != panel.data.observable] + [panel.data.observable]:
        panel.shown.setCurrentIndex(panel.shown.findData(name))
        panel.shown.activated.emit(panel.shown.currentIndex())
        assert panel.data.observable == name
        np.testing.assert_allclose(panel.curve.getData()[1], result.observables[name])
        assert (panel.reduction.currentText(), panel.state.currentText()) == specs[name]

    # a clicked point is simulated as the sweep simulated it
    panel.select_point(3)
    assert (lab.settings.t1, lab.settings.dt, lab.settings.solver) == (3.0, 0.005, "rk4")
    qtbot.waitUntil(lambda: lab.current is not None and float(lab.current.model.rho) == RHOS[3]
                    and lab.current.ts[-1] == 3.0, timeout=LONG)
    np.testing.assert_allclose(lab.current.ys[-1], result.final[3], rtol=1e-9, atol=1e-12)


def test_every_typed_model_of_the_session_is_saved(qtbot, make_window, tmp_path):
    window = make_window()
    editor = window.equation_editor
    for name, rate in (("DecayA", 0.7), ("DecayB", 0.2)):
        editor.text.setPlainText(f"name: {name}\nparams: rate = {rate} in (0, 5)\n"
                                 "init: n = 2\n\ndn/dt = -rate*n\n")
        assert editor.build() == name
    window.lab.select_model("lorenz")  # neither typed model is the current one
    assert window.files._save_to(tmp_path / "typed.h5")
    fresh = make_window()
    assert fresh.files.open(str(tmp_path / "typed.h5"))
    assert {"DecayA", "DecayB"} <= set(fresh.lab.user_models)
    fresh.lab.select_model("DecayB")
    assert fresh.lab.params["rate"] == 0.2
