"""Results read back from a session go straight back into the analyses: a branch as the
model of continuation, locate and periodic_orbits, and session.analyses read by name
like a mapping. FitzHugh-Nagumo's Hopf points are known in closed form."""

import jax.numpy as jnp
import numpy as np
import pytest

import difflab as dl


def _hopf_currents(a=0.7, b=0.8, tau=12.5):
    """Where the Jacobian's trace ``1 - v^2 - b / tau`` vanishes on the equilibria
    ``w = (v + a) / b``, ``I = w - v + v^3 / 3``."""
    v = np.sqrt(1 - b / tau) * np.array([-1.0, 1.0])
    return (v + a) / b - v + v**3 / 3


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    fhn = dl.models.get("fitzhugh_nagumo")()
    branch = dl.continuation(fhn, "current", 0.0, 1.5)
    hopf = [s for s in branch.special if s.kind == "hopf"][1]
    orbits = dl.periodic_orbits(fhn, "current", hopf, 0.0, 1.5, max_points=6)
    path = tmp_path_factory.mktemp("reuse") / "session.h5"
    with dl.io.write_session(path) as writer:
        dl.io.add(writer, branch, name="branch")
        dl.io.add(writer, orbits, name="orbits")
    return dl.open(path), branch, orbits


def test_analyses_read_like_a_mapping(session):
    back, branch, _ = session
    analyses = back.analyses
    assert analyses.keys() == ["branch", "orbits"] and len(analyses) == 2
    assert "branch" in analyses and "nope" not in analyses
    assert analyses["orbits"] in analyses and branch not in analyses
    names, results = zip(*analyses.items())
    assert names == ("branch", "orbits") and results[0] is analyses["branch"]
    assert analyses.get("nope") is None and analyses.get("branch") is results[0]
    assert isinstance(results[1], dl.PeriodicOrbits)


def test_a_branch_read_back_is_continued_located_and_followed(session):
    back, _, orbits = session
    branch = back.analyses["branch"]
    again = dl.continuation(branch, "current", 0.0, 1.5)
    hopf = [s for s in again.special if s.kind == "hopf"]
    np.testing.assert_allclose([s.value for s in hopf], _hopf_currents(), atol=1e-9)
    stored = [s for s in branch.special if s.kind == "hopf"]
    located = [dl.locate(branch, s, "current") for s in stored]
    np.testing.assert_allclose([float(s.value) for s in located], _hopf_currents(), atol=1e-11)
    followed = dl.periodic_orbits(back.analyses["orbits"], "current", stored[1], 0.0, 1.5,
                                  max_points=6)
    np.testing.assert_allclose(followed.periods, orbits.periods, rtol=1e-9)
    np.testing.assert_allclose(followed.values, orbits.values, atol=1e-12)


class Cubic(dl.Model):
    """``x' = r + x^2``: equilibria ``x = +-sqrt(-r)``; a user model, never run from a file."""

    r: float = dl.param(-1.0, bounds=(-2.0, 2.0))
    state_names = ("x",)

    def vector_field(self, t, y):
        return jnp.stack([self.r + y[0] ** 2])

    def initial_state(self):
        return jnp.array([-1.0])


def test_a_user_models_branch_says_why_it_cannot_be_continued(tmp_path):
    path = tmp_path / "user.h5"
    with dl.io.write_session(path) as writer:
        dl.io.add(writer, dl.continuation(Cubic(), "r", -1.0, -0.5), name="branch")
    branch = dl.open(path).analyses["branch"]
    with pytest.raises(ValueError, match=r"Continuation's model Cubic is a user model.*"
                       r"result.model.build\(model=Cubic\(\)\)") as error:
        dl.continuation(branch, "r", -1.0, -0.5)
    assert "\n" not in str(error.value)
    with pytest.raises(TypeError, match="expected a model"):
        dl.continuation(3.0, "r", -1.0, -0.5)
