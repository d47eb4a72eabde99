"""Pseudo-arclength continuation: folds, branch points and Hopf points of normal forms
and of the Lorenz system, located to 1e-6 relative."""

import json

import jax.numpy as jnp
import numpy as np
import pytest

import difflab as dl


class SaddleNode(dl.Model):
    """``x' = r - x^2``: a fold at r = 0."""

    r: float = dl.param(1.0, bounds=(-5.0, 5.0))
    state_names = ("x",)

    def vector_field(self, t, y):
        return self.r - y**2

    def initial_state(self):
        return jnp.array([1.0])


class Pitchfork(dl.Model):
    """``x' = r x - x^3``: a branch point at r = 0 on the branch x = 0."""

    r: float = dl.param(-1.0, bounds=(-5.0, 5.0))
    state_names = ("x",)

    def vector_field(self, t, y):
        return self.r * y - y**3

    def initial_state(self):
        return jnp.array([0.0])


class HopfNormalForm(dl.Model):
    """``z' = (mu + i) z + a z |z|^2`` in Cartesian form (a = -1: supercritical).
    Its first Lyapunov coefficient is ``2 a``: Kuznetsov's ``<q, q> = 1`` takes
    ``x + i y = sqrt(2) w``, so that ``w' = (mu + i) w + 2 a w |w|^2``."""

    mu: float = dl.param(-1.0, bounds=(-5.0, 5.0))
    a: float = dl.param(-1.0, bounds=(-5.0, 5.0))
    state_names = ("x", "y")

    def vector_field(self, t, y):
        x, v = y
        r2 = x**2 + v**2
        return jnp.stack([self.mu * x - v + self.a * x * r2, x + self.mu * v + self.a * v * r2])

    def initial_state(self):
        return jnp.array([0.0, 0.0])


def _only(branch, kind):
    found = [s for s in branch.special if s.kind == kind]
    assert len(found) == 1, branch.special
    return found[0]


def test_saddle_node_fold():
    branch = dl.continuation(SaddleNode(), "r", 1.0, -1.0, state={"x": 1.0})
    fold = _only(branch, "fold")
    assert abs(fold.value) < 1e-9 and abs(fold.state[0]) < 1e-4
    assert [s.kind for s in branch.special] == ["fold"]
    upper = branch.states[:, 0] > 1e-3
    assert branch.stable[upper].all() and not branch.stable[branch.states[:, 0] < -1e-3].any()
    np.testing.assert_allclose(branch.states[:, 0] ** 2, branch.values, atol=1e-9)
    assert branch.values.max() <= 1.0 + 1e-12 and branch.status.startswith("left the range")


def test_pitchfork_branch_point():
    branch = dl.continuation(Pitchfork(), "r", -1.0, 1.0)
    point = _only(branch, "branch")
    assert abs(point.value) < 1e-9
    assert branch.stable[branch.values < 0].all() and not branch.stable[branch.values > 0].any()
    np.testing.assert_allclose(branch.values[[0, -1]], [-1.0, 1.0])


@pytest.mark.parametrize(("a", "kind"), [(-1.0, "supercritical"), (1.0, "subcritical")])
def test_hopf_normal_form(a, kind):
    branch = dl.continuation(HopfNormalForm(a=a), "mu", -1.0, 1.0)
    hopf = _only(branch, "hopf")
    assert abs(hopf.value) < 1e-9
    assert hopf.frequency == pytest.approx(1.0, rel=1e-9)
    assert hopf.lyapunov_coefficient == pytest.approx(2 * a, rel=1e-9)
    assert hopf.criticality == kind


@pytest.mark.slow
def test_lorenz_pitchfork_and_hopf():
    sigma, beta = 10.0, 8.0 / 3.0
    lorenz = dl.models.get("lorenz")()
    origin = dl.continuation(lorenz, "rho", 0.0, 2.0, state={"x": 0, "y": 0, "z": 0})
    assert _only(origin, "branch").value == pytest.approx(1.0, rel=1e-6)
    wing = dl.continuation(lorenz, "rho", 2.0, 30.0, state={"x": 1.4, "y": 1.4, "z": 1.0})
    hopf = _only(wing, "hopf")
    rho_h = sigma * (sigma + beta + 3) / (sigma - beta - 1)
    assert hopf.value == pytest.approx(rho_h, rel=1e-6)
    c = np.sqrt(beta * (rho_h - 1))
    np.testing.assert_allclose(hopf.state, [c, c, rho_h - 1], rtol=1e-6)
    assert hopf.criticality == "subcritical"
    np.testing.assert_allclose(wing.states[:, 2], wing.values - 1, atol=1e-8)
    assert (wing.stable == (wing.values < rho_h)).all()


def test_json_shape_and_errors():
    data = json.loads(dl.continuation(Pitchfork(), "r", -1.0, 1.0).to_json())
    assert list(data) == ["param", "points", "special"] and data["param"] == "r"
    assert set(data["points"][0]) == {"value", "state", "stable"}
    assert data["points"][0]["state"] == {"x": 0.0}
    assert data["special"] == [{"type": "branch", "value": data["special"][0]["value"],
                                "state": data["special"][0]["state"]}]
    with pytest.raises(ValueError, match="no parameter 'q'"):
        dl.continuation(Pitchfork(), "q", 0.0, 1.0)
    with pytest.raises(ValueError, match="start != stop"):
        dl.continuation(Pitchfork(), "r", 1.0, 1.0)
