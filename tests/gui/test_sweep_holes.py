"""A sweep's points with no value are drawn in colours no value has and counted; its colour
levels follow the values in hand; its notes are shown and logged."""

import numpy as np
import pyqtgraph as pg

import difflab as dl
from difflab.app.lab import Lab
from difflab.app.sweeps import NOT_RUN, SweepView
from difflab.gui.sweep_panel import SweepPanel
from difflab.gui.sweep_plot import COLORMAPS, NO_VALUE, SweepPlot

MODEL = dl.models.get("lorenz")()


def _view(values, codes, shape=(3, 4), spec="max(z)"):
    """A lorenz sweep over rho (x sigma) with the given values and result codes."""
    axes = {"rho": np.linspace(1.0, 30.0, shape[0])}
    if len(shape) == 2:
        axes["sigma"] = np.linspace(5.0, 15.0, shape[1])
    n = int(np.prod(shape))
    name = spec.replace("(", "_").replace(")", "")
    result = dl.SweepResult(
        space=dl.grid(axes), state_names=("x", "y", "z"), ts=np.array([10.0]),
        y=np.zeros((n, 1, 3)), result=np.asarray(codes, np.int32), steps=np.zeros(n, np.int64),
        observables={name: np.asarray(values, float)}, stats={}, model=MODEL,
        observable_specs={name: spec})
    return SweepView.of(result, "lorenz")


def _rgba(plot, index, shape):
    """The colour the holes image gives grid point ``index``."""
    return tuple(plot.holes.image[np.unravel_index(index, shape)])


def test_failed_and_not_computed_points_have_colours_no_value_has(qtbot):
    plot = SweepPlot()
    qtbot.addWidget(plot)
    values = np.arange(12.0)
    values[5] = np.nan  # solved, but the observable does not apply there
    codes = np.zeros(12, int)
    codes[2] = dl.Result.MAX_STEPS_REACHED
    codes[[10, 11]] = NOT_RUN
    data = _view(values, codes)
    plot.prepare(data)
    plot.draw(data, live=True)
    assert _rgba(plot, 2, (3, 4)) == NO_VALUE["failed"]
    assert _rgba(plot, 10, (3, 4)) == _rgba(plot, 11, (3, 4)) == NO_VALUE["not computed"]
    assert _rgba(plot, 5, (3, 4)) == NO_VALUE["no value"]
    assert _rgba(plot, 0, (3, 4))[3] == 0  # a value: the colour map shows through
    assert plot.getPlotItem().titleLabel.text == "failed: 1, not computed: 2, no value: 1"
    for name in COLORMAPS.values():  # no colour of either map is near these
        table = pg.colormap.get(name).getLookupTable(nPts=256, alpha=False).astype(int)
        for rgba in NO_VALUE.values():
            assert np.abs(table - np.array(rgba[:3])).sum(axis=1).min() > 60


def test_a_line_marks_its_points_with_no_value(qtbot):
    plot = SweepPlot()
    qtbot.addWidget(plot)
    codes = [0, dl.Result.DIVERGED, 0, NOT_RUN]
    data = _view([1.0, 2.0, 3.0, 4.0], codes, shape=(4,))
    plot.prepare(data)
    plot.draw(data, live=True)
    xs, _ = plot.missing.getData()
    np.testing.assert_allclose(sorted(xs), data.axes[0].values()[[1, 3]])
    assert plot.getPlotItem().titleLabel.text == "failed: 1, not computed: 1"


def test_live_colour_levels_follow_the_values_in_hand(qtbot):
    """A value that stretched the live levels (150000) and is then withdrawn (its point
    failed after all) no longer sets them: they come back to the values shown (180)."""
    plot = SweepPlot()
    qtbot.addWidget(plot)
    values = np.linspace(1.0, 180.0, 12)
    values[4] = 150000.0
    codes = np.zeros(12, int)
    codes[8:] = NOT_RUN
    data = _view(values, codes)
    plot.prepare(data)
    plot.draw(data, live=True)
    assert plot._levels[1] == 150000.0
    data.result.result[4] = dl.Result.DIVERGED
    data.result.result[8:] = 0
    plot.draw(data, live=True)
    assert plot._levels == (1.0, 180.0)
    assert plot.colorbar.levels() == (1.0, 180.0)


def test_the_sweep_panel_shows_and_logs_why_a_period_has_no_value(qtbot):
    lab = Lab()
    panel = SweepPanel(lab)
    qtbot.addWidget(panel)
    values = np.array([20.0, np.nan, np.nan, 21.0])
    data = _view(values, [0, 0, 0, 0], shape=(4,), spec="period(x)")
    panel.show_data(data.result)
    assert "period_x: 2 points: not periodic" in panel.summary.text()
    assert any(level == "warning" and "period_x: 2 points: not periodic" in text
               for level, text in lab.messages)
