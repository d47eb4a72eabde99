"""The 2-D field view: images equal the frames, the scrubber, painting and its undo,
colour levels, PNG export, re-solving on a slider."""

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QImage

import difflab as dl
from difflab.app.field_frames import (
    disc_cells,
    levels,
    line_profile,
    paint_disc,
    point_series,
)
from difflab.app.fields import FieldSession
from difflab.app.lab import Lab
from difflab.app.session_io import open_lab, save_lab
from difflab.gui.field2d_view import RESOLVE_MS, Field2DView

from .conftest import LONG

POINTS = 32


@pytest.fixture(scope="module")
def lab():
    return Lab()


@pytest.fixture
def view(qtbot, lab):
    """A view of Gray-Scott on 32 x 32, run to t1 = 400 (11 frames)."""
    session = FieldSession(lab, "gray_scott", POINTS)
    session.t1, session.n_frames = 400.0, 11
    widget = Field2DView(session)
    qtbot.addWidget(widget)
    widget.resize(900, 500)
    widget.show()
    shown = []
    widget.drawn.connect(shown.append)
    widget.run(0)
    qtbot.waitUntil(lambda: session.complete and widget.worker is None, timeout=LONG)
    qtbot.waitUntil(lambda: shown[-1] == 10)  # the throttled redraw of the last frame
    yield widget
    widget.shutdown()


def image_of(panel) -> np.ndarray:
    return np.asarray(panel.image.image)


def click(qtbot, widget, panel, point) -> None:
    """A real left click on ``panel``'s image at ``point`` (grid coordinates)."""
    scene = panel.plot_item.getViewBox().mapViewToScene(QPointF(*point))
    pos = widget.images.mapFromScene(scene)
    qtbot.mouseClick(widget.images.viewport(), Qt.MouseButton.LeftButton, pos=pos)


def test_the_images_are_the_frames_and_follow_the_scrubber(qtbot, view):
    session = view.session
    assert len(session.frames) == 11 and session.ts[-1] == pytest.approx(400.0)
    assert view.frame == 10  # the view followed the stream to its last frame
    for panel in view.panels:
        assert np.array_equal(image_of(panel), session.frames[10][panel.name])
    view.scrubber.setValue(3)
    qtbot.waitUntil(lambda: view.frame == 3)
    qtbot.wait(40)  # the throttled redraw
    for panel in view.panels:
        assert np.array_equal(image_of(panel), session.frames[3][panel.name])
    assert view.time_label.text().startswith(f"t = {session.ts[3]:.5g}")
    assert not np.array_equal(session.frames[3]["v"], session.frames[10]["v"])


def test_the_image_lies_on_the_grid_coordinates(view):
    grid = view.session.grid
    rect = view.panels[0].image.mapRectToView(view.panels[0].image.boundingRect())
    h = grid.spacing[0]
    assert rect.left() == pytest.approx(grid.axis_coordinates(0)[0] - h / 2)
    assert rect.width() == pytest.approx(grid.length(0))
    assert rect.height() == pytest.approx(grid.length(1))


def test_colour_bar_levels_are_the_data_range(view):
    for panel in view.panels:
        values = view.session.frames[view.frame][panel.name]
        assert panel.colorbar.levels() == pytest.approx((values.min(), values.max()))
        assert panel.map_name == "viridis"  # Gray-Scott's fields have one sign


def test_a_signed_field_gets_a_diverging_map_centred_at_zero():
    values = np.array([[-1.0, 0.5], [2.0, 0.0]])
    assert levels(values) == (-2.0, 2.0)
    assert levels(np.full((2, 2), 3.0)) == pytest.approx((2.7, 3.3))


