"""A run's accepted and rejected steps and a per-state atol, through a session file."""

import h5py
import jax.numpy as jnp
import numpy as np

import difflab as dl
from tests.models_for_tests import Decay, VanDerPol


def test_accepted_and_rejected_steps_are_stored_and_read_back(tmp_path):
    path = tmp_path / "runs.h5"
    adaptive = dl.simulate(VanDerPol(eps=1e-3), 1.0, solver="tsit5", dt=1e-3, n_save=11)
    fixed = dl.simulate(Decay(), 1.0, dt=1e-2, n_save=11)
    assert int(adaptive.rejected_steps) > 0
    dl.io.save(path, adaptive, name="adaptive")
    dl.io.save(path, fixed, name="fixed")
    with h5py.File(path, "r") as f:
        attrs = f["runs/adaptive"].attrs
        assert (attrs["accepted_steps"], attrs["rejected_steps"], attrs["steps"]) == (
            int(adaptive.accepted_steps), int(adaptive.rejected_steps), int(adaptive.steps))
        assert attrs["steps"] == attrs["accepted_steps"] + attrs["rejected_steps"]
    session = dl.open(path)
    for name, traj in (("adaptive", adaptive), ("fixed", fixed)):
        back = session.runs[name]
        assert int(back.accepted_steps) == int(traj.accepted_steps)
        assert int(back.rejected_steps) == int(traj.rejected_steps)
    assert int(session.runs["fixed"].rejected_steps) == 0


def test_a_file_without_the_counts_reads_them_as_unknown(tmp_path):
    path = tmp_path / "older.h5"
    dl.io.save(path, dl.simulate(Decay(), 1.0, dt=1e-2, n_save=11), name="run")
    with h5py.File(path, "r+") as f:  # as files written before the counts were
        del f["runs/run"].attrs["accepted_steps"], f["runs/run"].attrs["rejected_steps"]
    run = dl.open(path).runs["run"]
    assert run.accepted_steps is None and run.rejected_steps is None and int(run.steps) == 100


def test_a_per_state_atol_is_stored_as_an_array_and_reruns_the_same(tmp_path):
    path = tmp_path / "atol.h5"
    traj = dl.simulate(VanDerPol(eps=1e-3), 0.5, solver="kvaerno5", n_save=6,
                       atol=jnp.array([1e-8, 1e-10]))
    dl.io.save(path, traj, name="run")
    with h5py.File(path, "r") as f:
        np.testing.assert_array_equal(f["runs/run"].attrs["atol"], [1e-8, 1e-10])
    back = dl.open(path).runs["run"]
    assert back.settings.atol == (1e-8, 1e-10) == traj.settings.atol
    np.testing.assert_array_equal(back.rerun(VanDerPol(eps=1e-3)).ys, traj.ys)
