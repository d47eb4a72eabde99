"""Branch switching and curves of folds and Hopf points in two parameters, against the
closed forms of normal forms and of the Brusselator at every point; cusp, Bogdanov-Takens
and Bautin points located to 1e-6."""

import json

import jax.numpy as jnp
import numpy as np
import pytest

import difflab as dl
from tests.models_for_tests import BautinCycles


class Cusp(dl.Model):
    """``x' = a + b x - x^3``: folds on ``27 a^2 = 4 b^3``, a cusp at the origin."""

    a: float = dl.param(0.0, bounds=(-5.0, 5.0))
    b: float = dl.param(1.0, bounds=(-5.0, 5.0))
    state_names = ("x",)

    def vector_field(self, t, y):
        return self.a + self.b * y - y**3

    def initial_state(self):
        return jnp.array([-1.3])


class Transcritical(dl.Model):
    """``x' = p x - x^2``: the branches ``x = 0`` and ``x = p`` cross at ``p = 0``."""

    p: float = dl.param(-1.0, bounds=(-5.0, 5.0))
    state_names = ("x",)

    def vector_field(self, t, y):
        return self.p * y - y**2

    def initial_state(self):
        return jnp.array([0.0])


class Pitchfork(dl.Model):
    """``x' = p x - x^3``: the branch ``x^2 = p`` leaves ``x = 0`` at ``p = 0``."""

    p: float = dl.param(-1.0, bounds=(-5.0, 5.0))
    state_names = ("x",)

    def vector_field(self, t, y):
        return self.p * y - y**3

    def initial_state(self):
        return jnp.array([0.0])


class Brusselator(dl.Model):
    """Hopf points on ``b = 1 + a^2`` with frequency ``a``, all supercritical."""

    a: float = dl.param(1.0, bounds=(0.0, 5.0))
    b: float = dl.param(1.0, bounds=(0.0, 10.0))
    state_names = ("x", "y")

    def vector_field(self, t, u):
        x, y = u
        return jnp.stack([self.a - (self.b + 1) * x + x**2 * y, self.b * x - x**2 * y])

    def initial_state(self):
        return jnp.array([1.0, 1.0])


def _bautin():
    """``z' = (b1 + i) z + b2 z |z|^2 - z |z|^4``: Hopf points on ``b1 = 0`` with first
    Lyapunov coefficient ``2 b2`` (see test_continuation.HopfNormalForm), a Bautin point
    at the origin."""
    return BautinCycles(b1=-1.0, b2=-1.0)


class BogdanovTakens(dl.Model):
    """``x' = y, y' = b1 + b2 x + x^2 - x y``: folds on ``4 b1 = b2^2``, Hopf points on
    ``b1 = 0, b2 < 0`` with ``omega^2 = -b2``; both curves meet at the origin."""

    b1: float = dl.param(-1.0, bounds=(-5.0, 5.0))
    b2: float = dl.param(-1.0, bounds=(-5.0, 5.0))
    state_names = ("x", "y")

    def vector_field(self, t, u):
        x, y = u
        return jnp.stack([y, self.b1 + self.b2 * x + x**2 - x * y])

    def initial_state(self):
        return jnp.array([-1.0, 0.0])


def _only(points, kind):
    found = [s for s in points if s.kind == kind]
    assert len(found) == 1, points
    return found[0]


@pytest.fixture(scope="module")
def cusp_curve():
    branch = dl.continuation(Cusp(), "a", -1.0, 1.0)  # at b = 1: folds at a = +-2 / 27^0.5
    assert [s.kind for s in branch.special] == ["fold", "fold"]
    return dl.continuation(Cusp(), ("a", "b"), -1.0, 2.0, from_point=branch.special[0])


def test_cusp_fold_curve(cusp_curve):
    a, b = cusp_curve.values.T
    np.testing.assert_allclose(27 * a**2, 4 * b**3, atol=1e-9)
    np.testing.assert_allclose(b, 3 * cusp_curve.states[:, 0] ** 2, atol=1e-9)  # F_x = 0
    assert a.min() < -1.0 and a.max() > 1.0 and b.min() < 1e-3  # both sides, through b = 0
    np.testing.assert_allclose(b[[0, -1]], [2.0, 2.0])
    cusp = _only(cusp_curve.special, "cusp")
    assert len(cusp_curve.special) == 1
    np.testing.assert_allclose([*cusp.values, *cusp.state], 0.0, atol=1e-6)
    assert cusp_curve.kind == "fold" and cusp_curve.params == ("a", "b")
    assert cusp_curve.frequency is None and cusp_curve.status == "left the range at 2"


def test_transcritical_switch():
    origin = dl.continuation(Transcritical(), "p", -1.0, 1.0)
    point = _only(origin.special, "branch")
    assert abs(point.value) < 1e-6 and abs(point.state[0]) < 1e-6
    other = dl.continuation(Transcritical(), "p", -1.0, 1.0, from_point=point)
    np.testing.assert_allclose(other.states[:, 0], other.values, atol=1e-10)
    np.testing.assert_allclose(other.values[[0, -1]], [-1.0, 1.0])
    away = np.abs(other.values) > 1e-6
    assert (other.stable[away] == (other.values[away] > 0)).all()
    assert abs(_only(other.special, "branch").value) < 1e-6
    back = dl.continuation(Transcritical(), "p", -1.0, 1.0, from_point=other.special[0])
    np.testing.assert_allclose(back.states[:, 0], 0.0, atol=1e-10)  # switched back: x = 0
    np.testing.assert_allclose(back.values[[0, -1]], [-1.0, 1.0])


