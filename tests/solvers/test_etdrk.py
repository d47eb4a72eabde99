"""ETDRK2 and ETDRK4: phi functions, exactness on linear problems, and their order."""

import math
from typing import ClassVar

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difflab as dl
from difflab.models import Grid, KuramotoSivashinsky
from difflab.solvers import ETDRK2, ETDRK4, simulate_fields
from difflab.solvers._steppers.etdrk import phi_direct, phi_functions


def _series(k, z, terms=30):
    return sum(z**j / math.factorial(j + k) for j in range(terms))


@pytest.mark.parametrize("kind", [float, complex])  # real: half the circle suffices
def test_phi_functions_match_their_series_near_zero_and_the_direct_formula_far_away(kind):
    small = np.array([0.0, 1e-12, -1e-8, 1e-4, -0.3, 0.9, -2.5], dtype=kind)
    far = np.array([-40.0, -300.0, 30.0, -1e4], dtype=kind)
    if kind is complex:
        small, far = small + 1j * np.array([0, 1e-12, 0, 1e-4, 0.5, -1, 1]), far + 20j
    for k, got in zip((1, 2, 3), phi_functions(jnp.asarray(small)), strict=True):
        np.testing.assert_allclose(got, _series(k, small), rtol=1e-13)
    for k, got in zip((1, 2, 3), phi_functions(jnp.asarray(far)), strict=True):
        np.testing.assert_allclose(got, phi_direct(k, jnp.asarray(far)), rtol=1e-12)
    assert phi_functions(jnp.asarray([-1.0]))[0].dtype == jnp.float64  # real in, real out
    for k, got in zip((1, 2, 3), phi_functions(jnp.asarray(small), points=33), strict=True):
        np.testing.assert_allclose(got, _series(k, small), rtol=1e-13)  # an odd circle


def test_the_direct_formula_is_what_the_contour_avoids():
    """At ``z = 1e-7`` the recurrence loses digits; the contour mean keeps them."""
    exact = _series(3, 1e-7)
    assert abs(float(phi_direct(3, jnp.asarray(1e-7))) - exact) > 1e-3
    assert abs(float(phi_functions(jnp.asarray([1e-7]))[2][0]) - exact) < 1e-14


@pytest.mark.parametrize("stepper", [ETDRK2, ETDRK4])
def test_linear_problems_are_exact_to_rounding(stepper):
    """Fourier modes of ``u_t = u_xx`` decay as ``exp(-k^2 t)`` even at huge ``k^2 dt``."""
    k = jnp.arange(0.0, 40.0)
    u0 = jnp.ones_like(k) + 0j
    s = stepper(-(k**2), 0.5)
    u = u0
    for i in range(4):
        u = s.step(lambda t, v: jnp.zeros_like(v), 0.5 * i, u)
    np.testing.assert_allclose(u, jnp.exp(-(k**2) * 2.0), atol=1e-15, rtol=1e-13)


def _bernoulli_error(stepper, n):
    """``u' = L u + u^2`` from ``u0`` to ``t = 1`` against its closed form."""
    lam = jnp.array([-1.0, -20.0, 0.5])
    u0 = jnp.array([0.5, 0.5, 0.3])
    s, u = stepper(lam, 1.0 / n), u0
    for i in range(n):
        u = s.step(lambda t, v: v * v, i / n, u)
    exact = 1 / ((1 / u0 + 1 / lam) * jnp.exp(-lam) - 1 / lam)
    return float(jnp.max(jnp.abs(u - exact)))


@pytest.mark.parametrize("stepper", [ETDRK2, ETDRK4])
def test_order_on_a_nonlinear_problem_with_a_closed_form(stepper):
    errors = [_bernoulli_error(stepper, n) for n in (16, 32, 64)]
    orders = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    np.testing.assert_allclose(orders, stepper.order, atol=0.15)


@pytest.fixture(scope="module")
def ks():
    return KuramotoSivashinsky(grid=Grid(((0.0, 32 * np.pi),), (64,)))


def test_etdrk4_is_fourth_order_on_kuramoto_sivashinsky(ks):
    reference = simulate_fields(ks, 4.0, dt=1 / 256, frames=2)["u"][-1]
    errors = [float(jnp.max(jnp.abs(simulate_fields(ks, 4.0, dt=dt, frames=2)["u"][-1]
                                    - reference))) for dt in (1 / 4, 1 / 8, 1 / 16)]
    orders = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    assert orders[-1] == pytest.approx(4.0, abs=0.25)
    assert errors[-1] < 1e-8


