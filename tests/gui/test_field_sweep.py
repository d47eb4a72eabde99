"""A field model's sweep in the app: the numbers over the parameter are those of the
closed form, and a click on a point shows that point's final field."""

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt

from difflab.app.fields import FieldSession
from difflab.app.lab import Lab
from difflab.gui.field2d_view import Field2DView

from .conftest import LONG


@pytest.fixture
def sweep_window(qtbot):
    """Advection-diffusion on 8 x 8 to t1 = 1: each mode decays as exp(-D |k|^2 t)."""
    session = FieldSession(Lab(), "advection_diffusion", 8)
    session.t1 = 1.0
    view = Field2DView(session)
    qtbot.addWidget(view)
    window = view.open_sweep()
    window.resize(1000, 480)
    qtbot.waitExposed(window)
    yield window
    view.shutdown()


@pytest.mark.slow  # about 5 s: the sweep's program compiles
def test_a_sweep_plots_the_closed_form_and_a_click_shows_a_points_field(qtbot, sweep_window):
    window = sweep_window
    window.param_box.setCurrentText("D")
    window.low.setValue(0.01)
    window.high.setValue(0.05)
    window.points.setValue(3)
    window.kind_box.setCurrentText("max")
    qtbot.mouseClick(window.sweep_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.result is not None, timeout=LONG)
    model = window.session.model
    exact = [model.replace(D=D).exact(1.0)["u"] for D in (0.01, 0.03, 0.05)]
    x, y = window.curve.getData()
    assert np.allclose(x, [0.01, 0.03, 0.05])
    assert np.allclose(y, [float(np.max(u)) for u in exact], rtol=1e-6)
    assert y[0] > y[1] > y[2]  # faster diffusion, lower peak
    qtbot.wait(50)  # the plot takes its range
    scene = window.curve_plot.getViewBox().mapViewToScene(QPointF(x[2], y[2]))
    picked = []
    window.picked.connect(picked.append)
    qtbot.mouseClick(window.plots.viewport(), Qt.MouseButton.LeftButton,
                     pos=window.plots.mapFromScene(scene))
    assert picked == [2]
    assert window.mark.getData()[0] == pytest.approx([0.05])  # marked on the curve
    shown = np.asarray(window.panel.image.image)
    assert np.array_equal(shown, window.result.final["u"][2])
    assert np.allclose(shown, exact[2], atol=1e-6)


def test_a_model_of_one_axis_is_not_swept_here(qtbot, sweep_window):
    window = sweep_window
    window.session.select_model("advection_diffusion", 16, ndim=1)
    assert window.panel is None and window.param_box.currentText() == "D"
    qtbot.mouseClick(window.sweep_button, Qt.MouseButton.LeftButton)
    assert window.worker is None and "two axes" in window.status.text()
