"""The bifurcation diagram's app model, without Qt: branches, pieces, labels, clicks."""

import jax.numpy as jnp
import numpy as np
import pytest

import difflab as dl
from difflab.app.bifurcation import BifurcationRequest, run_continuation


class Pitchfork(dl.Model):
    """``x' = r x - x^3 + 0 y``, ``y' = -y``: a pitchfork at ``r = 0``."""

    r: float = -1.0
    state_names = ("x", "y")

    def vector_field(self, t, y):
        return jnp.stack([self.r * y[0] - y[0] ** 3, -y[1]])

    def initial_state(self):
        return jnp.array([0.1, 0.0])


@pytest.mark.slow
def test_the_pitchfork_diagram_has_its_branch_point_and_both_branches():
    diagram = run_continuation(BifurcationRequest(Pitchfork(), "pitchfork", "r", -1.0, 1.0))
    labels = diagram.labels("x")
    assert labels[0][0] == "BP"
    assert abs(labels[0][1]) < 1e-8
    assert len(diagram.branches) == 2  # the origin, then +-sqrt(r) met from r = 1
    pieces = diagram.pieces()
    origin = [p for p in pieces if np.allclose(p.states[:, 0], 0.0)]
    assert {p.stable for p in origin} == {True, False}
    stable = next(p for p in origin if p.stable)
    assert stable.values.max() == pytest.approx(0.0, abs=1e-8)  # cut at the branch point
    others = [p for p in pieces if np.any(abs(p.states[:, 0]) > 0.1)]
    assert others and all(p.stable for p in others)  # +-sqrt(r), one branch through r = 0
    x, r = np.concatenate([p.states[:, 0] for p in others]), np.concatenate(
        [p.values for p in others])
    assert x.max() > 0.9 and x.min() < -0.9
    np.testing.assert_allclose(abs(x), np.sqrt(np.maximum(r, 0.0)), atol=1e-7)
    assert diagram.nearest(0.5, np.sqrt(0.5), "x", (2.0, 2.0)) == pytest.approx(0.5, abs=0.05)


def test_requests_are_checked():
    with pytest.raises(ValueError, match="no parameter"):
        BifurcationRequest(Pitchfork(), "pitchfork", "mu", 0.0, 1.0)
    with pytest.raises(ValueError, match="two different"):
        BifurcationRequest(Pitchfork(), "pitchfork", "r", 1.0, 1.0)


@pytest.mark.slow
def test_lorenz_branch_point_and_hopf_points():
    diagram = run_continuation(BifurcationRequest(dl.models.get("lorenz")(), "lorenz", "rho",
                                                  0.0, 30.0))
    kinds = sorted((label, round(value, 6)) for label, value, _ in diagram.labels("z"))
    assert kinds == [("BP", 1.0), ("H", 24.736842), ("H", 24.736842)]
