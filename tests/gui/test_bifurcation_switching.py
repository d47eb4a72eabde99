"""A click on a branch point of cycles in the bifurcation diagram continues the other
branch of orbits through it (checked against its closed form); a click on a
Neimark-Sacker point says why no branch starts there."""

import dataclasses

import jax.numpy as jnp
import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt

import difflab as dl
from difflab.app.session_io import DIAGRAM

from .conftest import LONG


class Pitchfork(dl.Model):
    """The unit circle turning at ``1 + a^2`` carries ``a' = a (s - a^2 + 1 - r^2)``: the
    symmetric cycle ``a = 0`` (period ``2 pi``) branches at ``s = 0`` into the cycles
    ``a = +- sqrt(s)`` of period ``2 pi / (1 + s)``."""

    s: float = dl.param(-0.2, bounds=(-1.0, 1.0))
    state_names = ("x", "y", "a")

    def vector_field(self, t, y):
        x, w, a = y
        r2, turn = x**2 + w**2, 1 + a**2
        return jnp.stack([x * (1 - r2) - w * turn, w * (1 - r2) + x * turn,
                          a * (self.s - a**2 + 1 - r2)])

    def initial_state(self):
        return jnp.array([0.0, 0.0, 0.0])


def _click(qtbot, plot, x, y):
    """A left click at data point ``(x, y)`` of a ``PlotWidget``."""
    scene = plot.getPlotItem().getViewBox().mapViewToScene(QPointF(x, y))
    qtbot.mouseClick(plot.viewport(), Qt.MouseButton.LeftButton, pos=plot.mapFromScene(scene))


def _shown(qtbot, window):
    """The bifurcation view, shown in a window large enough to click on a point."""
    view = window.views["bifurcation"]
    window.tabs.setCurrentWidget(view)
    window.resize(1400, 900)
    qtbot.waitUntil(lambda: view.plot.width() > 400)
    return view


def test_a_click_on_a_branch_point_of_cycles_continues_the_other_branch(qtbot, window):
    lab = window.lab
    lab.select_model(lab.add_user_model(Pitchfork, "Pitchfork"))
    view = _shown(qtbot, window)
    model = lab.model
    branch = dl.continuation(model, "s", -0.2, 0.3)  # the origin, an unstable focus
    cycles = dl.periodic_orbits(model, "s", ([1.0, 0.0, 0.0], 2 * np.pi), -0.2, 0.3)
    lab.set_analyses(DIAGRAM, (branch, cycles))
    assert view.diagram is not None and len(view.diagram.cycles) == 1
    view.state.setCurrentText("a")
    assert [t.toPlainText() for t in view.texts] == ["BPC"]
    (point,) = cycles.special
    view.plot.getPlotItem().setRange(xRange=(-0.2, 0.3), yRange=(-1.0, 1.0), padding=0)
    undo = lab.undo_stack.undo_text

    with qtbot.waitSignal(view.finished, timeout=LONG) as blocker:
        _click(qtbot, view.plot, float(point.value) + 0.004, 0.01)  # a few pixels off
    other = blocker.args[0].cycles[-1]
    assert len(view.diagram.cycles) == 2 and lab.undo_stack.undo_text == undo
    s, a = other.values[1:], other.maxima[1:, 2]
    assert s.min() > 0 and other.values[-1] == 0.3
    np.testing.assert_allclose(np.abs(a), np.sqrt(s), rtol=1e-6)  # a = +- sqrt(s)
    np.testing.assert_allclose(other.periods[1:], 2 * np.pi / (1 + s), rtol=1e-6)
    assert other.stable[1:].all()
    drawn = [c for c in view.curves if getattr(c, "cycle", False)]
    assert max(np.max(np.abs(c.yData)) for c in drawn) == pytest.approx(np.max(np.abs(a)))
    assert len(lab.analyses(DIAGRAM)) == 3  # kept with the session
    with qtbot.waitSignal(view.finished, timeout=LONG):  # once is enough
        _click(qtbot, view.plot, float(point.value), 0.0)
    assert len(view.diagram.cycles) == 2

    # a torus is out of reach: a click on an NS point says so and starts nothing
    torus = dl.solvers.CycleSpecialPoint(
        kind="neimark-sacker", value=0.2, period=2 * np.pi, state=np.array([1.0, 0, 0]),
        minimum=np.zeros(3), maximum=np.array([1.0, 0, 0.5]),
        multipliers=np.array([1.0, 1j, -1j]))
    view.diagram = dataclasses.replace(
        view.diagram, cycles=(dataclasses.replace(cycles, special=(torus,)),))
    view.draw()
    view.plot.getPlotItem().setRange(xRange=(-0.2, 0.3), yRange=(-1.0, 1.0), padding=0)
    _click(qtbot, view.plot, 0.2, 0.5)
    assert "NS at s = 0.2" in view.status.text() and "out of reach" in view.status.text()
    assert not view.task.busy


class MobiusDoubling(dl.Model):
    """The unit circle carries a plane whose component along ``e^{i theta / 2}`` grows at
    ``s``: the cycle (period ``2 pi``) doubles at ``s = 0`` into the orbit of amplitude
    ``sqrt(s)`` and period ``4 pi`` (as in ``tests/solvers/test_periodic_doubling.py``)."""

    s: float = dl.param(-0.3, bounds=(-1.0, 1.0))
    state_names = ("x", "y", "u", "v")

    def vector_field(self, t, y):
        x, w, u, v = y
        r2, q2 = x**2 + w**2, u**2 + v**2
        pu, pv = (u + x * u + w * v) / 2, (v + w * u - x * v) / 2
        return jnp.stack([x * (1 - r2) - w, w * (1 - r2) + x,
                          -v / 2 + self.s * pu - (u - pu) - q2 * u,
                          u / 2 + self.s * pv - (v - pv) - q2 * v])

    def initial_state(self):
        return jnp.array([0.0, 0.0, 0.0, 0.0])


@pytest.mark.slow  # a second model to compile, and the doubled mesh
def test_a_click_on_a_period_doubling_continues_the_doubled_orbits(qtbot, window):
    lab = window.lab
    lab.select_model(lab.add_user_model(MobiusDoubling, "MobiusDoubling"))
    view = _shown(qtbot, window)
    branch = dl.continuation(lab.model, "s", -0.3, 0.2)
    cycles = dl.periodic_orbits(lab.model, "s", ([1.0, 0.0, 0.0, 0.0], 2 * np.pi), -0.3, 0.2)
    lab.set_analyses(DIAGRAM, (branch, cycles))
    view.state.setCurrentText("u")
    assert [t.toPlainText() for t in view.texts] == ["PD"]
    view.plot.getPlotItem().setRange(xRange=(-0.3, 0.2), yRange=(-1.0, 1.0), padding=0)
    with qtbot.waitSignal(view.finished, timeout=LONG) as blocker:
        _click(qtbot, view.plot, 0.003, -0.01)
    doubled = blocker.args[0].cycles[-1]
    np.testing.assert_allclose(doubled.periods, 4 * np.pi, rtol=1e-8)
    s = doubled.values[1:]
    np.testing.assert_allclose(np.sum(doubled.states[1:, 2:] ** 2, axis=1), s, rtol=1e-6,
                               atol=1e-8)  # |zeta|^2 = s
    assert doubled.values[-1] == 0.2 and "2 of periodic orbits" in view.status.text()
