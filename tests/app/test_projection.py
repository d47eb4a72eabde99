"""The orthographic views of the 3-D phase view, against rotations worked out by hand."""

import numpy as np
import pytest

from difflab.app.projection import (
    BOX_EDGES,
    box_bounds,
    label_edges,
    project,
    to_box,
    view_matrix,
)

X, Y, Z = np.eye(3)


def test_azimuth_and_elevation_zero_show_x_right_and_z_up():
    np.testing.assert_allclose(project(np.eye(3), 0, 0), [[1, 0], [0, 0], [0, 1]], atol=1e-15)


def test_quarter_turns_swap_the_axes():
    # azimuth 90: y to the right, x along the line of sight
    np.testing.assert_allclose(project(np.eye(3), 90, 0), [[0, 0], [1, 0], [0, 1]], atol=1e-15)
    np.testing.assert_allclose(project(np.eye(3), -90, 0), [[0, 0], [-1, 0], [0, 1]],
                               atol=1e-15)
    # elevation 90: looking down on x-y
    np.testing.assert_allclose(project(np.eye(3), 0, 90), [[1, 0], [0, 1], [0, 0]], atol=1e-15)
    # elevation -90: looking up, y points down the screen
    np.testing.assert_allclose(project(np.eye(3), 0, -90), [[1, 0], [0, -1], [0, 0]],
                               atol=1e-15)


def test_a_general_view_matches_the_hand_computed_one():
    # azimuth 30, elevation 60: right = (sqrt3/2, 1/2, 0), up = (-sqrt3/4, 3/4, 1/2)
    s3 = np.sqrt(3)
    np.testing.assert_allclose(project([[1.0, 2.0, 3.0]], 30, 60),
                               [[s3 / 2 + 1, -s3 / 4 + 3 / 2 + 3 / 2]])
    # the viewer sits on the side of -y at azimuth 0 and above at elevation 90
    np.testing.assert_allclose(view_matrix(0, 0)[2], -Y, atol=1e-15)
    np.testing.assert_allclose(view_matrix(0, 90)[2], Z, atol=1e-15)


def test_views_are_rotations_that_keep_lengths():
    rng = np.random.default_rng(0)
    points = rng.normal(size=(50, 3))
    for azimuth, elevation in rng.uniform([-180, -90], [180, 90], size=(20, 2)):
        matrix = view_matrix(azimuth, elevation)
        np.testing.assert_allclose(matrix @ matrix.T, np.eye(3), atol=1e-14)
        assert np.linalg.det(matrix) == pytest.approx(1.0)  # a rotation, not a mirror
        depth = points @ matrix[2]
        screen = project(points, azimuth, elevation)
        np.testing.assert_allclose((screen**2).sum(1) + depth**2, (points**2).sum(1))
        # a vector in the screen's plane keeps its length on the screen
        in_plane = matrix[:2].T @ np.array([3.0, -4.0])
        assert np.linalg.norm(project([in_plane], azimuth, elevation)) == pytest.approx(5.0)


def test_turning_the_azimuth_turns_the_scene_about_z():
    point = np.array([[0.3, -1.2, 0.7]])
    turn = np.radians(40)
    about_z = np.array([[np.cos(turn), np.sin(turn), 0], [-np.sin(turn), np.cos(turn), 0],
                        [0, 0, 1]])
    np.testing.assert_allclose(project(point, 10 + 40, 25), project(point @ about_z.T, 10, 25))


def test_points_are_scaled_into_the_box():
    data = np.array([[0.0, 10.0, 5.0], [2.0, 30.0, 5.0], [np.nan, np.inf, 5.0]])
    lo, hi = box_bounds([data[:2], data[2:]])
    np.testing.assert_allclose(lo, [0.0, 10.0, 4.5])  # the flat column gets a span of 1
    np.testing.assert_allclose(hi, [2.0, 30.0, 5.5])
    np.testing.assert_allclose(to_box(data[:2], lo, hi), [[-1, -1, 0], [1, 1, 0]])
    lo, hi = box_bounds([])
    np.testing.assert_allclose(hi - lo, 1.0)


def test_the_box_has_twelve_edges_along_the_axes():
    steps = BOX_EDGES[:, 1] - BOX_EDGES[:, 0]
    np.testing.assert_allclose(np.sort(steps, axis=1), np.tile([0, 0, 2], (12, 1)))
    assert np.all(np.abs(BOX_EDGES) == 1)
    corners = {tuple(c) for c in BOX_EDGES.reshape(-1, 3)}
    assert len(corners) == 8 and len({tuple(e.ravel()) for e in BOX_EDGES}) == 12


def test_axes_are_labelled_on_the_outline_of_the_box():
    for azimuth, elevation in ((-50, 25), (30, 60), (135, -20)):
        matrix = view_matrix(azimuth, elevation)[:2]
        for axis, edge in enumerate(label_edges(azimuth, elevation)):
            np.testing.assert_allclose(edge[1] - edge[0], 2 * np.eye(3)[axis])
            # of the four parallel edges, the chosen one is farthest out on the screen
            middles = BOX_EDGES[4 * axis:4 * axis + 4].mean(axis=1) @ matrix.T
            chosen = edge.mean(axis=0) @ matrix.T
            assert np.hypot(*chosen) == pytest.approx(np.hypot(*middles.T).max())
    # seen from the front and a little above, x is labelled along the bottom front edge
    np.testing.assert_allclose(label_edges(0, 20)[0], [[-1, -1, -1], [1, -1, -1]])


def test_points_of_the_wrong_shape_are_refused():
    with pytest.raises(ValueError, match=r"shape \(n, 3\)"):
        project(np.zeros((4, 2)), 0, 0)