def test_a_click_paints_a_disc_and_undo_restores_it_bit_for_bit(qtbot, view, lab):
    session, panel = view.session, view.panels[1]  # v
    view.scrubber.setValue(0)  # into the initial state
    before = session.frames[0]["v"].copy()
    view.paint_box.setChecked(True)
    view.brush_value.setValue(0.75)
    view.brush_radius.setValue(0.1)
    click(qtbot, view, panel, (0.3, 0.6))
    after = session.frames[0]["v"]
    cells = disc_cells(session.grid, (0.3, 0.6), 0.1)
    x, y = (c.ravel()[cells] for c in session.grid.coordinates)
    assert 20 < cells.size < 40  # pi r^2 / h^2 = 32 cells, to within the click's pixel
    assert np.all(np.hypot(x - 0.3, y - 0.6) <= 0.1 + 2 * session.grid.spacing[0])
    changed = np.flatnonzero(after != before)
    assert np.all(after.ravel()[changed] == 0.75) and changed.size >= cells.size - 8
    assert len(session.frames) == 1  # the frames after it came from the unpainted field
    qtbot.wait(40)
    assert np.array_equal(image_of(panel), after)
    assert lab.undo_stack.undo_text.startswith("Paint v")
    lab.undo()
    assert session.frames[0]["v"].tobytes() == before.tobytes()
    lab.redo()
    assert session.frames[0]["v"].tobytes() == after.tobytes()


def test_paint_disc_wraps_across_periodic_edges():
    session = FieldSession(None, "diffusion", 16)
    field = np.zeros(session.grid.shape)
    painted, cells = paint_disc(field, session.grid, (0.0, 0.5), 0.1, 2.0)
    assert painted[0].max() == 2.0 and painted[-1].max() == 2.0  # both sides of x = 0
    assert painted[8].max() == 0.0  # ... and nothing half a domain away
    assert np.count_nonzero(painted) == cells.size and field.max() == 0.0


def test_the_png_has_one_pixel_per_grid_point_in_the_colours_shown(view, tmp_path):
    paths = view.export_png(tmp_path / "frame.png")
    assert [p.name for p in paths] == ["frame-u.png", "frame-v.png"]
    image = QImage(str(paths[1])).convertToFormat(QImage.Format.Format_RGBA8888)
    assert (image.width(), image.height()) == (POINTS, POINTS)
    values = view.session.frames[view.frame]["v"]
    i, j = np.unravel_index(np.argmax(values), values.shape)  # x index i, y index j
    top = pg.colormap.get("viridis").map(1.0, mode="byte")
    pixel = image.pixelColor(int(i), POINTS - 1 - int(j))  # rows run from y high to low
    assert (pixel.red(), pixel.green(), pixel.blue()) == tuple(top[:3])


def test_a_parameter_slider_re_solves_the_field_model(qtbot, view):
    session = view.session
    row = view.parameters.rows["F"]
    old = session.frames[-1]["v"].copy()
    row.spin.setValue(0.05)
    assert session.params["F"] == 0.05
    qtbot.waitUntil(lambda: view.worker is not None, timeout=2_000)  # debounced
    qtbot.waitUntil(lambda: session.complete and view.worker is None, timeout=LONG)
    assert not np.allclose(session.frames[-1]["v"], old)
    qtbot.waitUntil(lambda: np.array_equal(image_of(view.panels[1]), session.frames[-1]["v"]))


def test_a_parameter_change_can_go_on_from_the_frame_shown(qtbot, view):
    session = view.session
    qtbot.keyClick(view.on_change, Qt.Key.Key_Down)  # "go on from this frame"
    assert view.on_change.currentText() == "go on from this frame"
    view.scrubber.setValue(5)
    before = [frame["v"].copy() for frame in session.frames]
    view.parameters.rows["F"].spin.setValue(0.05)
    qtbot.waitUntil(lambda: view.worker is not None, timeout=2_000)  # debounced
    qtbot.waitUntil(lambda: session.complete and view.worker is None, timeout=LONG)
    assert len(session.frames) == 11
    for k in range(6):  # the frames up to the one shown are kept, bit for bit
        assert np.array_equal(session.frames[k]["v"], before[k])
    model = session.model  # and the rest run on from frame 5 under F = 0.05
    fresh = dl.solvers.simulate_fields(model, session.ts[10], t0=session.ts[5],
                                       fields=dict(session.frames[5]), dt=1.0, frames=6,
                                       solver=dl.solvers.ETDRK4(model.linear_part(), 1.0))
    assert np.allclose(session.frames[10]["v"], np.asarray(fresh["v"][-1]), atol=1e-12)
    assert not np.allclose(session.frames[10]["v"], before[10])


