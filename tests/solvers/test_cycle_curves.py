"""Curves of folds of cycles and of period doublings in two parameters, checked against
the closed forms of the Bautin normal form's fold curve and of a period doubling on a
Mobius band."""

import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difflab as dl
from tests.models_for_tests import BautinCycles as Bautin
from tests.models_for_tests import MobiusDoubling


class CuspOfCycles(dl.Model):
    """``r' = r (a + b e - e^3)``, ``e = r^2 - 1``, ``theta' = 1``: cycles of period
    ``2 pi`` at ``a + b e - e^3 = 0`` fold where ``b = 3 e^2``, ``a = -2 e^3``, two curves
    of folds of cycles meeting at the cusp of cycles ``a = b = 0`` on the unit circle."""

    a: float = dl.param(0.0, bounds=(-5.0, 5.0))
    b: float = dl.param(0.12, bounds=(-5.0, 5.0))
    k: float = dl.param(0.0, bounds=(-5.0, 5.0))  # shifts the cusp to a = k^2
    state_names = ("x", "y")

    def vector_field(self, t, y):
        x, v = y
        e = x**2 + v**2 - 1
        g = self.a - self.k**2 + self.b * e - e**3
        return jnp.stack([g * x - v, x + g * v])

    def initial_state(self):
        return jnp.array([1.0, 0.0])


class FoldFlip(dl.Model):
    """The circle ``R = r^2`` with ``R' = 2 R (b1 + R - R^2)``, ``theta' = 1``, carries
    a plane twisted by half a turn per turn, growing at ``s - R`` along the twist: the
    cycles (``b1 = R^2 - R``, period ``2 pi``) double where ``s = R`` and fold where
    ``R = 1/2``, so the curve of period doublings ``b1 = s^2 - s`` meets the curve of
    folds of cycles at the fold-flip point ``s = 1/2``, ``b1 = -1/4``."""

    s: float = dl.param(0.6, bounds=(-5.0, 5.0))
    b1: float = dl.param(-0.21, bounds=(-5.0, 5.0))
    k: float = dl.param(0.0, bounds=(-5.0, 5.0))  # shifts the doublings to s = R + k
    state_names = ("x", "y", "u", "v")

    def vector_field(self, t, y):
        x, w, u, v = y
        r2, q2 = x**2 + w**2, u**2 + v**2
        g, c, sn = self.b1 + r2 - r2**2, x / jnp.sqrt(r2), w / jnp.sqrt(r2)
        pu, pv = (u + c * u + sn * v) / 2, (v + sn * u - c * v) / 2
        grow = self.s - self.k - r2
        return jnp.stack([g * x - w, g * w + x, -v / 2 + grow * pu - (u - pu) - q2 * u,
                          u / 2 + grow * pv - (v - pv) - q2 * v])

    def initial_state(self):
        return jnp.array([np.sqrt(0.7), 0.0, 0.0, 0.0])


def _with_slopes(locate):
    """``x -> (d/dx, value)`` of the located point's values and period, compiled once."""
    def values(x):
        point = locate(x)
        return jnp.append(point.values, point.period)

    return jax.jit(jax.jacfwd(lambda x: (values(x),) * 2, has_aux=True))


@pytest.fixture(scope="module")
def folds():
    cycles = dl.periodic_orbits(Bautin(), "b1", ([0.0, np.sqrt(0.5)], 2 * np.pi), -0.5, 0.5,
                                segments=8, max_points=12, direction=-1)
    (fold,) = cycles.special
    return dl.periodic_orbits(Bautin(), ("b1", "b2"), fold, 0.5, 1.5, segments=8,
                              steps=cycles.steps)


