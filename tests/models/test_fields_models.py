"""Field models: the linear and nonlinear parts against closed forms, and runs that keep
what the equations keep."""

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difflab as dl
from difflab.models import (
    AbstractFieldModel,
    GrayScott,
    Grid,
    KuramotoSivashinsky,
    laplace_multiplier,
)
from difflab.solvers import simulate_fields


class Diffusion(AbstractFieldModel):
    """``u_t = D laplace(u)``: a user's field model in a few lines (a linear part alone:
    its nonlinear part is zero)."""

    D: float = 0.1
    grid: Grid = eqx.field(default_factory=lambda: Grid(((0, 2 * np.pi),) * 2, (16, 16)))
    field_names: ClassVar = ("u",)

    def linear_part(self):
        return {"u": self.D * jnp.asarray(laplace_multiplier(self.grid))}

    def initial_fields(self):
        x, y = self.grid.coordinates
        return {"u": jnp.sin(x) * jnp.cos(3 * y)}


def test_a_fourier_mode_of_2d_diffusion_decays_exactly():
    model = Diffusion()
    run = simulate_fields(model, 2.0, dt=0.5, frames=3)
    x, y = model.grid.coordinates
    decay = jnp.exp(-0.1 * 10 * run.ts)[:, None, None]
    np.testing.assert_allclose(run["u"], decay * jnp.sin(x) * jnp.cos(3 * y), atol=1e-14)
    np.testing.assert_allclose(model.vector_field(0.0, model.initial_fields())["u"],
                               -1.0 * jnp.sin(x) * jnp.cos(3 * y), atol=1e-13)


class _NoRightHandSide(AbstractFieldModel):
    grid: Grid = eqx.field(default_factory=lambda: Grid(((0, 1),), (8,)))
    field_names: ClassVar = ("u",)

    def initial_fields(self):
        return {"u": jnp.zeros(8)}


def test_a_model_without_a_right_hand_side_says_what_to_write():
    with pytest.raises(TypeError, match="defines no right-hand side: write vector_field"):
        _NoRightHandSide()


def test_gray_scott_splits_into_its_equations():
    """On ``u = 1/2 + sin(2 pi x) cos(2 pi y) / 4``, ``v = cos(2 pi x) / 4``: the model's
    ``L u + N(u)`` equals the equations written out."""
    model = GrayScott(grid=Grid(((0, 1), (0, 1)), (16, 16)))
    x, y = model.grid.coordinates
    s = jnp.sin(2 * np.pi * x) * jnp.cos(2 * np.pi * y)
    u, v = 0.5 + s / 4, jnp.cos(2 * np.pi * x) / 4
    du, dv = model.vector_field(0.0, {"u": u, "v": v}).values()
    lap_u, lap_v = -8 * np.pi**2 * s / 4, -4 * np.pi**2 * v
    F, k = 0.04, 0.06
    np.testing.assert_allclose(du, 2e-5 * lap_u - u * v**2 + F * (1 - u), atol=1e-14)
    np.testing.assert_allclose(dv, 1e-5 * lap_v + u * v**2 - (F + k) * v, atol=1e-14)


@pytest.fixture(scope="module")
def gray_scott_run():
    model = GrayScott(grid=Grid(((0, 1), (0, 1)), (32, 32)))
    return model, simulate_fields(model, 200.0, dt=2.0, frames=3)


def test_gray_scott_runs_with_the_grid_s_shape_and_keeps_its_symmetry(gray_scott_run):
    """The spot is centred and the equations isotropic: every frame stays symmetric under
    swapping x and y."""
    model, run = gray_scott_run
    assert run["u"].shape == run["v"].shape == (3, 32, 32)
    for name in ("u", "v"):
        np.testing.assert_allclose(run[name], jnp.swapaxes(run[name], 1, 2), atol=1e-12)
    assert float(jnp.max(jnp.abs(run["v"][-1] - run["v"][0]))) > 1e-3  # it did evolve


