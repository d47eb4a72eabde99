"""The sweep view over an initial value: offered after the parameters, drawn as ``z(0)``;
a click starts the lab there (undoably); a saved sweep reopens in the sweep tab.

Lorenz started on the z axis stays there and ``z(t1) = z0 exp(-beta t1)``.
"""

import numpy as np
import pytest

from difflab.app.session_io import save_lab

from .conftest import LONG

T1 = 1.0


def _lorenz_on_the_z_axis(window):
    window.lab.select_model("lorenz")
    window.lab.set_settings(t1=T1, y0=(0.0, 0.0, 1.0))
    panel = window.views["sweep"]
    window.tabs.setCurrentWidget(panel)
    return panel


def _choices(editor) -> list:
    combo = editor.name
    return [(combo.itemText(i), combo.itemData(i)) for i in range(combo.count())]


def test_the_axis_offers_the_initial_values_after_the_parameters(qtbot, window):
    panel = _lorenz_on_the_z_axis(window)
    assert _choices(panel.axis1) == [
        ("sigma", "sigma"), ("rho", "rho"), ("beta", "beta"), ("", None),  # a separator
        ("x (initial)", "y0.x"), ("y (initial)", "y0.y"), ("z (initial)", "y0.z")]
    panel.axis1.name.setCurrentText("z (initial)")  # around z(0) = 1: 1 -/+ max(1, |1|)
    axis = panel.axis1.axis()
    assert (axis.name, axis.lo, axis.hi, axis.log) == ("y0.z", 0.0, 2.0, False)
    window.lab.set_settings(y0=(0.0, 0.0, -5.0))
    panel.axis1.choose("rho")
    panel.axis1.choose("y0.z")
    assert (panel.axis1.lo.value(), panel.axis1.hi.value()) == (-10.0, 0.0)
    with pytest.raises(ValueError, match="cannot sweep 'y0.q'"):
        panel.axis1.choose("y0.q")


@pytest.mark.slow
def test_a_sweep_of_z0_decays_and_a_click_starts_the_lab_there(qtbot, window, make_window,
                                                              tmp_path):
    panel = _lorenz_on_the_z_axis(window)
    panel.two_d.setChecked(False)
    panel.axis1.choose("y0.z")
    panel.axis1.n.setValue(5)
    panel.reduction.setCurrentText("final")
    panel.state.setCurrentText("z")
    with qtbot.waitSignal(panel.finished, timeout=LONG) as blocker:
        panel.run_button.click()
    z0, beta = np.linspace(0.0, 2.0, 5), 8.0 / 3.0
    x, y = panel.curve.getData()
    np.testing.assert_array_equal(x, z0)
    np.testing.assert_allclose(y, z0 * np.exp(-beta * T1), rtol=1e-6, atol=1e-12)
    assert panel.plot.getPlotItem().getAxis("bottom").labelText == "z(0)"
    assert blocker.args[0].space.names == ("y0.z",)

    panel.select_point(4)
    assert window.lab.initial_state == (0.0, 0.0, 2.0)
    assert window.lab.undo_stack.undo_text == "Simulate sweep point z(0) = 2"
    assert panel.preview.getPlotItem().titleLabel.text.startswith("z(0) = 2: final(z)")
    window.actions["undo"].trigger()
    assert window.lab.initial_state == (0.0, 0.0, 1.0)

    path = tmp_path / "z0.h5"
    save_lab(window.lab, path)
    other = make_window()
    assert other.files.open(str(path))
    shown = other.views["sweep"]
    assert shown.picker.names.currentText() == "sweep0"
    assert [a.name for a in shown.data.axes] == ["y0.z"]
    np.testing.assert_allclose(shown.curve.getData()[1], y)