def test_the_fold_of_cycles_curve_is_the_bautin_normal_form_s(folds):
    b1, b2 = folds.values.T
    assert folds.kind == "fold-of-cycles" and len(b1) > 10
    assert folds.status == "left the range at 0.5; left the range at 1.5"
    assert b2.min() == pytest.approx(0.5) and b2.max() == pytest.approx(1.5)
    np.testing.assert_allclose(b1, -(b2**2) / 4, atol=1e-8)
    np.testing.assert_allclose(np.sum(folds.states**2, axis=1), b2 / 2, atol=1e-8)
    np.testing.assert_allclose(folds.maxima, np.sqrt(b2 / 2)[:, None] * [1, 1], rtol=1e-6)
    np.testing.assert_allclose(folds.periods, 2 * np.pi, rtol=1e-8)
    np.testing.assert_allclose(folds.multipliers, 1.0, atol=1e-6)  # a double multiplier 1


def test_the_curve_is_stored_and_read_back(folds, tmp_path):
    path = tmp_path / "curves.h5"
    dl.io.save(path, folds, name="folds")
    back = dl.open(path).analyses["folds"]
    assert isinstance(back, dl.CycleCurve) and back.saddles is None
    assert folds.special == () and back.special == ()  # the fold curve b1 = -b2^2/4 has no cusp
    np.testing.assert_array_equal(back.values, folds.values)
    np.testing.assert_array_equal(back.multipliers, folds.multipliers)
    np.testing.assert_array_equal(back.errors, folds.errors)
    ds = folds.to_xarray()
    assert ds.attrs["analysis"] == "cycle_curve" and "saddles" not in ds
    np.testing.assert_array_equal(ds["periods"].values, folds.periods)
    np.testing.assert_array_equal(ds["errors"].values, folds.errors)
    data = json.loads(folds.to_json())
    assert data["type"] == "fold-of-cycles" and data["params"] == ["b1", "b2"]
    assert [p["values"]["b2"] for p in data["points"]] == list(folds.values[:, 1])


@pytest.mark.exhaustive  # compiles for half a minute: run with -m exhaustive
def test_the_cusp_of_cycles_is_found_where_two_fold_curves_meet(tmp_path):
    cycles = dl.periodic_orbits(CuspOfCycles(), "a", ([1.0, 0.0], 2 * np.pi), -0.1, 0.1,
                                segments=8, steps=200, max_points=30)
    fold = cycles.special[0]
    curve = dl.periodic_orbits(CuspOfCycles(), ("a", "b"), fold, -0.1, 0.3, segments=8,
                               steps=cycles.steps)
    a, b = curve.values.T
    e = np.sum(curve.states**2, axis=1) - 1
    assert curve.status == "left the range at 0.3" and a.min() < 0 < a.max()
    np.testing.assert_allclose(a, -2 * e**3, atol=1e-7)
    np.testing.assert_allclose(b, 3 * e**2, atol=1e-6)
    (cusp,) = curve.special
    assert cusp.kind == "cusp-of-cycles"
    np.testing.assert_allclose(cusp.values, [0.0, 0.0], atol=1e-6)
    assert np.linalg.norm(cusp.state) == pytest.approx(1.0, abs=1e-6)
    dl.io.save(tmp_path / "cusp.h5", curve, name="folds")
    back = dl.open(tmp_path / "cusp.h5").analyses["folds"]
    assert [s.kind for s in back.special] == ["cusp-of-cycles"]
    np.testing.assert_array_equal(back.special[0].values, cusp.values)
    assert json.loads(curve.to_json())["special"][0]["type"] == "cusp-of-cycles"
    # located again as a function of the model: the cusp moves to a = k^2, da/dk = 2 k
    slopes, values = _with_slopes(lambda k: dl.locate(CuspOfCycles(k=k), back.special[0],
                                                      ("a", "b"), segments=8, steps=200))(0.1)
    np.testing.assert_allclose(values, [0.01, 0.0, 2 * np.pi], atol=1e-6)
    np.testing.assert_allclose(slopes, [0.2, 0.0, 0.0], atol=1e-5)