def test_the_fields_menu_runs_a_model_in_the_window(qtbot, window):
    menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "Fiel&ds")
    tab = window.field2d_view
    assert tab._view is None  # nothing made at the window's start
    tab.view.session.points = POINTS
    action = next(a for a in menu.actions() if a.text() == "diffusion")
    action.trigger()
    view = tab.view
    assert window.tabs.currentWidget() is tab and view.session.model_name == "diffusion"
    assert window.workers.get("fields") is view.worker  # Stop stops it, closing joins it
    qtbot.waitUntil(lambda: view.session.complete and view.worker is None, timeout=LONG)
    exact = view.session.model.exact(view.session.ts[-1])["u"]  # a decaying Fourier mode
    assert np.allclose(view.session.frames[-1]["u"], exact, atol=1e-6)
    # the status line tells of the field run, not of the model's run, while it is shown
    frames, t = len(view.session.frames), view.session.ts[-1]
    line = f"diffusion on 32 x 32: {frames} frames to t = {t:.6g}"
    qtbot.waitUntil(lambda: window.status.text().startswith(line))
    assert window.status.text().endswith(" s, etdrk4")  # its wall time, its solver
    old = window.lab.current
    window.request_solve()  # a run of the model ends meanwhile: the line stays
    qtbot.waitUntil(lambda: window.lab.current is not old, timeout=LONG)
    assert window.status.text().startswith(line)
    panel = view.panels[0]
    qtbot.waitUntil(lambda: np.array_equal(image_of(panel), view.session.frames[-1]["u"]))
    assert panel.map_name == "CET-D1A" and panel.colorbar.levels()[0] < 0  # signed
    scene = panel.plot_item.getViewBox().mapViewToScene(QPointF(0.25, 0.25))
    qtbot.mouseMove(view.images.viewport(), view.images.mapFromScene(scene))
    cell = view.session.frames[-1]["u"][8, 8]  # the point (0.25, 0.25) on 32 x 32
    qtbot.waitUntil(lambda: window.status.text().startswith("u(0.25, 0.25) = "))
    assert f"{cell:.6g}" in window.status.text()
    bar = window.tabs.tabBar()  # to the time series: the status tells of the model's run
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(0).center())
    assert window.status.text().startswith("pendulum: ")


def test_play_runs_the_frames_from_the_first_to_the_last(qtbot, view):
    shown = []
    view.drawn.connect(shown.append)
    view.play_button.click()  # at the last frame: starts again from the first
    qtbot.waitUntil(lambda: not view.play_button.isChecked(), timeout=5_000)
    assert shown[0] == 0 and shown[-1] == 10 and shown == sorted(shown)
    assert view.play_button.text() == "Play"


def test_a_run_under_way_goes_on_from_the_painted_field(qtbot, view):
    session = view.session
    session.t1 = 4000.0  # 101 frames 40 apart: the program already compiled
    session.n_frames = 101
    view.run(0)
    qtbot.waitUntil(lambda: len(session.frames) >= 5, timeout=LONG)
    assert view.running
    k = len(session.frames) - 1
    session.paint(k, "v", (0.25, 0.25), 0.08, 0.5)
    painted = session.frames[k]["v"].copy()
    qtbot.waitUntil(lambda: session.complete and view.worker is None, timeout=LONG)
    assert len(session.frames) == 101 and np.array_equal(session.frames[k]["v"], painted)
    model = session.model  # four frames on from the painted one, by the compiled program
    fresh = dl.solvers.simulate_fields(model, session.ts[k] + 160.0, t0=session.ts[k],
                                       fields=dict(session.frames[k]), dt=1.0, frames=5,
                                       solver=dl.solvers.ETDRK4(model.linear_part(), 1.0))
    assert np.allclose(session.frames[k + 4]["v"], np.asarray(fresh["v"][-1]), atol=1e-12)


