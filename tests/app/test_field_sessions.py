"""The field view's session in session files, Qt-free: its run and view come back on
reopening, the file's other objects stay as they were, a save writes the run only when
it changed, and a field run saved from Python opens into it."""

import h5py
import numpy as np
import pytest
import xarray as xr

import difflab as dl
from difflab.app.fields import FIELD_RUN, FieldSession, stream_frames
from difflab.app.lab import Lab
from difflab.app.session_io import open_lab, plan_save, save_lab

POINTS = 8


def run_to_end(session: FieldSession, start: int = 0) -> None:
    for chunk in stream_frames(session.run_request(start)):
        session.accept(chunk)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A lab with a kept run and a run of 2-D diffusion on 8 x 8, painted, shown its
    own way, saved; returns (lab, session, path)."""
    path = tmp_path_factory.mktemp("fields") / "session.h5"
    lab = Lab("lotka_volterra")
    lab.set_settings(t1=1.0)
    lab.solve_now()
    lab.keep_current("kept")
    session = FieldSession(lab, "diffusion", POINTS)
    session.set_param("D", 0.02)
    session.t1, session.n_frames = 0.5, 6
    run_to_end(session)
    session.paint(2, "u", (0.5, 0.5), 0.1, 3.0)
    run_to_end(session, 2)  # on from the painted frame
    session.set_view(maps={"u": "inferno"}, held_levels={"u": (-1.0, 3.0)})
    save_lab(lab, path)
    return lab, session, path


def test_the_field_run_and_its_view_come_back_on_reopening(saved):
    _, session, path = saved
    reopened = Lab()
    open_lab(reopened, path)
    back = reopened.field_session
    assert back is not session and back.model_name == "diffusion"
    assert back.grid.points == (POINTS, POINTS) and back.params == {"D": 0.02}
    assert (back.t1, back.n_frames, back.dt) == (0.5, 6, session.dt)
    assert back.maps == {"u": "inferno"} and back.held_levels == {"u": (-1.0, 3.0)}
    assert back.shown == ("u",) and back.ts == session.ts and len(back.frames) == 6
    for mine, theirs in zip(session.frames, back.frames, strict=True):
        assert mine["u"].tobytes() == theirs["u"].tobytes()
    assert back.frames[2]["u"].max() == 3.0  # the painted frame
    assert not back.unsaved and not reopened.dirty
    assert "kept" in reopened.runs and reopened.model_name == "lotka_volterra"


def test_the_saved_field_run_is_a_cf_variable_over_time_x_y(saved):
    _, session, path = saved
    for engine in ("h5netcdf", "netcdf4"):
        with xr.open_dataset(path, group=f"runs/{FIELD_RUN}", engine=engine) as data:
            assert data["u"].dims == ("time", "x", "y")
            np.testing.assert_array_equal(data["time"], session.ts)
            np.testing.assert_array_equal(data["x"], session.grid.axis_coordinates(0))
            np.testing.assert_array_equal(data["u"][-1], session.frames[-1]["u"])


def test_a_save_writes_the_field_run_only_when_it_changed(saved, tmp_path):
    _, _, path = saved
    copy = tmp_path / "copy.h5"
    copy.write_bytes(path.read_bytes())
    lab = Lab()
    open_lab(lab, copy)
    fields = lab.field_session
    lab.set_param(next(iter(lab.params)), 0.7)  # a change elsewhere in the lab
    assert ("run", FIELD_RUN) not in plan_save(lab, copy).objects
    fields.set_view(shown=("u",), maps={"u": None}, arrows=True)  # the view only: no frames
    assert ("run", FIELD_RUN) not in plan_save(lab, copy).objects
    with h5py.File(copy, "r") as f:
        before = f[f"runs/{FIELD_RUN}/u"][()]
        kept = f["runs/kept/y"][()]
    save_lab(lab, copy)
    assert dl.open(copy).app_settings["fields"]["maps"] == {}
    assert dl.open(copy).app_settings["fields"]["arrows"] is True
    fields.paint(0, "u", (0.25, 0.25), 0.1, -2.0)
    assert fields.unsaved and lab.dirty
    plan = plan_save(lab, copy)
    assert ("run", FIELD_RUN) in plan.objects and ("run", "kept") not in plan.objects
    save_lab(lab, copy)
    assert not fields.unsaved
    with h5py.File(copy, "r") as f:
        after = f[f"runs/{FIELD_RUN}/u"][()]
        assert f["runs/kept/y"][()].tobytes() == kept.tobytes()
    assert after.shape[0] == 1 and after[0].min() == -2.0  # painted frame 0, the rest dropped
    assert before.shape[0] == 6


def test_a_field_run_saved_from_python_opens_in_the_field_session(tmp_path):
    model = dl.models.get("diffusion")(D=0.1).with_points((POINTS,))
    path = tmp_path / "heat.h5"
    run = dl.simulate(model, 1.0, n_save=3)
    dl.io.save_fields(path, run, model, name="heat")
    lab = Lab("lorenz")
    open_lab(lab, path)
    fields = lab.field_session
    assert fields.model_name == "diffusion" and fields.grid.ndim == 1
    assert fields.params == {"D": 0.1} and fields.run_name == "heat"
    np.testing.assert_array_equal(fields.frames[-1]["u"], np.asarray(run["u"][-1]))
    save_lab(lab, path)  # unchanged: the file keeps it as it is, under its name
    assert dl.open(path).runs.names() == ["heat"]
    assert dl.open(path).app_settings["fields"]["run"] == "heat"


def test_another_file_opened_starts_the_field_view_afresh(saved, tmp_path):
    _, session, _ = saved
    other = tmp_path / "other.h5"
    lab = Lab("lorenz")
    lab.set_settings(t1=1.0)
    lab.solve_now()
    save_lab(lab, other)
    painted = FieldSession(lab, "diffusion", POINTS)
    painted.paint(0, "u", (0.5, 0.5), 0.1, 3.0)
    open_lab(lab, other)  # the painted field is not the other file's
    assert lab.field_session is painted and not painted.unsaved and len(painted.frames) == 1
    initial = dl.models.get("diffusion")().with_points((POINTS, POINTS)).initial_fields()
    np.testing.assert_array_equal(painted.frames[0]["u"], initial["u"])
    save_lab(lab, other)
    with h5py.File(other, "r") as f:
        assert FIELD_RUN not in f["runs"]