def test_a_field_run_keeps_frames_of_the_grid_s_shape(ks):
    run = simulate_fields(ks, 2.0, dt=0.25, frames=5, solver="etdrk2")
    assert run["u"].shape == (5, 64) and run.grid == ks.grid and run.solver == "etdrk2"
    np.testing.assert_allclose(run.ts, [0.0, 0.5, 1.0, 1.5, 2.0])
    np.testing.assert_array_equal(run["u"][0], ks.initial_fields()["u"])
    assert float(jnp.max(jnp.abs(run["u"][-1]))) < 10  # stays on the attractor's scale


@pytest.mark.parametrize("kwargs, message", [
    (dict(t1=1.0, dt=0.3, frames=2), "whole steps"),
    (dict(t1=1.0, dt=0.25, frames=4), "whole steps"),
    (dict(t1=-1.0, dt=0.25), "t1 > t0"),
    (dict(t1=1.0, dt=0.25, frames=2, solver="tsit5"), "fixed-step solvers etdrk2, etdrk4"),
    (dict(t1=1.0, dt=0.25, frames=2, solver="kvaerno5"), "fixed-step solvers"),
    (dict(t1=1.0, dt=0.25, frames=2, fields={"v": jnp.zeros(64)}), "has the fields u"),
    (dict(t1=1.0, dt=0.25, frames=2, fields={"u": jnp.zeros(32)}), "has shape"),
])
def test_bad_field_runs_are_refused_in_one_line(ks, kwargs, message):
    with pytest.raises(ValueError, match=message):
        simulate_fields(ks, **kwargs)


def test_an_ode_model_is_not_a_field_model():
    with pytest.raises(TypeError, match="field model"):
        simulate_fields(dl.models.get("van_der_pol")(), 1.0, dt=0.1)


def test_a_stepper_object_runs_and_must_match_dt(ks):
    stepper = ETDRK4(ks.linear_part(), 0.25)
    by_object = simulate_fields(ks, 1.0, dt=0.25, frames=2, solver=stepper)
    by_name = simulate_fields(ks, 1.0, dt=0.25, frames=2)
    np.testing.assert_allclose(by_object["u"], by_name["u"], atol=1e-14)
    assert by_object.solver == "etdrk4"
    with pytest.raises(ValueError, match="made for dt = 0.25"):
        simulate_fields(ks, 1.0, dt=0.5, frames=2, solver=stepper)


class _Counting(KuramotoSivashinsky):
    traces: ClassVar[list] = []

    def nonlinear_fourier(self, t, fields_hat):
        self.traces.append(t)
        return super().nonlinear_fourier(t, fields_hat)


def test_changing_dt_t0_or_the_start_compiles_nothing_new():
    model = _Counting(grid=Grid(((0.0, 32 * np.pi),), (32,)))
    simulate_fields(model, 1.0, dt=0.25, frames=2)
    traced = len(_Counting.traces)
    start = {"u": model.initial_fields()["u"] * 0.5}
    simulate_fields(model, 3.0, dt=0.5, frames=2, t0=1.0, fields=start)
    assert len(_Counting.traces) == traced > 0


class _Decay(KuramotoSivashinsky):
    """``u_t = -D k^2 u`` on the KS line: a mode decays as ``exp(-D k^2 t)``."""

    D: float = 1.0

    def linear_part(self):
        return {"u": self.D * jnp.asarray(dl.models.laplace_multiplier(self.grid))}

    def nonlinear_fourier(self, t, fields_hat):
        return {"u": jnp.zeros_like(fields_hat["u"])}


def test_the_gradient_of_a_run_with_respect_to_a_parameter_is_exact():
    """``d/dD`` of a mode's amplitude ``exp(-D q^2 t)`` is ``-q^2 t exp(-D q^2 t)``."""
    grid = Grid(((0.0, 2 * np.pi),), (16,))
    (x,) = grid.coordinates
    start = {"u": jnp.cos(2 * x)}

    def amplitude(D):
        run = simulate_fields(_Decay(grid=grid, D=D), 1.0, dt=0.25, frames=2, fields=start)
        return run["u"][-1][0]

    np.testing.assert_allclose(amplitude(0.3), np.exp(-1.2), rtol=1e-13)
    np.testing.assert_allclose(jax.grad(amplitude)(0.3), -4 * np.exp(-1.2), rtol=1e-12)


