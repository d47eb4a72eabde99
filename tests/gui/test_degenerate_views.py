"""Degenerate results (a constant branch, a single point, NaN, nothing) leave every view
with a finite range a plot can show, and the next result is drawn in full: Lorenz's
diagram over the slider's whole range of rho, after a branch of zero height."""

import math

import numpy as np
import pyqtgraph as pg

import difflab as dl
from difflab.app.bifurcation import BifurcationDiagram, BifurcationRequest
from difflab.gui.bifurcation_view import BifurcationView
from difflab.gui.plots import SafeViewBox, sensible_span, view_is_valid

from .conftest import LONG


def flat_diagram(lab, n=40, value=0.0, noise=0.0):
    """A diagram of one branch of ``n`` points at ``x = value`` (plus up to ``noise``)
    with a branch point."""
    model = lab.model
    values = np.linspace(0.0, 100.0, n)
    states = np.full((n, 3), value) + noise * np.sin(np.arange(n))[:, None]
    point = dl.solvers.SpecialPoint(kind="branch", value=1.0, state=states[0])
    branch = dl.Continuation(param="rho", values=values, states=states,
                             eigenvalues=np.full((n, 3), -1.0 + 0j), stable=values < 1.0,
                             special=(point,), state_names=("x", "y", "z"), start=0.0,
                             stop=100.0, status="left the range", model=model)
    request = BifurcationRequest(model, "lorenz", "rho", 0.0, 100.0)
    return BifurcationDiagram(request, (branch,))


def y_range(view):
    return view.plot.getPlotItem().getViewBox().viewRange()[1]


def test_sensible_spans():
    assert sensible_span(0.0, 0.0) == (-1.0, 1.0)
    assert sensible_span(5.0, 5.0) == (4.5, 5.5)
    assert sensible_span(math.nan, 1.0) == (-1.0, 1.0)
    assert sensible_span(2.0, 1.0) == (1.0, 2.0)
    assert sensible_span(-5e-56, 2.5e-57) == (-5e-56, 2.5e-57)  # a range, if a small one


def test_a_constant_branch_keeps_a_finite_range_and_the_next_diagram_is_drawn(qtbot):
    from difflab.app.lab import Lab

    lab = Lab("lorenz")
    view = BifurcationView(lab)
    qtbot.addWidget(view)
    view.resize(900, 600)
    view.show()
    for _ in range(2):  # the range was kept from one diagram to the next
        view._done(flat_diagram(lab))
        qtbot.wait(50)
        lo, hi = y_range(view)
        assert view_is_valid(view.plot.getPlotItem()) and lo <= -0.5 and hi >= 0.5
    view._done(flat_diagram(lab, n=1, value=3.0))  # a single point
    qtbot.wait(50)
    assert view_is_valid(view.plot.getPlotItem()) and y_range(view)[0] < 3.0 < y_range(view)[1]
    view._done(flat_diagram(lab, value=12.0))
    qtbot.wait(50)
    assert y_range(view)[0] < 12.0 < y_range(view)[1]  # drawn where it is, not kept at 3


def test_a_view_box_refuses_invalid_ranges(qtbot):
    widget = pg.PlotWidget(viewBox=SafeViewBox())
    qtbot.addWidget(widget)
    widget.resize(300, 200)
    widget.show()
    item = widget.getPlotItem()
    item.plot([0.0, 1.0, 2.0], [np.nan, np.inf, -np.inf])  # nothing finite in y
    item.plot([0.5], [0.5])
    item.setRange(xRange=(0.0, np.nan), yRange=(1.0, 1.0), padding=0)
    qtbot.wait(50)
    assert view_is_valid(item) and item.getViewBox().viewRange()[1] == [0.9, 1.1]
    item.enableAutoRange()
    qtbot.wait(50)
    assert view_is_valid(item)


def test_lorenz_over_the_slider_range_draws_both_branches(qtbot, window):
    """The issue's steps: lorenz, Bifurcation, rho (0 to 100, the slider's range)."""
    window.lab.select_model("lorenz")
    view = window.views["bifurcation"]
    window.tabs.setCurrentWidget(view)
    view.param.setCurrentText("rho")
    assert (view.start.value(), view.stop.value()) == (0.0, 100.0)
    with qtbot.waitSignal(view.finished, timeout=LONG):
        view.compute_button.click()
    qtbot.wait(50)
    assert "2 branch(es)" in view.status.text() and "H at rho = 24.7368" in view.status.text()
    lo, hi = y_range(view)
    assert view_is_valid(view.plot.getPlotItem()) and lo < -16.0 and hi > 16.0
    assert any(np.nanmax(c.yData) > 16.0 for c in view.curves)


def test_another_model_clears_the_last_diagram_and_shows_its_own_range(qtbot):
    """After Lorenz's diagram, FitzHugh-Nagumo's tab showed Lorenz's status line and axes
    named rho and x around a = 0.7; now its own: a from -2 to 2, state v, the hint."""
    from difflab.app.lab import Lab

    lab = Lab("lorenz")
    view = BifurcationView(lab)
    qtbot.addWidget(view)
    view.resize(900, 600)
    view.show()
    view._done(flat_diagram(lab))
    assert "lorenz" in view.status.text()
    lab.select_model("fitzhugh_nagumo")
    qtbot.wait(50)
    item = view.plot.getPlotItem()
    assert "lorenz" not in view.status.text() and "click the diagram" in view.status.text()
    assert item.getAxis("bottom").labelText == "a" and item.getAxis("left").labelText == "v"
    lo, hi = item.getViewBox().viewRange()[0]
    assert lo <= -2.0 and hi >= 2.0 and hi - lo < 4.5


def test_rounding_about_a_zero_branch_is_drawn_as_zero(qtbot):
    """heat1d's branch u = 0 over D came back with values of 1e-45 at small D: the view
    spread them over its height as a spike; now it draws a flat line at zero."""
    from difflab.app.lab import Lab

    lab = Lab("lorenz")
    view = BifurcationView(lab)
    qtbot.addWidget(view)
    view.resize(900, 600)
    view.show()
    view._done(flat_diagram(lab, noise=1e-44))
    qtbot.wait(50)
    lo, hi = y_range(view)
    assert view_is_valid(view.plot.getPlotItem()) and lo <= -0.5 and hi >= 0.5
    assert all(np.all(c.yData == 0.0) for c in view.curves)
