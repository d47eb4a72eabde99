"""Arrows of a flow's velocity over its field: drawn where and as the velocity points."""

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt

import difflab as dl
from difflab.app.field_vectors import ARROW_FILL
from difflab.app.fields import FieldSession
from difflab.app.lab import Lab
from difflab.app.session_io import open_lab, save_lab
from difflab.gui.field2d_view import Field2DView

NU, POINTS = 0.05, 32


@pytest.fixture
def flow_view(qtbot):
    """Navier-Stokes showing the Taylor-Green vortex w = 2 sin x sin y, which decays as
    exp(-2 nu t) with the velocity u = sin x cos y, v = -cos x sin y times the same."""
    model = dl.models.get("navier_stokes")(nu=NU).with_points((POINTS, POINTS))
    x, y = (np.asarray(c) for c in model.grid.coordinates)
    ts = np.array([0.0, 1.0, 2.0])
    w = np.stack([2 * np.exp(-2 * NU * t) * np.sin(x) * np.sin(y) for t in ts])
    run = dl.solvers.FieldTrajectory(ts, {"w": w}, model.grid, "etdrk4", model=model)
    session = FieldSession(Lab(), None)
    session.load(run)
    view = Field2DView(session)
    qtbot.addWidget(view)
    view.resize(900, 500)
    view.show()
    yield view
    view.shutdown()


def test_the_arrows_point_along_the_taylor_green_velocity(qtbot, flow_view):
    arrows = flow_view.arrows
    assert arrows.box.isEnabled() and not arrows.box.isChecked()
    tick = QPoint(8, arrows.box.height() // 2)  # on the box itself
    qtbot.mouseClick(arrows.box, Qt.MouseButton.LeftButton, pos=tick)
    assert arrows.box.isChecked()
    (_, item), = arrows.items
    qtbot.waitUntil(lambda: item.getData()[0] is not None and item.getData()[0].size > 0)
    xs, ys = (a.reshape(-1, 6) for a in item.getData())  # shaft, two barbs per arrow
    mid_x, mid_y = (xs[:, 0] + xs[:, 1]) / 2, (ys[:, 0] + ys[:, 1]) / 2
    dx, dy = xs[:, 1] - xs[:, 0], ys[:, 1] - ys[:, 0]
    u, v = np.sin(mid_x) * np.cos(mid_y), -np.cos(mid_x) * np.sin(mid_y)
    assert xs.shape[0] == 16 * 16  # every other point of 32 x 32
    h = flow_view.session.grid.spacing[0]
    assert np.all(np.isclose(np.fmod(mid_x / h, 1.0), 0.0, atol=1e-9)
                  | np.isclose(np.fmod(mid_x / h, 1.0), 1.0, atol=1e-9))  # on grid points
    # same direction and lengths in proportion to the speed (cross product 0, dot > 0)
    scale = np.hypot(dx, dy).max() / np.hypot(u, v).max()
    assert np.allclose(dx, scale * u, atol=1e-9) and np.allclose(dy, scale * v, atol=1e-9)
    assert np.hypot(dx, dy).max() == pytest.approx(ARROW_FILL * 2 * h)
    assert np.allclose(np.hypot(xs[:, 3] - xs[:, 2], ys[:, 3] - ys[:, 2]),
                       0.3 * np.hypot(dx, dy))  # the barbs start at the tip
    assert np.allclose(xs[:, 2], xs[:, 1]) and np.allclose(ys[:, 4], ys[:, 1])
    qtbot.keyClick(arrows.box, Qt.Key.Key_Space)  # off again, from the keyboard
    qtbot.waitUntil(lambda: not item.isVisible())


def test_the_arrows_come_back_on_reopening_the_saved_session(qtbot, flow_view, tmp_path):
    arrows = flow_view.arrows
    qtbot.mouseClick(arrows.box, Qt.MouseButton.LeftButton,
                     pos=QPoint(8, arrows.box.height() // 2))
    (_, item), = arrows.items
    qtbot.waitUntil(lambda: item.isVisible())
    path = tmp_path / "flow.h5"
    save_lab(flow_view.session.lab, path)
    lab = Lab()
    open_lab(lab, path)
    assert lab.field_session.arrows
    reopened = Field2DView(lab.field_session)
    qtbot.addWidget(reopened)
    assert reopened.arrows.box.isChecked()
    (_, again), = reopened.arrows.items
    qtbot.waitUntil(lambda: again.isVisible())
    for mine, theirs in zip(item.getData(), again.getData(), strict=True):
        np.testing.assert_array_equal(mine, theirs)
    qtbot.keyClick(reopened.arrows.box, Qt.Key.Key_Space)  # off, saved, off on reopening
    save_lab(lab, path)
    lab = Lab()
    open_lab(lab, path)
    assert not lab.field_session.arrows