@pytest.mark.parametrize("solver", ["etdrk2", "etdrk4"])
def test_field_runs_lower_for_gpus_and_tpus(ks, solver):
    from difflab.solvers._field_runs import _run

    fields = ks.initial_fields()
    traced = jax.jit(lambda f, t0, dt: _run(ks, solver, f, t0, dt, 2, 3)).trace(
        fields, jnp.asarray(0.0), jnp.asarray(0.25))
    for platform in ("cuda", "tpu"):
        assert "callback" not in traced.lower(lowering_platforms=(platform,)).as_text()


def test_a_grid_too_big_for_memory_is_refused_before_anything_is_made():
    """Making the initial fields of 100000 x 100000 points would already take 160 GB."""
    model = dl.models.GrayScott(grid=Grid(((0, 1), (0, 1)), (100_000, 100_000)))
    with pytest.raises(ValueError, match=r"100000x100000 grid .* needs about .* fewer points"):
        simulate_fields(model, 1.0, dt=0.5, frames=2)


def test_a_nan_names_the_field_the_time_and_the_point():
    model = dl.models.GrayScott(grid=Grid(((0, 1), (0, 2)), (8, 8)))
    start = model.initial_fields()
    start["v"] = start["v"].at[3, 5].set(jnp.nan)
    with pytest.raises(dl.SimulationError,
                       match=r"field 'v' is not finite at t = 0, first at x = 0.375, "
                             r"y = 1.25 \(point \[3, 5\]\): the run diverged"):
        simulate_fields(model, 2.0, dt=1.0, frames=3, fields=start)
    kept = simulate_fields(model, 2.0, dt=1.0, frames=3, fields=start, throw=False)
    assert kept.result == dl.Result.DIVERGED
    assert simulate_fields(model, 2.0, dt=1.0, frames=3).result == dl.Result.SUCCESS


class TwoRates(dl.models.AbstractFieldModel):
    """A vector ``v`` and a scalar ``c`` (in that order: not sorted), each decaying at
    its own rate, ``c`` driven by ``v``'s first component: ``c_t = Dc lap c + a v_0``,
    ``v_t = Dv lap v``. From ``c = cos y``, ``v = (sin x, cos 2y)``: ``v_0 = e^{-Dv t}
    sin x`` and ``c = e^{-Dc t} cos y + a (e^{-Dv t} - e^{-Dc t}) / (Dc - Dv) sin x``."""

    Dc: float = 0.3
    Dv: float = 0.1
    a: float = 0.5
    grid: Grid = Grid(((0.0, 2 * np.pi),) * 2, (8, 6))
    field_names: ClassVar = ("v", "c")

    def linear_part(self):
        minus_k2 = jnp.asarray(dl.models.laplace_multiplier(self.grid))
        return {"v": self.Dv * minus_k2, "c": self.Dc * minus_k2}

    def nonlinear_part(self, t, fields):
        return {"v": jnp.zeros_like(fields["v"]), "c": self.a * fields["v"][0]}

    def initial_fields(self):
        x, y = self.grid.coordinates
        return {"v": jnp.stack([jnp.sin(x), jnp.cos(2 * y)]), "c": jnp.cos(y)}

    def exact(self, t):
        x, y = self.grid.coordinates
        decay_v, decay_c = np.exp(-self.Dv * t), np.exp(-self.Dc * t)
        return {"v": jnp.stack([decay_v * jnp.sin(x), np.exp(-4 * self.Dv * t) * jnp.cos(2 * y)]),
                "c": decay_c * jnp.cos(y)
                + self.a * (decay_v - decay_c) / (self.Dc - self.Dv) * jnp.sin(x)}


@pytest.mark.parametrize("batched", [False, True])
def test_scalar_and_vector_fields_each_keep_their_own_weights(batched, monkeypatch):
    """The stepper carries every field stacked (their transforms batched on an
    accelerator, ``batched`` here): each field must keep its own rate and its own place."""
    from difflab.models._fields import model as field_model
    from difflab.models._fields import spectral

    transform = spectral.transform_fields
    monkeypatch.setattr(field_model, "transform_fields",
                        lambda *args: transform(*args, batched=batched))
    # a grid of its own for each: a program compiled anew, with the transform patched
    model = TwoRates(grid=Grid(((0.0, 2 * np.pi),) * 2, (10 if batched else 8, 6)))
    run = simulate_fields(model, 1.0, dt=0.05, frames=3, solver="etdrk4")
    exact = model.exact(1.0)
    for name in ("v", "c"):
        assert run.final[name].shape == exact[name].shape
        np.testing.assert_allclose(run.final[name], exact[name], atol=1e-9)
