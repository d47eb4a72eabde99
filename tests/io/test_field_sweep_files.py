"""Field sweeps in session files, read back by xarray with both engines: observables over
the swept parameters, final fields over (parameters..., x, y) with the grid's axes."""

import numpy as np
import pytest
import xarray as xr

import difflab as dl
from difflab.models import Diffusion, Grid

ENGINES = ("h5netcdf", "netcdf4")


@pytest.fixture(scope="module")
def model():
    return Diffusion(grid=Grid(((0.0, 1.0), (0.0, 2.0)), (8, 6)))


@pytest.fixture(scope="module")
def saved(model, tmp_path_factory):
    """A grid sweep over D and a sweep of zipped points, in one file."""
    path = tmp_path_factory.mktemp("fs") / "sweeps.h5"
    grid = dl.sweep(model, dl.grid({"D": [0.005, 0.02, 0.05]}), 0.5, dt=0.05, n_save=2,
                    observables=["max(u)", "norm(u)"])
    points = dl.sweep(model, {"D": [0.01, 0.03]}, 0.5, dt=0.05, n_save=2,
                      observables={"m": "mean(u)"})
    names = dl.io.save(path, grid, name="by_D"), dl.io.save(path, points)
    return path, names, grid, points


@pytest.mark.parametrize("engine", ENGINES)
def test_a_grid_sweep_reads_back_over_its_parameter(saved, model, engine):
    path, (name, _), res, _ = saved
    ds = xr.open_dataset(path, group=f"sweeps/{name}", engine=engine)
    assert ds["max_u"].dims == ("D",) and ds["u"].dims == ("D", "x", "y")
    np.testing.assert_array_equal(ds["D"], res.space["D"])
    np.testing.assert_array_equal(ds["max_u"], res["max_u"])
    np.testing.assert_array_equal(ds["u"], res.final["u"])
    np.testing.assert_array_equal(ds["x"], model.grid.axis_coordinates(0))
    np.testing.assert_array_equal(ds["y"], model.grid.axis_coordinates(1))
    assert ds["x"].attrs["axis"] == "X" and ds["D"].attrs["units"] == "m^2/s"
    assert ds["max_u"].attrs["spec"] == "max(u)" and ds.attrs["t1"] == 0.5
    # the stored field is the closed form at t1: decay exp(-|k|^2 D t1), |k|^2 = 5 pi^2
    u0 = np.asarray(model.initial_fields()["u"])
    decay = np.exp(-5 * np.pi**2 * ds["D"].values * 0.5)
    np.testing.assert_allclose(ds["u"], decay[:, None, None] * u0, atol=1e-12)


@pytest.mark.parametrize("engine", ENGINES)
def test_zipped_points_read_back_with_the_parameter_as_coordinate(saved, engine):
    path, (_, name), _, res = saved
    ds = xr.open_dataset(path, group=f"sweeps/{name}", engine=engine)
    assert ds["m"].dims == ("point",) and "D" in ds["m"].coords
    np.testing.assert_array_equal(ds["D"], [0.01, 0.03])
    np.testing.assert_array_equal(ds["u"], res.final["u"])
    np.testing.assert_array_equal(ds["result"], [0, 0])


def test_the_file_opens_as_a_session_with_the_sweeps_summarised(saved):
    path, names, _, _ = saved
    sweeps = dl.open(path).summary()["sweeps"]
    assert [s["name"] for s in sweeps] == list(names)
    assert sweeps[0]["fields"] == ["u"] and sweeps[0]["dims"] == {"D": 3, "x": 8, "y": 6}
