"""A computed bifurcation diagram is saved with the session and drawn again on open."""

import difflab as dl

from .conftest import LONG


def test_the_diagram_comes_back_with_the_session(qtbot, window, tmp_path):
    window.lab.select_model("lorenz")
    view = window.views["bifurcation"]
    window.tabs.setCurrentWidget(view)
    view.param.setCurrentText("rho")
    view.start.setValue(0.0)
    view.stop.setValue(2.0)
    with qtbot.waitSignal(view.finished, timeout=LONG):
        view.compute_button.click()
    drawn = sorted((t.toPlainText(), round(t.pos().x(), 6)) for t in view.texts)
    assert ("BP", 1.0) in drawn and window.lab.dirty

    path = tmp_path / "diagram.h5"
    assert window.files._save_to(path)
    assert dl.open(path).analyses.names() == ["bifurcation_0", "bifurcation_1"]
    window.files.new()
    assert view.diagram is None and not view.curves

    view.param.setCurrentText("sigma")
    assert window.files.open(str(path))
    assert view.diagram is not None and view.param.currentText() == "rho"
    assert (view.start.value(), view.stop.value()) == (0.0, 2.0)
    assert sorted((t.toPlainText(), round(t.pos().x(), 6)) for t in view.texts) == drawn
    assert {c.stable for c in view.curves} == {True, False} and not window.lab.dirty