def test_a_finer_grid_keeps_the_parameters_and_csv_columns_are_the_frame(view):
    session = view.session
    session.params["F"] = 0.05
    session.select_model("gray_scott", 16)
    assert session.params["F"] == 0.05 and session.grid.shape == (16, 16)
    columns = view.export_columns()
    x, y = (np.asarray(c) for c in session.grid.coordinates)
    assert np.array_equal(columns["x"], x.ravel()) and np.array_equal(columns["y"], y.ravel())
    assert np.array_equal(columns["v"].reshape(16, 16), session.frames[0]["v"])
    session.select_model("wave")
    assert session.params == {"c": 1.0}


def test_a_saved_session_reopens_in_the_view_as_it_was_shown(qtbot, view, tmp_path):
    session = view.session
    view.shown_boxes["u"].setChecked(False)
    assert session.shown == ("v",) and [p.name for p in view.panels] == ["v"]
    view.map_box.textActivated.emit("inferno")
    view.hold_box.setChecked(True)
    held = session.held_levels["v"]
    path = tmp_path / "fields.h5"
    save_lab(session.lab, path)
    lab = Lab()
    open_lab(lab, path)
    reopened = Field2DView(lab.field_session)
    qtbot.addWidget(reopened)
    assert reopened.frame == 10  # shown at its last frame
    panel, = reopened.panels
    assert panel.name == "v" and panel.map_name == "inferno"
    assert panel.colorbar.levels() == pytest.approx(held)
    assert np.array_equal(image_of(panel), session.frames[10]["v"])
    assert not reopened.shown_boxes["u"].isChecked() and reopened.hold_box.isChecked()
    qtbot.wait(2 * RESOLVE_MS)
    assert reopened.worker is None and not lab.field_session.unsaved  # not re-solved


def test_a_brush_drag_paints_a_stroke_that_one_undo_takes_back(qtbot, view, lab):
    session, panel = view.session, view.panels[1]  # v
    view.scrubber.setValue(0)
    before = session.frames[0]["v"].copy()
    view.paint_box.setChecked(True)
    view.brush_value.setValue(0.9)
    view.brush_radius.setValue(0.05)
    viewport = view.images.viewport()

    def at(point):
        scene = panel.plot_item.getViewBox().mapViewToScene(QPointF(*point))
        return view.images.mapFromScene(scene)

    qtbot.mousePress(viewport, Qt.MouseButton.LeftButton, pos=at((0.2, 0.5)))
    for x in (0.3, 0.45, 0.6, 0.8):
        qtbot.mouseMove(viewport, at((x, 0.5)))
    qtbot.mouseRelease(viewport, Qt.MouseButton.LeftButton, pos=at((0.8, 0.5)))
    after = session.frames[0]["v"]
    h = session.grid.spacing[0]
    x, y = (np.asarray(c) for c in session.grid.coordinates)
    along = (np.abs(y - 0.5) < h / 2) & (x >= 0.22) & (x <= 0.78)
    assert along.sum() >= 16 and np.all(after[along] == 0.9)  # no gap along the drag
    changed = after != before
    near = np.hypot(x - np.clip(x, 0.2, 0.8), y - 0.5) <= 0.05 + 2 * h
    assert changed.any() and np.all(near[changed])  # nothing off the stroke
    assert lab.undo_stack.undo_text.startswith("Paint v")
    lab.undo()  # one step takes back the whole stroke
    assert session.frames[0]["v"].tobytes() == before.tobytes()
    lab.redo()
    assert session.frames[0]["v"].tobytes() == after.tobytes()


