"""Saving a lab to a session file and opening it again, Qt-free: runs, sweeps, layout."""

import numpy as np
import pytest

import difflab as dl
from difflab.app.lab import Lab
from difflab.app.session_io import open_lab, save_lab
from difflab.app.sweeps import Axis, SweepRequest, run_sweep


def test_session_round_trip_with_runs_a_sweep_and_the_layout(tmp_path):
    lab = Lab("lorenz")
    lab.set_settings(t1=2.0)
    lab.solve_now()
    lab.keep_current("base")
    lab.set_param("rho", 12.0)
    lab.solve_now()
    lab.set_layout(time_states=("z",), phase_x="x", phase_y="z", view="phase")
    request = SweepRequest(lab.model, "lorenz", (Axis("rho", 1.0, 40.0, 6),
                                                 Axis("beta", 0.5, 5.0, 4, log=True)),
                           "max", "z", lab.settings)
    chunks = []
    sweep = run_sweep(request, lambda data, chunk: chunks.append(chunk.stop))
    assert sweep.complete and chunks[-1] == 24 and sweep.grid().shape == (6, 4)
    lab.add_result("sweep", sweep)
    path = tmp_path / "session.h5"
    save_lab(lab, path)
    assert lab.path == path and not lab.dirty

    session = dl.open(path)
    assert sorted(session.runs.names()) == ["base", "current"] and session.sweeps.names() == ["sweep0"]
    assert session.sweeps[0].complete and session.app_settings["model"] == "lorenz"

    other = Lab("pendulum")
    other.set_param("g", 1.0)
    open_lab(other, path)
    assert other.model_name == "lorenz" and other.params["rho"] == 12.0
    assert other.settings.t1 == 2.0 and not other.dirty and not other.undo_stack.can_undo
    assert list(other.runs) == ["base"] and other.runs["base"].params["rho"] == 28.0
    np.testing.assert_array_equal(other.current.ys, lab.current.ys)
    assert other.layout.time_states == ("z",) and other.layout.view == "phase"
    stored = other.results["sweep"]["sweep0"]
    np.testing.assert_array_equal(stored.observable, sweep.observable)
    np.testing.assert_array_equal(stored.values, sweep.values)
    assert stored.request.axes == request.axes and stored.complete


def test_a_stopped_sweep_is_saved_as_incomplete(tmp_path):
    lab = Lab("lorenz")
    request = SweepRequest(lab.model, "lorenz", (Axis("rho", 1.0, 40.0, 64),), "final", "x",
                           lab.settings, chunk_size=16)
    data = run_sweep(request, stop=lambda: True)
    assert not data.complete and data.done == 16
    lab.add_result("sweep", data)
    save_lab(lab, tmp_path / "stopped.h5")
    assert not dl.open(tmp_path / "stopped.h5").sweeps[0].complete
    other = Lab()
    open_lab(other, tmp_path / "stopped.h5")
    back = other.results["sweep"]["sweep0"]
    assert back.done == 16 and not back.complete
    np.testing.assert_array_equal(back.observable[:16], data.observable[:16])


def test_opening_a_file_that_is_not_a_session_fails_cleanly(tmp_path):
    bad = tmp_path / "bad.h5"
    bad.write_bytes(b"not hdf5 at all")
    lab = Lab()
    lab.set_param("g", 2.0)
    with pytest.raises(dl.io.SessionFileError):
        open_lab(lab, bad)
    assert lab.params["g"] == 2.0  # the session is untouched


def test_an_equation_model_comes_back_from_its_text(tmp_path):
    spring = dl.models.from_equations("name: Spring\nparams: k = 1.0 in (0, 10)\n"
                                      "init: x = 1, v = 0\ndx/dt = v\ndv/dt = -k*x\n")
    lab = Lab()
    lab.add_user_model(spring)
    lab.select_model("Spring")
    lab.set_param("k", 4.0)
    lab.solve_now()
    lab.keep_current("stiff")
    save_lab(lab, tmp_path / "spring.h5")
    other = Lab()
    open_lab(other, tmp_path / "spring.h5")
    assert other.model_name == "Spring" and other.params["k"] == 4.0
    assert "Spring" in other.catalog()["user"] and list(other.runs) == ["stiff"]
    np.testing.assert_allclose(other.runs["stiff"]["x"], np.cos(2.0 * other.runs["stiff"].ts),
                               atol=1e-6)
    other.solve_now()  # the rebuilt class simulates like the original
    np.testing.assert_array_equal(other.current.ys, lab.current.ys)
