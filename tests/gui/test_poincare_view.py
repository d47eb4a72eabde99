"""The Poincaré view (issue 35, item 8): lorenz's crossings of z = 27 are drawn, lie on
the plane, cross it upward as the vector field says, and their return map and event
times are those of the crossings."""

import numpy as np

from difflab.app.lab import Lab
from difflab.gui.poincare_view import PoincareView

from .conftest import LONG


def test_lorenz_section_at_z_27_is_drawn_on_the_plane(qtbot):
    lab = Lab()
    lab.select_model("lorenz")
    view = PoincareView(lab)
    qtbot.addWidget(view)
    view.state.setCurrentText("z")
    view.value.setValue(27.0)
    view.direction.setCurrentText("upward")
    view.transient.setValue(5.0)
    view.t1.setValue(20.0)
    view.compute_button.click()
    qtbot.waitUntil(lambda: view.section is not None, timeout=LONG)
    section = view.section
    model = lab.model
    x, y = view.points.getData()
    assert len(x) == len(section.ts) > 10 and np.all(np.isfinite(x)) and np.all(np.isfinite(y))
    np.testing.assert_allclose(x, section["x"])
    np.testing.assert_allclose(y, section["y"])
    np.testing.assert_allclose(section["z"], 27.0, atol=1e-6)  # on the plane
    dz = section["x"] * section["y"] - float(model.beta) * section["z"]  # lorenz's dz/dt
    assert np.all(dz > 0)  # crossed upward
    assert np.all(np.diff(section.ts) > 0) and section.ts[0] >= 5.0
    now, after = view.map_points.getData()
    np.testing.assert_allclose(now, section["x"][:-1])
    np.testing.assert_allclose(after, section["x"][1:])
    t, gaps = view.times.getData()
    np.testing.assert_allclose(gaps, np.diff(section.ts))
    assert f"{section.found} crossings of z = 27" in view.status.text()
    assert set(view.export_columns()) == {"t", "x", "y", "z"}


def test_the_window_has_a_poincare_tab(window):
    view = window.views["poincare"]
    assert window.tabs.indexOf(view) >= 0 and window.front_plot() is not view.plot
    window.tabs.setCurrentWidget(view)
    assert window.front_plot() is view.plot
