"""One class per result: what the solvers return, ``dl.io.save`` stores and a session gives
back as the same class, every array equal, knowing what made it."""

import h5py
import numpy as np
import pytest
import xarray as xr

import difflab as dl
from tests.models_for_tests import Decay


def _lorenz_grid(**kwargs):
    lorenz = dl.models.get("lorenz")()
    space = dl.grid(rho=np.linspace(10.0, 30.0, 4), sigma=[8.0, 10.0])
    return dl.sweep(lorenz, space, 0.5, dt=1e-2, observables={"max_x": "max(x)"}, **kwargs)


def test_a_sweep_result_is_saved_whole_and_read_back_as_a_sweep_result(tmp_path):
    made = _lorenz_grid()
    assert made.observable_specs == {"max_x": "max(x)"}
    path = tmp_path / "s.h5"
    assert dl.io.save(path, made, name="scan") == "scan"
    back = dl.open(path).sweeps["scan"]
    assert isinstance(back, dl.SweepResult) and back.complete
    assert back.observable_specs == made.observable_specs
    assert back.space.kind == "grid" and back.space.shape == (4, 2)
    for field in ("y", "result", "steps", "ts"):
        np.testing.assert_array_equal(np.asarray(getattr(back, field)), getattr(made, field))
    np.testing.assert_array_equal(np.asarray(back.observables["max_x"]), made.observables["max_x"])
    assert back.rerun(5).ys[-1].tolist() == pytest.approx(made.final[5].tolist(), abs=1e-12)
    for engine in ("h5netcdf", "netcdf4"):  # an ordinary netCDF group, for every reader
        with xr.open_dataset(path, group="sweeps/scan", engine=engine) as ds:
            assert ds["max_x"].dims == tuple(made.space.names)  # on the grid's axes
            np.testing.assert_array_equal(ds["max_x"].values.ravel(), made.observables["max_x"])


def test_a_sweep_stopped_by_its_progress_keeps_what_it_ran_and_saves_as_incomplete(tmp_path):
    chunks = []
    stopped = _lorenz_grid(chunk_size=3, progress=lambda c: chunks.append(c) or False)
    assert len(chunks) == 1 and stopped.stats["stopped"] and not stopped.complete
    ran = np.asarray(stopped.result) != -1
    assert ran.sum() == stopped.stats["computed"] == chunks[0].stop - chunks[0].start
    whole = _lorenz_grid()
    np.testing.assert_array_equal(stopped.observables["max_x"][ran], whole.observables["max_x"][ran])
    assert np.all(np.isnan(stopped.observables["max_x"][~ran]))
    path = tmp_path / "stopped.h5"
    dl.io.save(path, stopped, name="part")
    back = dl.open(path).sweeps["part"]
    assert not back.complete and dl.open(path).stored("sweeps", "part").complete is False
    np.testing.assert_array_equal(np.asarray(back.result), stopped.result)


def test_a_fit_keeps_its_own_run_the_optimizer_limit_and_its_wall_time(tmp_path):
    truth = dl.simulate(Decay(rate=0.7), 2.0, n_save=11)
    data = dl.io.Observations(np.asarray(truth.ts), np.asarray(truth.ys), truth.state_names)
    fit = dl.fit(Decay(), data, ["rate"], fit_max_steps=40, max_steps=5000)
    path = tmp_path / "fit.h5"
    name = dl.io.save(path, fit)
    session = dl.open(path)
    stored = session.stored("fits", name)
    assert stored.attrs["run"] == f"{name}_run" and f"{name}_run" in session.runs.names()
    assert (stored.attrs["fit_max_steps"], stored.attrs["max_steps"]) == (40, 5000)
    back = session.fits[name]
    assert back.max_steps == 40 and back.settings["max_steps"] == 5000
    assert back.wall_time == pytest.approx(fit.wall_time)
    assert back.params == fit.params


def test_a_fit_written_before_fit_max_steps_reads_max_steps_as_the_optimizers(tmp_path):
    truth = dl.simulate(Decay(rate=0.7), 2.0, n_save=11)
    data = dl.io.Observations(np.asarray(truth.ts), np.asarray(truth.ys), truth.state_names)
    path = tmp_path / "old.h5"
    name = dl.io.save(path, dl.fit(Decay(), data, ["rate"], fit_max_steps=40))
    with h5py.File(path, "r+") as f:  # as such a file had it
        attrs = f[f"fits/{name}"].attrs
        attrs["max_steps"] = attrs["fit_max_steps"]
        del attrs["fit_max_steps"]
    back = dl.open(path).fits[name]
    assert back.max_steps == 40 and back.settings["max_steps"] == 100_000
