"""Curves of folds of cycles and of period doublings in two parameters, checked against
the closed forms of the Bautin normal form's fold curve and of a period doubling on a
Mobius band."""

import json

import jax.numpy as jnp
import numpy as np
import pytest

import difflab as dl


class Bautin(dl.Model):
    """``r' = r (b1 + b2 r^2 - r^4)``, ``theta' = 1`` (Kuznetsov's normal form with
    ``s = -1``): cycles at ``b1 + b2 R - R^2 = 0`` (``R = r^2``) fold where
    ``R = b2 / 2``, on the curve ``b1 = -b2^2 / 4`` (``b2 > 0``), with period ``2 pi``
    and a double multiplier 1."""

    b1: float = dl.param(-0.2, bounds=(-5.0, 5.0))
    b2: float = dl.param(1.0, bounds=(-5.0, 5.0))
    state_names = ("x", "y")

    def vector_field(self, t, y):
        x, v = y
        r2 = x**2 + v**2
        g = self.b1 + self.b2 * r2 - r2**2
        return jnp.stack([g * x - v, x + g * v])

    def initial_state(self):
        return jnp.array([0.0, 0.0])


class MobiusDoubling(dl.Model):
    """The unit circle turned at rate ``w = 1 + k^2`` carries a plane ``zeta`` whose
    component along ``e^{i theta / 2}`` grows at ``s - k^2`` and whose component across
    it decays at 1 (see ``test_periodic_doubling.py``): the cycle ``zeta = 0`` of period
    ``2 pi / w`` has the multiplier ``-exp(2 pi (s - k^2) / w)``, which is -1 on the
    curve ``s = k^2``."""

    s: float = dl.param(-0.5, bounds=(-5.0, 5.0))
    k: float = dl.param(0.0, bounds=(-5.0, 5.0))
    state_names = ("x", "y", "u", "v")

    def vector_field(self, t, y):
        x, w, u, v = y
        r2, q2 = x**2 + w**2, u**2 + v**2
        rate, grow = 1 + self.k**2, self.s - self.k**2
        pu, pv = (u + x * u + w * v) / 2, (v + w * u - x * v) / 2
        return jnp.stack([x * (1 - r2) - rate * w, w * (1 - r2) + rate * x,
                          -rate * v / 2 + grow * pu - (u - pu) - q2 * u,
                          rate * u / 2 + grow * pv - (v - pv) - q2 * v])

    def initial_state(self):
        return jnp.array([1.0, 0.0, 0.0, 0.0])


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
    np.testing.assert_array_equal(back.values, folds.values)
    np.testing.assert_array_equal(back.multipliers, folds.multipliers)
    ds = folds.to_xarray()
    assert ds.attrs["analysis"] == "cycle_curve" and "saddles" not in ds
    np.testing.assert_array_equal(ds["periods"].values, folds.periods)
    data = json.loads(folds.to_json())
    assert data["type"] == "fold-of-cycles" and data["params"] == ["b1", "b2"]
    assert [p["values"]["b2"] for p in data["points"]] == list(folds.values[:, 1])


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
