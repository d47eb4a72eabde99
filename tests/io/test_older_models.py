"""A file written when a built-in model had other settings (``heat1d`` was a 50-state ODE
with a static ``n`` before it became a field model) still opens: its results read back,
and only rebuilding its model is refused, in one line."""

import h5py
import numpy as np
import pytest

import difflab as dl
from difflab.app.lab import Lab
from difflab.app.session_io import open_lab

from tests.models_for_tests import Rod


@pytest.fixture(scope="module")
def older_heat1d_file(tmp_path_factory):
    """A run of the old method-of-lines ``heat1d`` (here ``Rod``, its former code), its
    model entry made the built-in ``heat1d`` as an earlier DiffLab wrote it."""
    path = tmp_path_factory.mktemp("older") / "older.h5"
    traj = dl.simulate(Rod(n=7), 0.1, dt=1e-3)
    dl.io.save(path, traj, name="old")
    with h5py.File(path, "a") as f:
        (entry,) = f["models"].values()
        entry.attrs.update(origin="builtin", name="heat1d", class_name="Heat1D")
    return path, traj


def test_its_results_read_back_and_rebuilding_its_model_says_why_not(older_heat1d_file):
    path, traj = older_heat1d_file
    session = dl.open(path)
    np.testing.assert_array_equal(session.runs["old"].ys, traj.ys)
    (record,) = session.models.values()
    with pytest.raises(ValueError, match="heat1d has no setting 'n' any more"):
        record.build()


def test_a_count_of_a_setting_it_no_longer_has_is_still_bounded(older_heat1d_file, tmp_path):
    path = tmp_path / "huge.h5"
    path.write_bytes(older_heat1d_file[0].read_bytes())
    with h5py.File(path, "a") as f:
        (entry,) = f["models"].values()
        entry.attrs["static_n"] = np.int64(10**15)
    with pytest.raises(dl.io.SessionFileError, match="static_n .* out of range"):
        dl.open(path)


def test_the_lab_opens_it_and_keeps_its_run(older_heat1d_file):
    path, traj = older_heat1d_file
    lab = Lab()
    open_lab(lab, path)
    assert "old" in lab.runs
    np.testing.assert_array_equal(lab.runs["old"].ys, traj.ys)
    assert any("heat1d has no setting 'n' any more" in text for _, text in lab.messages)
