"""The phase plane's app model, without Qt: nullclines against analytic ones, equilibria,
the direction field, orbits forward and backward."""

import jax.numpy as jnp
import numpy as np
import pytest

import difflab as dl
from difflab.app.phase_plane import (
    PhasePlaneRequest,
    backward_model,
    compute_plane,
    default_box,
    orbit_from,
    stability_group,
    zero_contour,
)
from difflab.app.runs import RunSettings


class LinearSaddle(dl.Model):
    """``x' = x + y - 3``, ``y' = x - y - a``: a saddle at ``((3 + a) / 2, (3 - a) / 2)``."""

    a: float = 1.0
    state_names = ("x", "y")

    def vector_field(self, t, y):
        return jnp.stack([y[0] + y[1] - 3.0, y[0] - y[1] - self.a])

    def initial_state(self):
        return jnp.array([0.0, 0.0])


def _request(model, x, y, box, **kwargs):
    return PhasePlaneRequest(model, type(model).__name__, RunSettings(t1=3.0), x, y, box, **kwargs)


def _points(segments):
    return np.asarray(segments).reshape(-1, 2)


def test_lotka_volterra_nullclines_are_the_analytic_lines_through_the_equilibria():
    model = dl.models.get("lotka_volterra")()
    plane = compute_plane(_request(model, "prey", "predator", ((-1.0, 10.0), (-1.0, 6.0))))
    a, b, c, d = (float(getattr(model, n)) for n in ("alpha", "beta", "gamma", "delta"))
    prey = _points(plane.nullclines["prey"])  # prey' = x (a - b p) = 0: x = 0 or p = a / b
    assert len(prey) > 50
    assert np.all(np.minimum(abs(prey[:, 0]), abs(prey[:, 1] - a / b)) < 1e-9)
    predator = _points(plane.nullclines["predator"])  # p (d x - c) = 0: p = 0 or x = c / d
    assert np.all(np.minimum(abs(predator[:, 1]), abs(predator[:, 0] - c / d)) < 1e-9)
    np.testing.assert_allclose(plane.points, [[0.0, 0.0], [c / d, a / b]], atol=1e-9)
    assert plane.stability == ("saddle", "centre")
    assert [stability_group(k) for k in plane.stability] == ["saddle", "other"]


