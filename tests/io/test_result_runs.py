"""The run a fit or a sensitivity brings has one name, ``<owner>_run``, however it is
saved: ``dl.io.save`` from Python, or ``dl.io.save_run(..., fit=)`` as ``difflab fit
--out`` does (its own test in tests/cli/test_fit_cli.py)."""

import h5py
import numpy as np
import pytest

import difflab as dl
from tests.models_for_tests import Decay


@pytest.fixture(scope="module")
def fit():
    truth = dl.simulate(Decay(rate=0.7), 1.0, n_save=6, dt=0.05, solver="rk4")
    data = dl.io.Observations(np.asarray(truth.ts), np.asarray(truth.ys), truth.state_names)
    return dl.fit(Decay(), data, ["rate"], fit_max_steps=5, dt=0.05, solver="rk4", throw=False)


def test_python_names_the_run_of_a_fit_and_of_a_sensitivity_after_it(tmp_path, fit):
    path = tmp_path / "saved.h5"
    dl.io.save(path, fit)
    dl.io.save(path, dl.sensitivity(Decay(), 0.5, params=["rate"], dt=0.05, n_save=3))
    with h5py.File(path, "r") as f:
        assert list(f["runs"]) == ["fit0_run", "sensitivity0_run"]
        assert f["fits/fit0"].attrs["run"] == b"fit0_run"
        assert f["sensitivities/sensitivity0"].attrs["run"] == b"sensitivity0_run"
    np.testing.assert_array_equal(dl.open(path).runs["fit0_run"].ys, np.asarray(fit.run.ys))


def test_a_streamed_fit_names_its_run_by_the_same_rule(tmp_path, fit):
    path = tmp_path / "streamed.h5"
    with dl.io.stream_session(path) as s:  # as the CLI writes a fit, then its run
        w = s.new_fit(model=fit.start_model, parameter_names=fit.names, name="decay")
        w.finish_with(fit)
    assert dl.io.save_run(path, fit.run, fit="decay") == "decay_run"
    with h5py.File(path, "r") as f:
        assert list(f["runs"]) == ["decay_run"] and f["fits/decay"].attrs["run"] == b"decay_run"
