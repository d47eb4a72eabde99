"""The brush on a 1-D field: a click or drag on its profile paints the frame shown (here
the initial state); each is one undo step that restores it bit for bit."""

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt

import difflab as dl
from difflab.app.fields import FieldSession
from difflab.app.lab import Lab
from difflab.gui.field2d_view import Field2DView

POINTS = 64


@pytest.fixture
def line_view(qtbot):
    """1-D diffusion on 64 points, two frames of u = sin(2 pi x) read as a run (no solve)."""
    model = dl.models.get("diffusion")().with_points((POINTS,))
    x = np.asarray(model.grid.axis_coordinates(0))
    ts = np.array([0.0, 0.5])
    u = np.stack([np.exp(-t) * np.sin(2 * np.pi * x) for t in ts])
    session = FieldSession(Lab(), None)
    session.load(dl.solvers.FieldTrajectory(ts, {"u": u}, model.grid, "etdrk4", model=model))
    view = Field2DView(session)
    qtbot.addWidget(view)
    view.resize(900, 600)
    view.show()
    yield view
    view.shutdown()


def test_a_click_and_a_drag_on_the_profile_paint_the_initial_state(qtbot, line_view):
    view, session = line_view, line_view.session
    x, h = np.asarray(session.grid.axis_coordinates(0)), session.grid.spacing[0]
    qtbot.keyClick(view.scrubber, Qt.Key.Key_Home)  # to the initial state
    assert view.frame == 0
    before = session.frames[0]["u"].copy()
    qtbot.mouseClick(view.paint_box, Qt.MouseButton.LeftButton,
                     pos=QPoint(8, view.paint_box.height() // 2))
    assert view.paint_box.isChecked()
    view.brush_value.setValue(2.0)
    view.brush_radius.setValue(0.1)
    box, viewport = view.profile_boxes[0], view.images.viewport()

    def at(point):
        return view.images.mapFromScene(box.mapViewToScene(QPointF(point, 0.0)))

    qtbot.mouseClick(viewport, Qt.MouseButton.LeftButton, pos=at(0.5))
    clicked = session.frames[0]["u"].copy()
    changed = clicked != before
    assert np.all(clicked[changed] == 2.0) and np.all(np.abs(x[changed] - 0.5) <= 0.1 + h)
    assert changed.sum() >= round(0.2 / h) - 1  # the whole interval, no gap
    assert len(session.frames) == 1  # the frames after it are dropped
    qtbot.waitUntil(lambda: np.array_equal(view.profiles["u"].getData()[1], clicked))

    view.brush_value.setValue(-1.0)
    view.brush_radius.setValue(0.02)
    qtbot.mousePress(viewport, Qt.MouseButton.LeftButton, pos=at(0.1))
    for point in (0.15, 0.2, 0.25, 0.3):
        qtbot.mouseMove(viewport, at(point))
    qtbot.mouseRelease(viewport, Qt.MouseButton.LeftButton, pos=at(0.3))
    stroked = session.frames[0]["u"]
    assert np.all(stroked[(x >= 0.12) & (x <= 0.28)] == -1.0)  # along the drag, no gap
    changed = stroked != clicked
    assert np.all((x[changed] >= 0.08 - h) & (x[changed] <= 0.32 + h))
    undo = session.undo_stack
    assert undo.undo_text.startswith("Paint u")
    undo.undo()  # the whole stroke
    assert session.frames[0]["u"].tobytes() == clicked.tobytes()
    undo.undo()
    assert session.frames[0]["u"].tobytes() == before.tobytes()