def test_a_linear_saddle_its_nullclines_and_direction_field():
    plane = compute_plane(_request(LinearSaddle(a=1.0), "x", "y", ((-1.0, 4.0), (-2.0, 3.0))))
    xs = _points(plane.nullclines["x"])
    np.testing.assert_allclose(xs[:, 1], 3.0 - xs[:, 0], atol=1e-12)
    ys = _points(plane.nullclines["y"])
    np.testing.assert_allclose(ys[:, 1], ys[:, 0] - 1.0, atol=1e-12)
    np.testing.assert_allclose(plane.points, [[2.0, 1.0]], atol=1e-9)
    assert plane.stability == ("saddle",)
    # shafts point along the field: the first third of the arrows are the shafts
    shafts = plane.arrows[: len(plane.arrows) // 3]
    mid, step = shafts.mean(axis=1), shafts[:, 1] - shafts[:, 0]
    field = np.stack([mid[:, 0] + mid[:, 1] - 3.0, mid[:, 0] - mid[:, 1] - 1.0], axis=1)
    cos = np.sum(step * field, axis=1) / np.linalg.norm(step, axis=1) / np.linalg.norm(field, axis=1)
    np.testing.assert_allclose(cos, 1.0, atol=1e-9)


def test_pendulum_equilibria_classes_and_nullclines():
    model = dl.models.get("pendulum")()
    plane = compute_plane(_request(model, "theta", "omega", ((-4.0, 4.0), (-5.0, 5.0))))
    np.testing.assert_allclose(plane.points, [[-np.pi, 0], [0, 0], [np.pi, 0]], atol=1e-9)
    assert plane.stability == ("saddle", "centre", "saddle")
    theta = _points(plane.nullclines["theta"])  # theta' ~ omega
    np.testing.assert_allclose(theta[:, 1], 0.0, atol=1e-12)
    omega = _points(plane.nullclines["omega"])  # omega' ~ -sin(theta): theta = k pi
    assert np.all(np.min(abs(omega[:, :1] - np.pi * np.array([-1, 0, 1])), axis=1) < 1e-3)


def test_other_states_are_held_and_equilibria_projected():
    model = dl.models.get("lorenz")(rho=10.0)
    request = _request(model, "x", "z", ((-10.0, 10.0), (-1.0, 20.0)), held=(0.0, 2.5, 0.0),
                       n_grid=11, n_arrows=5)
    plane = compute_plane(request)
    field = np.asarray(model.vector_field(0.0, jnp.array([plane.xs[3], 2.5, plane.ys[4]])))
    np.testing.assert_allclose([plane.u[4, 3], plane.v[4, 3]], field[[0, 2]], rtol=1e-12)
    expected = np.sqrt(8 / 3 * 9)
    np.testing.assert_allclose(plane.points, [[-expected, 9.0], [0, 0], [expected, 9.0]],
                               atol=1e-8)


def test_a_click_runs_forward_as_simulate_and_backward_on_the_reversed_field():
    model = dl.models.get("pendulum")()
    request = _request(model, "theta", "omega", ((-4.0, 4.0), (-5.0, 5.0)))
    orbit = orbit_from(request, 0.5, 0.0)
    expected = dl.simulate(model, 3.0, y0=jnp.array([0.5, 0.0]))
    np.testing.assert_allclose(np.asarray(orbit.forward.ys), np.asarray(expected.ys), rtol=1e-12)
    # the pendulum is reversible: back in time, theta is the same and omega flips
    np.testing.assert_allclose(orbit.backward.ys[:, 0], orbit.forward.ys[:, 0], atol=1e-9)
    np.testing.assert_allclose(orbit.backward.ys[:, 1], -orbit.forward.ys[:, 1], atol=1e-9)
    _, y = orbit.xy(request, "backward")
    np.testing.assert_allclose(y, -np.asarray(orbit.forward.ys[:, 1]), atol=1e-9)


def test_backward_model_negates_the_field():
    for model in (LinearSaddle(a=0.5), dl.models.get("pendulum")(g=3.0)):
        back = backward_model(model)
        y = jnp.array([0.3, -0.7])
        np.testing.assert_allclose(back.vector_field(0.0, y), -model.vector_field(0.0, y))
        assert float(back.parameters()[next(iter(model.parameter_specs()))]) == \
            float(model.parameters()[next(iter(model.parameter_specs()))])


def test_marching_squares_on_a_circle_and_a_saddle_cell():
    xs = ys = np.linspace(-2, 2, 81)
    gx, gy = np.meshgrid(xs, ys)
    points = _points(zero_contour(xs, ys, gx**2 + gy**2 - 1))
    np.testing.assert_allclose(np.hypot(*points.T), 1.0, atol=2e-3)
    segments = zero_contour([0.0, 1.0], [0.0, 1.0], np.array([[1.0, -1.0], [-1.0, 2.0]]))
    assert segments.shape == (2, 2, 2)


def test_requests_are_checked_and_the_default_box_frames_the_values():
    model = dl.models.get("lotka_volterra")()
    with pytest.raises(ValueError, match="two different"):
        _request(model, "prey", "prey", ((0, 1), (0, 1)))
    with pytest.raises(ValueError, match="no state"):
        _request(model, "prey", "fox", ((0, 1), (0, 1)))
    with pytest.raises(ValueError, match="min < max"):
        _request(model, "prey", "predator", ((1, 0), (0, 1)))
    (x0, x1), (y0, y1) = default_box([1.0, 3.0], [-2.0, 2.0])
    assert x0 < 0.0 and x1 > 3.0 and y0 < -2.0 and y1 > 2.0