def test_pitchfork_switch():
    point = _only(dl.continuation(Pitchfork(), "p", -1.0, 1.0).special, "branch")
    other = dl.continuation(Pitchfork(), "p", -1.0, 1.0, from_point=point)
    x = other.states[:, 0]
    np.testing.assert_allclose(x**2, other.values, atol=1e-10)
    np.testing.assert_allclose(x[[0, -1]], [-1.0, 1.0])  # both halves, up to p = 1
    assert other.stable.all() and other.status == "left the range at 1"


def test_brusselator_hopf_curve():
    branch = dl.continuation(Brusselator(), "b", 1.0, 3.0, state={"x": 1.0, "y": 1.0})
    hopf = _only(branch.special, "hopf")
    assert hopf.value == pytest.approx(2.0, rel=1e-9)
    curve = dl.continuation(Brusselator(), ("b", "a"), 0.5, 2.0, from_point=hopf, ds=0.05)
    b, a = curve.values.T
    np.testing.assert_allclose(b, 1 + a**2, atol=1e-10)
    np.testing.assert_allclose(curve.frequency, a, atol=1e-10)
    np.testing.assert_allclose(curve.states, np.stack([a, b / a], axis=1), atol=1e-10)
    np.testing.assert_allclose(a[[0, -1]], [0.5, 2.0])
    assert (curve.lyapunov_coefficients < 0).all() and curve.special == ()


def test_bautin_point():
    hopf = _only(dl.continuation(_bautin(), "b1", -1.0, 1.0).special, "hopf")
    curve = dl.continuation(_bautin(), ("b1", "b2"), -1.0, 1.0, from_point=hopf)
    b1, b2 = curve.values.T
    np.testing.assert_allclose(b1, 0.0, atol=1e-10)
    np.testing.assert_allclose(curve.frequency, 1.0, atol=1e-10)
    np.testing.assert_allclose(curve.lyapunov_coefficients, 2 * b2, atol=1e-9)
    np.testing.assert_allclose(b2[[0, -1]], [-1.0, 1.0])
    bautin = _only(curve.special, "bautin")
    np.testing.assert_allclose(bautin.values, 0.0, atol=1e-6)


def test_bogdanov_takens_point():
    branch = dl.continuation(BogdanovTakens(), "b1", -1.0, 1.0, state={"x": -1.0})
    assert [s.kind for s in branch.special] == ["hopf", "fold"]
    hopf, fold = branch.special
    folds = dl.continuation(BogdanovTakens(), ("b1", "b2"), -1.0, 1.0, from_point=fold)
    b1, b2 = folds.values.T
    np.testing.assert_allclose(4 * b1, b2**2, atol=1e-10)
    np.testing.assert_allclose(b2[[0, -1]], [-1.0, 1.0])
    assert [s.kind for s in folds.special] == ["bogdanov-takens"]
    hopfs = dl.continuation(BogdanovTakens(), ("b1", "b2"), -1.0, 1.0, from_point=hopf)
    b1, b2 = hopfs.values.T
    np.testing.assert_allclose(b1, 0.0, atol=1e-10)
    np.testing.assert_allclose(hopfs.frequency**2, -b2, atol=1e-10)
    assert "ended at a Bogdanov-Takens point" in hopfs.status and b2.max() < 1e-6
    for curve in (folds, hopfs):
        point = _only(curve.special, "bogdanov-takens")
        np.testing.assert_allclose([*point.values, *point.state], 0.0, atol=1e-6)


def test_curve_json(cusp_curve):
    data = json.loads(cusp_curve.to_json())
    assert data["type"] == "fold" and data["params"] == ["a", "b"]
    assert set(data["points"][0]) == {"values", "state"}
    assert data["points"][0]["values"] == {"a": cusp_curve.values[0, 0], "b": 2.0}
    assert data["points"][0]["state"] == {"x": cusp_curve.states[0, 0]}
    assert [s["type"] for s in data["special"]] == ["cusp"]
    assert set(data["special"][0]) == {"type", "values", "state"}


def test_bad_starts_are_value_errors():
    branch = dl.continuation(Cusp(), "a", -1.0, 1.0)
    fold = branch.special[0]
    cases = [
        (dict(param=("a", "b"), start=-1.0, stop=2.0), "fold or hopf point"),
        (dict(param=("a", "a"), start=-1.0, stop=2.0, from_point=fold), "two different"),
        (dict(param=("a", "c"), start=-1.0, stop=2.0, from_point=fold), "no parameter 'c'"),
        (dict(param=("a", "b"), start=2.0, stop=3.0, from_point=fold), "b=1 lies outside"),
        (dict(param="a", start=-1.0, stop=1.0, from_point=fold), "must be a branch point"),
        (dict(param="a", start=-1.0, stop=1.0, state={"x": 0.0}, from_point=fold),
         "not both"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ValueError, match=message):
            dl.continuation(Cusp(), **kwargs)
    with pytest.raises(ValueError, match="not an equilibrium"):
        dl.continuation(Cusp(b=2.0), ("a", "b"), -1.0, 3.0, from_point=fold)