@pytest.fixture
def empty_view(qtbot, lab):
    """A view of 2-D diffusion on 16 x 16, not run."""
    widget = Field2DView(FieldSession(lab, "diffusion", 16))
    qtbot.addWidget(widget)
    widget.resize(900, 600)
    widget.show()
    yield widget
    widget.shutdown()


def test_a_1d_model_shows_a_space_time_image_and_its_profile(qtbot, empty_view):
    view = empty_view
    view.model_box.textActivated.emit("diffusion (1-D)")
    session = view.session
    assert session.grid.ndim == 1 and view.points_box.currentText() == "128"
    qtbot.waitUntil(lambda: session.complete and view.worker is None, timeout=LONG)
    qtbot.waitUntil(lambda: view.frame == len(session.frames) - 1)
    qtbot.wait(40)
    panel, = view.panels
    stacked = np.stack([frame["u"] for frame in session.frames])  # (time, x)
    assert panel.plane == "xt" and np.array_equal(image_of(panel), stacked.T)
    x, y = view.profiles["u"].getData()
    assert np.array_equal(x, session.grid.axis_coordinates(0))
    assert np.array_equal(y, session.frames[-1]["u"])
    rect = panel.image.mapRectToView(panel.image.boundingRect())
    step = session.ts[1] - session.ts[0]
    assert rect.top() == pytest.approx(-step / 2) and rect.height() == pytest.approx(
        session.ts[-1] + step)
    view.scrubber.setValue(3)
    qtbot.waitUntil(lambda: image_of(panel).shape == (128, 4))
    assert np.array_equal(image_of(panel), stacked[:4].T)


def test_a_3d_model_shows_three_slices_each_with_its_slider(qtbot, empty_view):
    view = empty_view
    view.session.select_model("diffusion", 8, ndim=3)
    session = view.session
    assert session.frames[0]["u"].shape == (8, 8, 8) and not view.slices_box.isHidden()
    volume = np.arange(512.0).reshape(8, 8, 8)  # every cell its own value
    session.frames[0] = {"u": volume}
    view.slice_sliders["yz"].setValue(1)  # x index
    view.slice_sliders["xz"].setValue(6)  # y index
    view.slice_sliders["xy"].setValue(3)  # z index
    qtbot.wait(40)
    view.draw()
    images = {panel.plane: image_of(panel) for panel in view.panels}
    assert np.array_equal(images["yz"], volume[1, :, :])
    assert np.array_equal(images["xz"], volume[:, 6, :])
    assert np.array_equal(images["xy"], volume[:, :, 3])
    levels_shown = {tuple(p.colorbar.levels()) for p in view.panels}
    assert levels_shown == {levels(volume)}  # one colour range: the whole field's
    view.resize(1400, 500)  # wide: the slices in a row, tall: in a column
    qtbot.waitUntil(lambda: [p.place for p in view.panels] == [(0, 0), (0, 1), (0, 2)])
    view.resize(500, 900)
    qtbot.waitUntil(lambda: [p.place for p in view.panels] == [(0, 0), (1, 0), (2, 0)])


def test_point_series_and_line_profile_sample_the_frames():
    grid = FieldSession(None, "diffusion", 16).grid
    x, y = (np.asarray(c) for c in grid.coordinates)
    frames = [{"u": k * x + y**2} for k in range(4)]
    assert np.array_equal(point_series(frames, "u", (3, 5)), [k * x[3, 5] + y[3, 5]**2
                                                              for k in range(4)])
    xs, ys = grid.axis_coordinates(0), grid.axis_coordinates(1)
    values = frames[2]["u"]
    along = line_profile(values, grid, (xs[2], ys[7]), (xs[12], ys[7]), 11)
    assert np.array_equal(along, values[2:13, 7])  # through grid points: their values
    plane = 2.0 * x - 3.0 * y  # bilinear sampling is exact on a plane, between points too
    start, end = (xs[1] + 0.013, ys[2]), (xs[9], ys[14] - 0.021)
    t = np.linspace(0.0, 1.0, 7)
    exact = 2.0 * (start[0] + t * (end[0] - start[0])) - 3.0 * (start[1] + t * (end[1] - start[1]))
    assert np.allclose(line_profile(plane, grid, start, end, 7), exact, atol=1e-12)


