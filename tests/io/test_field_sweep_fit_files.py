"""A field fit saved with dl.io.save: its snapshots over (time, x, y) with the grid's axes
and NaN where unobserved, the fitted value and the fitted run, read back by xarray."""

import numpy as np
import pytest
import xarray as xr

import difflab as dl
from difflab.models import Diffusion, Grid


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """Snapshots of the closed form exp(-5 pi^2 D t) sin(2 pi x) sin(pi y), D = 0.01, one
    value unobserved; the fit starts at D = 0.005."""
    model = Diffusion(grid=Grid(((0.0, 1.0), (0.0, 2.0)), (8, 6)))
    ts = np.array([0.5, 1.0])
    u = np.array(model.replace(D=0.01).exact(ts)["u"])
    u[1, 2, 3] = np.nan
    fit = dl.fit(model.replace(D=0.005), {"t": ts, "u": u}, ["D"], dt=0.05)
    path = tmp_path_factory.mktemp("ff") / "fit.h5"
    return path, dl.io.save(path, fit), fit, u, model


@pytest.mark.parametrize("engine", ["h5netcdf", "netcdf4"])
def test_the_snapshots_read_back_over_time_and_the_grid(saved, engine):
    path, name, _, u, model = saved
    with xr.open_dataset(path, group=f"fits/{name}/field_data", engine=engine) as ds:
        assert ds["u"].dims == ("time", "x", "y")
        np.testing.assert_array_equal(ds["time"], [0.5, 1.0])
        np.testing.assert_array_equal(ds["y"], model.grid.axis_coordinates(1))
        np.testing.assert_array_equal(ds["u"], u)  # NaN where unobserved, as given
        assert np.isnan(ds["u"][1, 2, 3])


def test_the_fitted_value_and_run_read_back(saved):
    path, name, fit, _, _ = saved
    np.testing.assert_allclose(fit.params["D"], 0.01, rtol=1e-6)
    with xr.open_dataset(path, group=f"fits/{name}", engine="h5netcdf") as ds:
        assert ds["parameters"][-1].item() == pytest.approx(fit.params["D"], rel=1e-12)
    run = dl.io.read_fields(path, f"{name}_run")
    np.testing.assert_allclose(run["u"][-1], fit.run["u"][-1], atol=1e-14)
    assert dl.open(path).summary()["fits"][0]["name"] == name
