"""Which field models carry a velocity, and the arrows that draw one."""

import math

import numpy as np
import pytest

import difflab as dl
from difflab.app.field_vectors import (
    ARROW_FILL,
    arrow_lines,
    component_fields,
    frame_velocity,
    velocity_source,
)
from difflab.models import from_equations

SHEAR = """\
name: Shear
params: nu = 0.01
grid: x = periodic(0, 1, 16), y = periodic(0, 1, 16)
init: vx = sin(2*pi*y), vy = 0.5 + 0*x
dvx/dt = nu*laplace(vx)
dvy/dt = nu*laplace(vy)
"""


def test_models_with_a_velocity_and_without():
    assert component_fields(("p", "u_x", "u_y")) == ("u_x", "u_y")
    assert component_fields(("u", "v")) is None  # Gray-Scott's concentrations
    assert velocity_source(dl.models.get("navier_stokes")()) == "velocity from w"
    assert velocity_source(dl.models.get("gray_scott")()) is None
    assert velocity_source(dl.models.get("diffusion")().with_points((8, 8, 8))) is None


def test_two_fields_named_as_a_vector_are_the_velocity():
    model = from_equations(SHEAR)()
    frame = {k: np.asarray(v) for k, v in model.initial_fields().items()}
    assert velocity_source(model) == "velocity (vx, vy)"
    u, v = frame_velocity(model, frame)
    assert np.array_equal(u, frame["vx"])
    assert np.array_equal(v, frame["vy"])


def test_a_uniform_flow_draws_equal_arrows_along_it():
    grid = dl.models.get("gray_scott")().with_points((64, 32)).grid
    x, y = arrow_lines(grid, np.full(grid.shape, 3.0), np.full(grid.shape, 4.0))
    x, y = x.reshape(-1, 6), y.reshape(-1, 6)
    assert x.shape[0] == 16 * 16  # every 4th point across, every 2nd up
    lengths = np.hypot(x[:, 1] - x[:, 0], y[:, 1] - y[:, 0])
    spacing = min(4 * grid.spacing[0], 2 * grid.spacing[1])
    assert lengths == pytest.approx(np.full(256, ARROW_FILL * spacing))
    angles = np.arctan2(y[:, 1] - y[:, 0], x[:, 1] - x[:, 0])
    assert angles == pytest.approx(np.full(256, math.atan2(4.0, 3.0)))
    still = arrow_lines(grid, np.zeros(grid.shape), np.zeros(grid.shape))
    assert still[0].size == 0