def at_point(view, panel, point):
    scene = panel.plot_item.getViewBox().mapViewToScene(QPointF(*point))
    return view.images.mapFromScene(scene)


def test_a_click_follows_a_point_over_the_frames_as_they_stream(qtbot, view):
    session, panel = view.session, view.panels[1]  # v
    xs, ys = (session.grid.axis_coordinates(a) for a in range(2))
    click(qtbot, view, panel, (xs[5], ys[7]))
    assert view.pick == ("v", (5, 7)) and not view.probes.isHidden()
    t, series = view.series_curve.getData()
    assert np.array_equal(series, [frame["v"][5, 7] for frame in session.frames])
    assert np.array_equal(t, session.ts) and len(series) == 11
    assert np.ptp(series) > 0  # the point changes over the run
    session.paint(0, "v", (xs[5], ys[7]), 0.01, 0.5)  # the later frames are dropped
    qtbot.waitUntil(lambda: len(view.series_curve.getData()[1]) == 1)
    assert view.series_curve.getData()[1][0] == 0.5
    view.run(0)  # streams again from the painted field
    qtbot.waitUntil(lambda: session.complete and view.worker is None, timeout=LONG)
    qtbot.waitUntil(lambda: len(view.series_curve.getData()[1]) == 11)
    assert np.array_equal(view.series_curve.getData()[1],
                          [frame["v"][5, 7] for frame in session.frames])


def drag(qtbot, view, panel, points, modifier=Qt.KeyboardModifier.NoModifier) -> None:
    """A real left-button drag on ``panel``'s image through ``points`` (grid coordinates)."""
    viewport, left = view.images.viewport(), Qt.MouseButton.LeftButton
    qtbot.mousePress(viewport, left, modifier, at_point(view, panel, points[0]))
    for point in points[1:]:
        qtbot.wait(20)  # the scene drops moves that come under 10 ms apart
        qtbot.mouseMove(viewport, at_point(view, panel, point))
    qtbot.mouseRelease(viewport, left, modifier, at_point(view, panel, points[-1]))


def test_a_profile_drag_plots_the_field_along_the_line(qtbot, view):
    session, (u_panel, v_panel) = view.session, view.panels
    xs, ys = (session.grid.axis_coordinates(a) for a in range(2))
    drag(qtbot, view, v_panel, [(xs[3], ys[20]), (xs[15], ys[20])])
    assert view.line is None  # a plain drag pans the image as before
    shift = Qt.KeyboardModifier.ShiftModifier
    drag(qtbot, view, u_panel, [(xs[10], ys[j]) for j in (2, 8, 20, 28)], shift)
    assert view.line == ("u", (xs[10], ys[2]), (xs[10], ys[28]))
    assert np.array_equal(view.profile_curve.getData()[1], session.frames[10]["u"][10, 2:29])
    view.profile_box.setChecked(True)  # now a drag without shift draws the line
    drag(qtbot, view, v_panel, [(xs[i], ys[20]) for i in (3, 8, 15, 25)])
    assert view.line == ("v", (xs[3], ys[20]), (xs[25], ys[20]))
    distance, along = view.profile_curve.getData()
    assert np.array_equal(along, session.frames[10]["v"][3:26, 20])
    assert np.allclose(distance, xs[3:26] - xs[3], atol=1e-12)
    view.scrubber.setValue(4)
    qtbot.waitUntil(lambda: np.array_equal(view.profile_curve.getData()[1],
                                           session.frames[4]["v"][3:26, 20]))
    assert not np.array_equal(session.frames[4]["v"][3:26, 20], along)
