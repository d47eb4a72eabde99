"""App sweeps over an initial-state component (``y0.z``), Qt-free.

Lorenz started on the z axis (x = y = 0) stays there, and z decays as
``z(t) = z0 exp(-beta t)``: the analytic answer every point is checked against.
"""

import numpy as np
import pytest

import difflab as dl
from difflab.app.lab import Lab
from difflab.app.session_io import open_lab, save_lab
from difflab.app.sweeps import Axis, SweepRequest, SweepView, axis_title, run_sweep

T1 = 1.0
BETAS, STARTS = np.linspace(0.5, 3.0, 3), np.linspace(-2.0, 2.0, 5)


def _on_the_z_axis() -> Lab:
    lab = Lab("lorenz")
    lab.set_settings(t1=T1, y0=(0.0, 0.0, 1.0))
    return lab


def _request(lab: Lab, *axes: Axis) -> SweepRequest:
    return SweepRequest(lab.model, "lorenz", axes, "final", "z", lab.settings)


@pytest.fixture(scope="module")
def swept() -> SweepView:
    """final(z) over beta x z(0), from the lab's initial state (0, 0, 1)."""
    lab = _on_the_z_axis()
    return run_sweep(_request(lab, Axis("beta", 0.5, 3.0, 3), Axis("y0.z", -2.0, 2.0, 5)))


def test_final_z_over_beta_and_z0_is_the_exponential_decay(swept):
    beta, z0 = np.meshgrid(BETAS, STARTS, indexing="ij")
    np.testing.assert_allclose(swept.grid(), z0 * np.exp(-beta * T1), rtol=1e-6, atol=1e-9)
    assert swept.result.complete and swept.result.space.names == ("beta", "y0.z")


def test_a_point_names_its_parameters_and_its_whole_initial_state(swept):
    index = np.ravel_multi_index((2, 4), swept.shape)  # beta = 3, z(0) = 2
    assert swept.point(index) == {"beta": 3.0, "y0.z": 2.0}
    assert swept.parameters(index) == {"beta": 3.0}
    assert swept.initial_state(index) == {"x": 0.0, "y": 0.0, "z": 2.0}
    assert swept.describe(index) == "beta = 3, z(0) = 2"
    assert swept.nearest(2.9, 1.8) == index and axis_title("y0.z") == "z(0)"


def test_setting_a_point_sets_the_initial_state_and_undoes_as_one_step(swept):
    lab = _on_the_z_axis()
    index = np.ravel_multi_index((0, 1), swept.shape)  # beta = 0.5, z(0) = -1
    lab.set_point(swept.parameters(index), swept.initial_state(index), text="sweep point")
    assert lab.params["beta"] == 0.5 and lab.initial_state == (0.0, 0.0, -1.0)
    run = lab.solve_now()
    np.testing.assert_allclose(np.asarray(run["z"])[-1], -np.exp(-0.5 * T1), rtol=1e-6)
    assert lab.undo() == "sweep point"
    assert lab.params["beta"] == pytest.approx(8 / 3) and lab.initial_state == (0.0, 0.0, 1.0)
    lab.redo()
    assert lab.initial_state == (0.0, 0.0, -1.0)


def test_an_initial_value_alone_is_one_undoable_step():
    lab = _on_the_z_axis()
    lab.set_point({}, {"x": 0.5})
    assert lab.initial_state == (0.5, 0.0, 1.0) and lab.undo_stack.undo_text == "Set x(0) = 0.5"
    lab.undo()
    assert lab.initial_state == (0.0, 0.0, 1.0)
    with pytest.raises(ValueError, match="has no state 'q'"):
        lab.set_point({}, {"q": 1.0})


def test_an_axis_over_a_state_the_model_lacks_is_refused():
    lab = _on_the_z_axis()
    with pytest.raises(ValueError, match="no state 'q' to start from"):
        _request(lab, Axis("y0.q", 0.0, 1.0, 2))


def test_a_saved_initial_state_sweep_opens_again(swept, tmp_path):
    lab = _on_the_z_axis()
    lab.add_result("sweep", swept.result)
    path = tmp_path / "session.h5"
    save_lab(lab, path)
    assert dl.open(path).sweeps[0].space.names == ("beta", "y0.z")
    other = Lab("pendulum")
    open_lab(other, path)
    back = SweepView.of(other.results["sweep"]["sweep0"], "lorenz")
    assert back.axes == swept.axes and back.spec == "final(z)"
    np.testing.assert_array_equal(back.grid(), swept.grid())
    assert back.initial_state(7) == swept.initial_state(7)


def test_a_difflab_sweep_over_an_initial_value_opens_in_the_app(tmp_path):
    path = tmp_path / "scan.h5"
    lorenz = dl.models.get("lorenz")()
    dl.sweep(lorenz, dl.grid({"y0.z": STARTS}), T1, y0=np.array([0.0, 0.0, 1.0]),
             observables={"z_end": "final(z)"}, out=path, name="scan")
    lab = Lab()
    open_lab(lab, path)
    shown = SweepView.of(lab.results["sweep"]["scan"], "lorenz")
    assert [(a.name, a.lo, a.hi, a.n) for a in shown.axes] == [("y0.z", -2.0, 2.0, 5)]
    np.testing.assert_allclose(shown.grid(), STARTS * np.exp(-lorenz.beta * T1), rtol=1e-6)
