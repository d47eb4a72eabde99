"""A run's events through a session file: read back by DiffLab equal, and by h5py as stored."""

import h5py
import numpy as np

import difflab as dl
from tests.models_for_tests import Spring


def test_a_runs_events_are_stored_and_read_back_equal(tmp_path):
    path = tmp_path / "events.h5"
    events = (dl.Event("x", name="x0"), dl.Event("v", direction=1, terminal=True, name="stop"))
    run = dl.simulate(Spring(c=0.0), 5.0, dt=1e-2, n_save=51, events=events)  # v = -sin t
    assert run.events.stopped == "stop" and run.events.count == 2
    dl.io.save(path, run, name="osc")
    back = dl.open(path).runs["osc"]
    for field in ("ts", "ys", "which", "found", "stopped_by"):
        np.testing.assert_array_equal(np.asarray(getattr(back.events, field)),
                                      np.asarray(getattr(run.events, field)))
    for field in ("names", "directions", "terminal", "capacity"):
        assert getattr(back.events, field) == getattr(run.events, field)
    np.testing.assert_array_equal(np.asarray(back.ys), np.asarray(run.ys))  # NaN after the stop
    assert back.ok and back.message.startswith("success (stopped by event 'stop'")
    with h5py.File(path, "r") as f:
        group = f["runs/osc"]
        np.testing.assert_allclose(group["event_time"][()], [np.pi / 2, np.pi], atol=1e-9)
        assert list(group["event_which"][()]) == [0, 1] and group["event_y"].shape == (2, 2)
        assert group.attrs["event_stopped_by"] == 1 and group.attrs["result"] == 0


def test_a_run_without_events_has_none_in_the_file(tmp_path):
    path = tmp_path / "plain.h5"
    dl.io.save(path, dl.simulate(Spring(), 1.0, dt=1e-2, n_save=11), name="plain")
    assert dl.open(path).runs["plain"].events is None
    with h5py.File(path, "r") as f:
        assert "event_time" not in f["runs/plain"] and "event_names" not in f["runs/plain"].attrs