@pytest.mark.exhaustive  # compiles for half a minute: run with -m exhaustive
def test_the_fold_flip_is_found_where_the_doublings_meet_the_folds():
    cycles = dl.periodic_orbits(FoldFlip(), "s", ([np.sqrt(0.7), 0.0, 0.0, 0.0], 2 * np.pi),
                                0.6, 0.8, segments=8, steps=200)
    (doubling,) = cycles.special
    curve = dl.periodic_orbits(FoldFlip(), ("s", "b1"), doubling, -0.3, -0.2, segments=8,
                               steps=cycles.steps, ds=0.03, ds_max=0.1)
    s, b1 = curve.values.T
    assert curve.status == "left the range at -0.2" and b1.min() < -0.24
    np.testing.assert_allclose(s, np.sum(curve.states[:, :2] ** 2, axis=1), atol=1e-7)
    np.testing.assert_allclose(b1, s**2 - s, atol=1e-7)
    (flip,) = curve.special
    assert flip.kind == "fold-flip"
    np.testing.assert_allclose(flip.values, [0.5, -0.25], atol=1e-6)
    assert np.sum(flip.state[:2] ** 2) == pytest.approx(0.5, abs=1e-6)
    # located again as a function of the model: the point moves to s = 1/2 + k
    slopes, values = _with_slopes(lambda k: dl.locate(FoldFlip(k=k), flip, ("s", "b1"),
                                                      segments=8, steps=200))(0.05)
    np.testing.assert_allclose(values, [0.55, -0.25, 2 * np.pi], atol=1e-6)
    np.testing.assert_allclose(slopes, [1.0, 0.0, 0.0], atol=1e-5)


@pytest.mark.slow
def test_each_points_period_error_is_estimated_and_a_missed_tolerance_said():
    # on 48 RK4 steps per period the folds' periods (2 pi exactly) are off by about 2e-6
    cycles = dl.periodic_orbits(Bautin(), "b1", ([0.0, np.sqrt(0.5)], 2 * np.pi), -0.5, 0.5,
                                segments=8, steps=48, max_points=12, direction=-1, rtol=1.0)
    (fold,) = cycles.special
    coarse = dl.periodic_orbits(Bautin(), ("b1", "b2"), fold, 0.5, 1.5, segments=8,
                                steps=cycles.steps)
    actual = np.abs(coarse.periods / (2 * np.pi) - 1)
    assert actual.min() > 1e-6
    np.testing.assert_allclose(coarse.errors, actual, rtol=0.01)
    assert coarse.status.endswith(f"; periods to about {coarse.errors.max():.1e}, short of "
                                  f"rtol=1e-06 with 48 steps")
    assert json.loads(coarse.to_json())["points"][0]["error"] == coarse.errors[0]


@pytest.mark.slow
def test_the_period_doubling_curve_is_the_closed_form_one():
    cycles = dl.periodic_orbits(MobiusDoubling(), "s", ([1.0, 0.0, 0.0, 0.0], 2 * np.pi),
                                -0.5, 0.5, segments=8, steps=200)
    (point,) = cycles.special
    curve = dl.periodic_orbits(MobiusDoubling(), ("s", "k"), point, 0.0, 0.8, segments=8,
                               steps=cycles.steps)
    s, k = curve.values.T
    assert curve.kind == "period-doubling" and k.max() == pytest.approx(0.8)
    np.testing.assert_allclose(s, k**2, atol=1e-7)
    np.testing.assert_allclose(curve.periods, 2 * np.pi / (1 + k**2), rtol=1e-6)
    np.testing.assert_allclose(np.min(np.abs(curve.multipliers + 1), axis=1), 0, atol=1e-6)


def test_a_curve_starts_only_at_a_fold_or_doubling():
    hopf = dl.solvers.SpecialPoint(kind="hopf", value=0.0, state=np.zeros(2), frequency=1.0)
    with pytest.raises(ValueError, match="starts at a fold-of-cycles or period-doubling"):
        dl.periodic_orbits(Bautin(), ("b1", "b2"), hopf, 0.5, 1.5)
