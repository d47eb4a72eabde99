"""Observations to fit: from CSV, dicts, trajectories and HDF5; fits saved to session files."""

import h5py
import numpy as np
import pytest

import difflab as dl
from difflab.io import Observations

LV = dl.models.get("lotka_volterra")


def test_csv_with_sigma_columns_and_missing_values(tmp_path):
    path = tmp_path / "obs.csv"
    path.write_text("# lynx and hares\nt,prey,predator,sigma_prey,sigma_predator\n"
                    "0,10.1,9.9,0.5,0.4\n1,,8.0,0.5,0.4\n2,12.5,7.1,0.5,0.4\n")
    obs = dl.io.read_csv(path)
    assert obs.states == ("prey", "predator") and obs.n_values == 5
    np.testing.assert_array_equal(obs.t, [0, 1, 2])
    assert np.isnan(obs["prey"][1]) and obs.sigma[0].tolist() == [0.5, 0.4]
    only = dl.io.read_csv(path, states=["predator"])
    assert only.states == ("predator",) and only.sigma.shape == (3, 1)


def test_observations_round_trip_through_csv(tmp_path):
    traj = dl.simulate(LV(), 5.0, n_save=11)
    obs = dl.io.read_observations(traj).with_noise({"prey": 0.5, "predator": 0.2}, seed=3)
    dl.io.write_observations_csv(tmp_path / "o.csv", obs, digits=17)
    back = dl.io.read_observations(tmp_path / "o.csv")
    np.testing.assert_array_equal(back.y, obs.y)
    np.testing.assert_array_equal(back.sigma, obs.sigma)
    again = dl.io.read_observations(traj).with_noise({"prey": 0.5, "predator": 0.2}, seed=3)
    np.testing.assert_array_equal(again.y, obs.y)  # the noise is reproducible


def test_observations_from_dicts_and_hdf5(tmp_path):
    traj = dl.simulate(LV(), 5.0, n_save=11)
    from_dict = dl.io.read_observations({"time": np.asarray(traj.ts), "prey": np.asarray(traj["prey"])})
    assert from_dict.states == ("prey",)
    with dl.io.write_session(tmp_path / "run.h5") as s:
        s.add_run(traj, model=LV(), settings={"t1": 5.0})
    from_run = dl.io.read_observations(tmp_path / "run.h5")
    np.testing.assert_allclose(from_run.y, np.asarray(traj.ys))
    assert from_run.states == ("prey", "predator") and from_run.sigma is None


@pytest.mark.parametrize("columns, message", [
    ({"x": [1.0]}, "time column"),
    ({"t": [1.0, 0.0], "x": [1.0, 2.0]}, "increasing"),
    ({"t": [0.0, 1.0], "x": [np.nan, np.nan]}, "no observed value"),
])
def test_bad_observations_are_refused(columns, message):
    with pytest.raises(ValueError, match=message):
        dl.io.read_observations(columns)


def test_bad_sources_and_sigmas_are_refused(tmp_path):
    obs = Observations([0.0, 1.0], [[1.0], [2.0]], ("x",))
    with pytest.raises(ValueError, match="not observed"):
        obs.with_noise({"y": 1.0})
    with pytest.raises(ValueError, match="positive"):
        obs.with_noise(-1.0)
    with pytest.raises(ValueError, match=r"\.csv, \.h5"):
        dl.io.read_observations(tmp_path / "data.txt")
    with pytest.raises(TypeError, match="cannot make observations from a int"):
        dl.io.read_observations(42)
    with pytest.raises(TypeError, match="difflab.io.read_observations"):
        dl.fit(LV(), tmp_path / "data.csv", ["alpha"])  # files are read by difflab.io


def test_a_fit_from_csv_is_saved_as_a_session(tmp_path):
    data = dl.io.read_observations(dl.simulate(LV(), 20.0, n_save=201)).with_noise(0.5, seed=0)
    dl.io.write_observations_csv(tmp_path / "lv.csv", data, digits=17)
    res = dl.fit(LV(alpha=1.2, beta=0.45), dl.io.read_observations(tmp_path / "lv.csv"),
                 params=["alpha", "beta"])
    assert res.absolute_sigma  # the CSV's sigma columns give the noise level
    name = dl.io.save(tmp_path / "fit.h5", res)
    session = dl.open(tmp_path / "fit.h5")
    assert len(session.fits) == 1 and len(session.runs) == 1
    with h5py.File(tmp_path / "fit.h5") as f:
        fit = f["fits"][name]
        np.testing.assert_allclose(fit["loss"][()], res.loss_history)
        np.testing.assert_allclose(fit["parameters"][()], res.parameter_history)
        np.testing.assert_allclose(fit["data/y"][()], data.y)
        np.testing.assert_allclose(fit.attrs["stderr"], [res.stderr["alpha"], res.stderr["beta"]])
        assert fit.attrs["result"] == 0
