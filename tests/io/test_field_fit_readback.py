"""A field fit saved and opened again: the fitted initial field is the fitted run's first
frame, in the file as xarray reads it and in the FitResult read back."""

import jax.numpy as jnp
import numpy as np
import pytest

import difflab as dl
from difflab.models import Diffusion, Grid


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    grid = Grid(((0.0, 1.0),), (16,))
    x = grid.coordinates[0]
    model = Diffusion(D=0.1, grid=grid)
    truth = dl.simulate(model, 1.0, dt=0.01, n_save=3, y0={"u": jnp.exp(-((x - 0.4) / 0.1) ** 2)})
    fit = dl.fit(model, {"t": truth.ts[1:], "u": truth["u"][1:]}, ["u"], dt=0.01)
    path = tmp_path_factory.mktemp("fit") / "fit.h5"
    name = dl.io.save(path, fit)
    return fit, path, name


@pytest.mark.parametrize("engine", ["h5netcdf", "netcdf4"])
def test_the_fitted_initial_field_is_the_saved_runs_first_frame(saved, engine):
    xr = pytest.importorskip("xarray")
    fit, path, name = saved
    with xr.open_dataset(path, group=f"runs/{name}_run", engine=engine) as ds:
        assert ds["u"].dims == ("time", "x")
        np.testing.assert_array_equal(ds["u"].values[0], np.asarray(fit.settings["y0"]["u"]))


def test_a_field_fit_opens_again_with_its_field_run(saved):
    fit, path, name = saved
    back = dl.open(path).fits[name]
    assert back.names == () and back.ok
    np.testing.assert_array_equal(back.run["u"][:], np.asarray(fit.run["u"]))
    assert back.run.grid.points == (16,)