def test_gray_scott_s_homogeneous_state_is_kept():
    model = GrayScott(grid=Grid(((0, 1), (0, 1)), (8, 8)))
    rest = {"u": jnp.ones((8, 8)), "v": jnp.zeros((8, 8))}
    run = simulate_fields(model, 10.0, dt=1.0, frames=2, fields=rest)
    np.testing.assert_allclose(run["u"][-1], 1.0, atol=1e-14)
    np.testing.assert_allclose(run["v"][-1], 0.0, atol=1e-14)


def test_kuramoto_sivashinsky_splits_into_its_equation():
    model = KuramotoSivashinsky(grid=Grid(((0, 32 * np.pi),), (64,)))
    (x,) = model.grid.coordinates
    q = 1 / 16
    u = jnp.sin(q * x)
    expected = (q**2 - q**4) * u - u * q * jnp.cos(q * x)
    np.testing.assert_allclose(model.vector_field(0.0, {"u": u})["u"], expected, atol=1e-14)


def test_kuramoto_sivashinsky_keeps_its_mean():
    model = KuramotoSivashinsky(grid=Grid(((0, 32 * np.pi),), (64,)))
    u0 = model.initial_fields()["u"] + 0.3
    run = simulate_fields(model, 20.0, dt=0.25, frames=2, fields={"u": u0})
    np.testing.assert_allclose(jnp.mean(run["u"][-1]), jnp.mean(u0), atol=1e-12)


def test_field_names_are_checked():
    class Twice(Diffusion):
        field_names: ClassVar = ("u", "u")

    with pytest.raises(ValueError, match="name each field once"):
        Twice()


def test_heat1d_is_registered_as_a_field_model():
    heat = dl.models.get("heat1d")
    assert heat.registry_name == "heat1d" and heat.domain == "fields"
    assert "heat1d" in dl.models.field_models() and "heat1d" not in dl.models.available()
    assert dl.models.get("gray_scott") is GrayScott
    assert "gray_scott" not in dl.models.available()  # listed by field_models() instead


class Velocity(Diffusion):
    """A vector field beside a scalar one: ``v_t = D laplace(v)`` component-wise."""

    field_names: ClassVar = ("u", "v")

    def linear_part(self):
        lap = self.D * jnp.asarray(laplace_multiplier(self.grid))
        return {"u": lap, "v": lap}

    def nonlinear_part(self, t, fields):
        return {name: jnp.zeros_like(u) for name, u in fields.items()}

    def initial_fields(self):
        x, y = self.grid.coordinates
        return {"u": jnp.sin(x), "v": jnp.stack([jnp.cos(y), jnp.sin(2 * x)])}


def test_a_vector_field_runs_beside_a_scalar_one():
    model = Velocity()
    run = simulate_fields(model, 1.0, dt=0.5, frames=2)
    x, y = model.grid.coordinates
    assert run["v"].shape == (2, 2, 16, 16) and run["u"].shape == (2, 16, 16)
    expected = jnp.stack([jnp.cos(y) * np.exp(-0.1), jnp.sin(2 * x) * np.exp(-0.4)])
    np.testing.assert_allclose(run["v"][-1], expected, atol=1e-14)
    with pytest.raises(ValueError, match=r"a vector field \(2, 16, 16\)"):
        model.check_fields({"u": x, "v": jnp.stack([x, x, x])})


def test_runs_vmap_over_a_parameter():
    """A batch of diffusivities in one program: each mode decays at its own rate."""
    model = Diffusion()
    x, y = model.grid.coordinates
    finals = jax.vmap(lambda D: simulate_fields(Diffusion(D=D), 1.0, dt=0.5, frames=2)
                      ["u"][-1])(jnp.array([0.1, 0.2]))
    for D, final in zip((0.1, 0.2), finals, strict=True):
        np.testing.assert_allclose(final, np.exp(-10 * D) * jnp.sin(x) * jnp.cos(3 * y),
                                   atol=1e-14)
