"""The bifurcation view draws the periodic orbits born at Hopf points: FitzHugh-Nagumo's
branch from one Hopf point to the other, its folds of cycles, and clicks on it."""

import numpy as np
from PySide6.QtCore import QPointF, Qt

import difflab as dl

from .conftest import LONG


def _click(qtbot, plot, x, y):
    """A left click at data point ``(x, y)`` of a ``PlotWidget``."""
    scene = plot.getPlotItem().getViewBox().mapViewToScene(QPointF(x, y))
    qtbot.mouseClick(plot.viewport(), Qt.MouseButton.LeftButton, pos=plot.mapFromScene(scene))


def test_fitzhugh_nagumo_cycles_are_drawn_labelled_and_clickable(qtbot, window):
    window.lab.select_model("fitzhugh_nagumo")
    view = window.views["bifurcation"]
    window.tabs.setCurrentWidget(view)
    view.param.setCurrentText("current")
    view.state.setCurrentText("v")
    view.start.setValue(0.0)
    view.stop.setValue(1.5)
    with qtbot.waitSignal(view.finished, timeout=LONG) as blocker:
        view.compute_button.click()
    (orbits,) = blocker.args[0].cycles  # one branch, from one Hopf point to the other
    assert orbits.status.startswith("shrank to an equilibrium")

    cycles = [c for c in view.curves if getattr(c, "cycle", False)]
    assert {c.stable for c in cycles} == {True, False}
    for curve in cycles:
        solid = curve.opts["pen"].style() == Qt.PenStyle.SolidLine
        assert solid == curve.stable
    labels = sorted((t.toPlainText(), t.pos().x(), t.pos().y()) for t in view.texts)
    assert [label for label, _, _ in labels] == ["H", "H", "LPC", "LPC"]
    for (_, value, y), fold in zip(labels[2:], orbits.special):  # at the orbit's greatest v
        assert fold.kind == "fold-of-cycles"
        assert (value, y) == (fold.value, fold.maximum[0])
    assert "1 of periodic orbits" in view.status.text() and "LPC at current" in view.status.text()

    # the stable orbits are the attractor: a long run at current = 0.5 reaches the same max
    big = orbits.stable & (orbits.values > 0.4) & (orbits.values < 1.3)
    order = np.argsort(orbits.values[big])
    drawn = np.interp(0.5, orbits.values[big][order], orbits.maxima[big][order][:, 0])
    run = dl.simulate(dl.models.get("fitzhugh_nagumo")(current=0.5), 400.0, dt=0.01,
                      n_save=16001)
    assert abs(np.max(np.asarray(run["v"])[8000:]) - drawn) < 5e-3

    view.plot.getPlotItem().setRange(xRange=(0.0, 1.5), yRange=(-2.5, 2.5), padding=0)
    _click(qtbot, view.plot, 0.8, np.interp(0.8, orbits.values[big][order],
                                            orbits.minima[big][order][:, 0]))
    assert abs(window.lab.params["current"] - 0.8) < 0.05
    assert window.lab.undo_stack.undo_text.endswith("from the bifurcation diagram")
