"""The bifurcation diagram's app model, without Qt: branches of equilibria and of periodic
orbits, pieces, labels, clicks."""

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


class Bautin(dl.Model):
    """``r' = r (mu + r^2 - r^4)``, ``theta' = 1``: a subcritical Hopf point at ``mu = 0``,
    unstable cycles back to a fold of cycles at ``mu = -1/4``, ``r^2 = 1/2``, stable ones
    beyond it: ``mu = r^4 - r^2``."""

    mu: float = -0.5
    state_names = ("x", "y")

    def vector_field(self, t, y):
        r2 = y[0] ** 2 + y[1] ** 2
        g = self.mu + r2 - r2**2
        return jnp.stack([g * y[0] - y[1], y[0] + g * y[1]])

    def initial_state(self):
        return jnp.array([0.0, 0.0])


def test_the_bautin_diagram_has_its_cycles_and_their_fold():
    diagram = run_continuation(BifurcationRequest(Bautin(), "bautin", "mu", -0.5, 0.5))
    (hopf, fold) = diagram.labels("x")
    assert hopf[0] == "H" and abs(hopf[1]) < 1e-9 and hopf[2] == 0.0
    assert fold[0] == "LPC" and fold[1] == pytest.approx(-0.25, abs=1e-6)
    assert fold[2] == pytest.approx(np.sqrt(0.5), abs=1e-6)  # at the orbit's greatest x
    (small, big) = diagram.cycle_pieces()  # cut at the fold of cycles
    assert not small.stable and big.stable
    assert small.values[-1] == big.values[0] == fold[1]
    assert small.maxima[-1, 0] == big.maxima[0, 0] == fold[2]
    for piece in (small, big):
        r = piece.maxima[:, 0]
        np.testing.assert_allclose(piece.values, r**4 - r**2, atol=1e-6)
        np.testing.assert_allclose(piece.minima, -piece.maxima, atol=1e-6)
    r = np.sqrt((1 + np.sqrt(2.0)) / 2)  # the stable orbit at mu = 0.25
    assert diagram.nearest(0.25, r, "x", (1.0, 2.0)) == pytest.approx(0.25, abs=0.02)
    assert diagram.nearest(0.25, -r, "x", (1.0, 2.0)) == pytest.approx(0.25, abs=0.02)
    plain = run_continuation(BifurcationRequest(Bautin(), "bautin", "mu", -0.5, 0.5,
                                                cycles=False))
    assert plain.cycles == () and [label for label, _, _ in plain.labels("x")] == ["H"]


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


def test_lorenz_over_the_whole_slider_range_switches_at_the_pitchfork():
    """rho from 0 to 100 (the slider's range): C+ and C- are found by switching at the
    branch point (the equilibria at rho = 100 lie outside the search box), with their Hopf
    points and orbits."""
    diagram = run_continuation(BifurcationRequest(dl.models.get("lorenz")(), "lorenz", "rho",
                                                  0.0, 100.0))
    assert len(diagram.branches) == 2 and not diagram.partial
    pair = diagram.branches[1]
    beta = 8.0 / 3.0
    x = np.sqrt(beta * np.maximum(pair.values - 1.0, 0.0))
    np.testing.assert_allclose(abs(pair.states[:, 0]), x, atol=1e-6)
    assert pair.states[:, 0].max() > 16.0 and pair.states[:, 0].min() < -16.0
    hopf = sorted(round(v, 4) for label, v, _ in diagram.labels("x") if label == "H")
    assert hopf == [24.7368, 24.7368] and len(diagram.cycles) >= 1


def test_a_failed_branch_switch_leaves_a_partial_diagram_that_says_so(monkeypatch):
    real = dl.continuation

    def failing(*args, from_point=None, **kwargs):
        if from_point is not None:
            raise ValueError("no second branch found")
        return real(*args, **kwargs)

    monkeypatch.setattr(dl, "continuation", failing)
    diagram = run_continuation(BifurcationRequest(Pitchfork(), "pitchfork", "r", -1.0, 1.0,
                                                  cycles=False))
    assert diagram.partial and diagram.branches  # the first branch is kept
    assert diagram.notes[0].startswith("branch from BP at r = ")
    assert diagram.notes[0].endswith("failed: no second branch found")


def test_a_centre_all_along_a_branch_is_no_hopf_point():
    """Lotka-Volterra's coexistence equilibrium ``(gamma/delta, alpha/beta)`` is a centre
    for every alpha (eigenvalues ``±i sqrt(alpha gamma)``): its pair never crosses the
    imaginary axis, so the diagram over the slider's range has no Hopf point (rounding
    used to make dozens, each a failed search for orbits) and no cycles."""
    model = dl.models.get("lotka_volterra")()
    diagram = run_continuation(BifurcationRequest(model, "lotka_volterra", "alpha", 0.01,
                                                  10.0, state=(4.0, 3.0), other_branches=False))
    branch = diagram.branches[0]
    coexist = np.abs(branch.states[:, 0] - 4.0) < 1e-6
    assert coexist.sum() > 20 and not diagram.partial
    values = np.asarray(branch.eigenvalues)[coexist]
    np.testing.assert_allclose(np.abs(values.imag).max(axis=1),
                               np.sqrt(branch.values[coexist] * 0.4), rtol=1e-6)
    assert [p.kind for p in branch.special] == [] and diagram.cycles == ()


class Fold(dl.Model):
    """``x' = p - x^2``, ``y' = -y``: no equilibrium for ``p < 0``, ``x = ±sqrt(p)``
    beyond the fold at ``p = 0``."""

    p: float = 0.5
    state_names = ("x", "y")

    def vector_field(self, t, y):
        return jnp.stack([self.p - y[0] ** 2, -y[1]])

    def initial_state(self):
        return jnp.array([0.5, 0.0])


def test_a_range_that_starts_where_there_is_no_equilibrium_is_traced_from_its_end():
    """From p = -1 (no equilibrium there) the diagram starts at p = 1 instead and finds
    both branches and the fold between them."""
    diagram = run_continuation(BifurcationRequest(Fold(), "fold", "p", -1.0, 1.0,
                                                  other_branches=False, cycles=False))
    branch = diagram.branches[0]
    np.testing.assert_allclose(branch.states[:, 0] ** 2, branch.values, atol=1e-8)
    assert branch.states[:, 0].max() > 0.9 and branch.states[:, 0].min() < -0.9
    assert [(label, round(v, 8)) for label, v, _ in diagram.labels("x")] == [("LP", 0.0)]


def test_a_model_without_isolated_equilibria_says_what_to_try():
    """Kuramoto's phases turn together (a circle of locked states at best), so no start
    gives a branch: the error names the values tried and what to do instead."""
    request = BifurcationRequest(dl.models.get("kuramoto")(), "kuramoto", "K", 0.0, 20.0,
                                 cycles=False)
    with pytest.raises(ValueError, match=r"none at K = 0, 20, 2 either.*not isolated.*Sweep"):
        run_continuation(request)
