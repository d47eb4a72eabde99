"""The brush on a 3-D field: a click on a slice paints a ball centred on the point clicked
(at the slice's place along the axis it cuts), a drag paints a stroke of balls; one undo
takes either back bit for bit. Real mouse events on the slices' images."""

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt

from difflab.app.fields import FieldSession
from difflab.app.lab import Lab
from difflab.gui.field2d_view import Field2DView

N = 16


@pytest.fixture
def view(qtbot):
    """3-D diffusion on 16 x 16 x 16, not run, every cell its own value, Paint on."""
    lab = Lab()
    widget = Field2DView(FieldSession(lab, "diffusion", N, ndim=3))
    qtbot.addWidget(widget)
    widget.resize(1400, 520)  # the three slices in a row
    widget.show()
    qtbot.waitExposed(widget)
    widget.session.frames[0] = {"u": np.arange(float(N**3)).reshape(N, N, N) / N**3}
    widget.paint_box.setChecked(True)
    widget.brush_value.setValue(5.0)
    widget.brush_radius.setValue(3 * widget.session.grid.spacing[0])
    yield widget
    widget.shutdown()


def _pos(view, panel, point):
    box = panel.plot_item.getViewBox()
    return view.images.mapFromScene(box.mapViewToScene(QPointF(*point)))


def _panel(view, plane):
    return next(p for p in view.panels if p.plane == plane)


def _distance(grid, centre) -> np.ndarray:
    """Each cell's distance to ``centre`` across the periodic edges (x, y, z)."""
    parts = []
    for axis, c in enumerate(centre):
        d = grid.axis_coordinates(axis) - c
        length = grid.extent[axis][1] - grid.extent[axis][0]
        d = d - length * np.round(d / length)
        parts.append(d)
    dx, dy, dz = np.meshgrid(*parts, indexing="ij")
    return np.sqrt(dx**2 + dy**2 + dz**2)


def _wait_placed(qtbot, view):
    qtbot.waitUntil(lambda: sorted(p.place for p in view.panels) == [(0, 0), (0, 1), (0, 2)]
                    and all(p.plot_item.getViewBox().sceneBoundingRect().width() > 100
                            for p in view.panels))


def test_a_click_on_a_slice_paints_a_ball_that_undo_takes_back(qtbot, view):
    session, grid = view.session, view.session.grid
    _wait_placed(qtbot, view)
    view.slice_sliders["xz"].setValue(5)  # the xz slice at y index 5
    before = session.frames[0]["u"].copy()
    xs, ys, zs = (grid.axis_coordinates(a) for a in range(3))
    centre = (xs[9], ys[5], zs[4])
    qtbot.mouseClick(view.images.viewport(), Qt.MouseButton.LeftButton,
                     pos=_pos(view, _panel(view, "xz"), (xs[9], zs[4])))
    after = session.frames[0]["u"]
    changed = after != before
    h, r = grid.spacing[0], view.brush_radius.value()
    distance = _distance(grid, centre)
    assert np.all(after[changed] == 5.0)
    assert np.all(distance[changed] <= r + h)  # within a pixel of the ball
    assert np.all(changed[distance <= r - h])
    assert changed[:, 3, :].any() and changed[:, 7, :].any()  # a ball: other y slices too
    assert not changed[:, 9, :].any()
    qtbot.waitUntil(lambda: np.asarray(_panel(view, "xz").image.image)[9, 4] == 5.0)
    assert view.session.undo_stack.undo_text.startswith("Paint u")
    view.session.undo_stack.undo()
    assert session.frames[0]["u"].tobytes() == before.tobytes()
    view.session.undo_stack.redo()
    assert session.frames[0]["u"].tobytes() == after.tobytes()


def test_a_drag_on_a_slice_paints_a_stroke_one_undo_takes_back(qtbot, view):
    session, grid = view.session, view.session.grid
    _wait_placed(qtbot, view)
    view.slice_sliders["xy"].setValue(12)  # the xy slice at z index 12
    view.brush_radius.setValue(grid.spacing[0])
    before = session.frames[0]["u"].copy()
    xs, ys, zs = (grid.axis_coordinates(a) for a in range(3))
    panel, viewport = _panel(view, "xy"), view.images.viewport()
    left = Qt.MouseButton.LeftButton
    qtbot.mousePress(viewport, left, pos=_pos(view, panel, (xs[2], ys[8])))
    for i in (5, 8, 11, 13):
        qtbot.wait(20)  # the scene drops moves that come under 10 ms apart
        qtbot.mouseMove(viewport, _pos(view, panel, (xs[i], ys[8])))
    qtbot.mouseRelease(viewport, left, pos=_pos(view, panel, (xs[13], ys[8])))
    after = session.frames[0]["u"]
    changed = after != before
    assert np.all(after[changed] == 5.0)
    assert np.all(changed[3:13, 8, 12])  # no gap along the drag, on the slice shown
    assert not changed[:, :, :10].any() and not changed[:, :, 15].any()  # near the slice
    session.undo_stack.undo()  # one step takes back the whole stroke
    assert session.frames[0]["u"].tobytes() == before.tobytes()
    session.undo_stack.redo()
    assert session.frames[0]["u"].tobytes() == after.tobytes()
