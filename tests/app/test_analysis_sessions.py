"""The lab keeps a computed bifurcation diagram; saving a session stores its branches (of
equilibria and of periodic orbits) under ``/analyses`` and opening it again restores the
diagram, Qt-free."""

import h5py
import jax.numpy as jnp
import numpy as np
import pytest

import difflab as dl
from difflab.app.bifurcation import BifurcationRequest, run_continuation
from difflab.app.lab import Lab
from difflab.app.session_io import DIAGRAM, kept_diagram, open_lab, save_lab


@pytest.fixture(scope="module")
def diagram():
    """Lorenz from rho = 0 to 2: the origin with its branch point at 1, and C+- through it."""
    return run_continuation(BifurcationRequest(dl.models.get("lorenz")(), "lorenz", "rho",
                                               0.0, 2.0))


def test_a_saved_diagram_is_restored_on_open(diagram, tmp_path):
    lab = Lab("lorenz")
    lab.set_analyses(DIAGRAM, diagram.branches)
    assert lab.dirty and kept_diagram(lab).branches == diagram.branches
    path = tmp_path / "session.h5"
    save_lab(lab, path)
    n = len(diagram.branches)
    assert n == 2 and dl.open(path).analyses.names() == [f"bifurcation_{i}" for i in range(n)]

    other = Lab("pendulum")
    open_lab(other, path)
    back = kept_diagram(other)
    assert other.model_name == "lorenz" and not other.dirty and back is not None
    assert (back.request.param, back.request.start, back.request.stop) == ("rho", 0.0, 2.0)
    assert back.labels("x") == diagram.labels("x")  # the branch point at rho = 1
    assert back.labels("x")[0][0] == "BP" and back.labels("x")[0][1] == pytest.approx(1.0)
    for a, b in zip(diagram.branches, back.branches):
        np.testing.assert_array_equal(a.states, b.states)
        np.testing.assert_array_equal(a.stable, b.stable)
    assert [p.stable for p in back.pieces()] == [p.stable for p in diagram.pieces()]

    other.select_model("pendulum")  # a diagram is shown for its own model only
    assert kept_diagram(other) is None


def test_a_new_diagram_replaces_the_old_one_in_the_file(diagram, tmp_path):
    lab = Lab("lorenz")
    lab.set_analyses(DIAGRAM, diagram.branches)
    path = tmp_path / "session.h5"
    save_lab(lab, path)
    lab.set_analyses(DIAGRAM, diagram.branches[:1])
    save_lab(lab, path)
    assert dl.open(path).analyses.names() == ["bifurcation_0"]
    lab.delete("analysis", "bifurcation_0")
    save_lab(lab, path)
    assert dl.open(path).analyses.names() == []


def test_a_diagram_named_as_in_older_files_opens_and_is_replaced(diagram, tmp_path):
    lab = Lab("lorenz")
    lab.set_analyses(DIAGRAM, diagram.branches)
    path = tmp_path / "session.h5"
    save_lab(lab, path)
    with h5py.File(path, "a") as f:  # older files named the branches bifurcation.<i>
        for i in range(2):
            f.move(f"analyses/bifurcation_{i}", f"analyses/bifurcation.{i}")
    other = Lab()
    open_lab(other, path)
    back = kept_diagram(other)
    assert back is not None and len(back.branches) == 2
    np.testing.assert_array_equal(back.branches[1].values, diagram.branches[1].values)
    other.set_analyses(DIAGRAM, diagram.branches[:1])
    save_lab(other, path)
    assert dl.open(path).analyses.names() == ["bifurcation_0"]


def test_analyses_added_by_the_command_line_stay_in_the_file(diagram, tmp_path):
    path = tmp_path / "session.h5"
    spectrum = dl.lyapunov(dl.models.get("lorenz")(), 1.0)
    dl.io.save(path, spectrum, name="spectrum")
    lab = Lab()
    open_lab(lab, path)
    assert list(lab.results["analysis"]) == ["spectrum"] and kept_diagram(lab) is None
    lab.set_analyses(DIAGRAM, diagram.branches)
    save_lab(lab, path)
    session = dl.open(path)
    assert session.analyses.names() == ["spectrum", "bifurcation_0", "bifurcation_1"]
    np.testing.assert_array_equal(session.analyses["spectrum"].exponents, spectrum.exponents)


def test_a_result_no_file_stores_yet_does_not_stop_the_save(diagram, tmp_path):
    lab = Lab("lorenz")
    point = diagram.branches[0].special[0]  # a SpecialPoint alone is no stored analysis
    lab.set_analyses(DIAGRAM, (diagram.branches[0], point))
    save_lab(lab, tmp_path / "session.h5")
    assert dl.open(tmp_path / "session.h5").analyses.names() == ["bifurcation_0"]
    warning = "analysis 'bifurcation_1' is not saved: cannot save a SpecialPoint"
    assert any(level == "warning" and text.startswith(warning) for level, text in lab.messages)


class Bautin(dl.Model):
    """``r' = r (mu + r^2 - r^4)``, ``theta' = 1``: a subcritical Hopf point at mu = 0 and
    a fold of cycles at mu = -1/4, r^2 = 1/2."""

    mu: float = dl.param(-0.5, bounds=(-1.0, 1.0))
    state_names = ("x", "y")

    def vector_field(self, t, y):
        r2 = y[0] ** 2 + y[1] ** 2
        g = self.mu + r2 - r2**2
        return jnp.stack([g * y[0] - y[1], y[0] + g * y[1]])

    def initial_state(self):
        return jnp.array([0.0, 0.0])


def _bautin_lab() -> Lab:
    lab = Lab()
    lab.add_user_model(Bautin)
    lab.select_model("Bautin")
    return lab


def test_the_periodic_orbits_of_a_diagram_come_back_with_it(tmp_path):
    diagram = run_continuation(BifurcationRequest(Bautin(), "Bautin", "mu", -0.5, 0.5))
    (orbits,) = diagram.cycles
    assert [p.kind for p in orbits.special] == ["fold-of-cycles"]
    assert orbits.special[0].value == pytest.approx(-0.25, abs=1e-6)
    lab = _bautin_lab()
    lab.set_analyses(DIAGRAM, diagram.results)
    path = tmp_path / "session.h5"
    save_lab(lab, path)
    assert dl.open(path).analyses.names() == ["bifurcation_0", "bifurcation_1"]

    other = _bautin_lab()
    open_lab(other, path)
    back = kept_diagram(other)
    assert back is not None and back.request.cycles and len(back.cycles) == 1
    assert isinstance(back.cycles[0].model, Bautin)  # the loaded class: orbits rerun
    np.testing.assert_array_equal(back.cycles[0].maxima, orbits.maxima)
    assert back.labels("x") == diagram.labels("x")  # H, and LPC at mu = -1/4
    assert [(p.stable, len(p.values)) for p in back.cycle_pieces()] == [
        (p.stable, len(p.values)) for p in diagram.cycle_pieces()]
