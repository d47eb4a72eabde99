"""Result groups as xarray reads them: plottable axes, a grid sweep on its axes, and
``to_xarray()`` equal to the saved group (both netCDF engines read the file)."""

import jax.numpy as jnp
import numpy as np
import pytest
import xarray as xr

import difflab as dl

ENGINES = ("h5netcdf", "netcdf4")
LORENZ = dl.models.get("lorenz")()
SHORT = dict(dt=1e-2, solver="rk4")


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """``(path, {group: result})``: one small result of each kind in one file."""
    path = tmp_path_factory.mktemp("layout") / "session.h5"
    truth = dl.simulate(LORENZ, 0.5, dt=1e-2, n_save=11)
    data = dl.io.Observations(np.asarray(truth.ts), np.asarray(truth.ys), LORENZ.state_names)
    results = {
        "runs/run": dl.simulate(LORENZ, 1.0, **SHORT),
        "sweeps/grid": dl.sweep(LORENZ, dl.grid(rho=jnp.linspace(10, 30, 3), sigma=[8.0, 12.0]),
                                0.5, observables={"x_max": "max(x)", "xs": "maxima(x, k=2)"},
                                **SHORT),
        "sweeps/sample": dl.sweep(LORENZ, {"rho": jnp.linspace(10, 30, 4)}, 0.5,
                                  observables={"x_max": "max(x)"}, **SHORT),
        "fits/fit": dl.fit(LORENZ.replace(rho=27.5), data, ["rho"], dt=1e-2, fit_max_steps=3,
                           throw=False),
        "sensitivities/sens": dl.sensitivity(LORENZ, 0.5, params=["rho"], dt=1e-2, n_save=11),
        "analyses/branch": dl.continuation(LORENZ, "rho", 0.5, 5.0),
    }
    for group, result in results.items():
        dl.io.save(path, result, name=group.split("/")[1])
    return path, results


@pytest.mark.parametrize("engine", ENGINES)
def test_a_run_plots_as_it_is_and_a_state_is_one_call_away(saved, engine):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    path, results = saved
    run = results["runs/run"]
    with xr.open_dataset(path, group="runs/run", engine=engine) as ds:
        assert ds.y.plot() is not None  # a map over (time, state)
        assert len(ds.y.plot.line(x="time")) == 3  # a line per state
        assert list(ds.state.values) == [0, 1, 2]
        assert list(ds.state_name.values) == ["x", "y", "z"]
        z = ds.y.set_xindex("state_name").sel(state_name="z")
        np.testing.assert_array_equal(z.values, np.asarray(run.ys)[:, 2])
    matplotlib.pyplot.close("all")


@pytest.mark.parametrize("engine", ENGINES)
def test_a_grid_sweeps_observables_lie_on_its_axes_with_units(saved, engine):
    path, results = saved
    res = results["sweeps/grid"]
    with xr.open_dataset(path, group="sweeps/grid", engine=engine) as ds:
        assert ds.x_max.dims == ("rho", "sigma") and ds.xs.dims == ("rho", "sigma", "xs_index")
        assert ds.rho.attrs["units"] == ds.sigma.attrs["units"] == "1"
        assert ds.x_max.attrs["units"] == "1"  # the unit of x, which max(x) keeps
        np.testing.assert_allclose(ds.rho.values, [10, 20, 30])
        for i in range(len(res)):  # point i is grid cell unravel_index(i, (3, 2))
            at = dict(rho=res.space["rho"][i], sigma=res.space["sigma"][i])
            assert float(ds.x_max.sel(at)) == res.observables["x_max"][i]
            np.testing.assert_array_equal(ds.xs.sel(at).values, res.observables["xs"][i])
    stored = dl.open(path).sweeps["grid"]  # read back per point
    np.testing.assert_array_equal(np.asarray(stored.observables["xs"]), res.observables["xs"])


def test_a_sampled_sweep_keeps_its_points_with_the_parameters_along_them(saved):
    path, results = saved
    with xr.open_dataset(path, group="sweeps/sample", engine="h5netcdf") as ds:
        assert ds.x_max.dims == ("point",) and "rho" in ds.x_max.coords
        np.testing.assert_allclose(ds.rho.values, [10, 50 / 3, 70 / 3, 30])
    assert list(dl.open(path).sweeps["sample"].observables) == ["x_max"]


@pytest.mark.parametrize("group", ["runs/run", "sweeps/grid", "sweeps/sample", "fits/fit",
                                   "sensitivities/sens", "analyses/branch"])
def test_to_xarray_is_the_group_as_saved(saved, group):
    path, results = saved
    with xr.open_dataset(path, group=group, engine="h5netcdf") as ds:
        expected = ds.load()
    made = results[group].to_xarray()
    for name in ("model", "fitted_model", "run", "provenance"):  # names of other objects in
        made.attrs.pop(name, None), expected.attrs.pop(name, None)  # the file it is saved to
    xr.testing.assert_identical(made, expected)


def test_a_branch_plots_against_its_parameter(saved):
    ds = saved[1]["analyses/branch"].to_xarray()
    assert "values" in ds.coords and ds.states.coords["values"].dims == ("point",)


def test_an_exported_result_is_a_self_describing_netcdf_file(saved, tmp_path):
    run = saved[1]["runs/run"]
    run.to_xarray().to_netcdf(tmp_path / "run.nc")
    with xr.open_dataset(tmp_path / "run.nc", engine="netcdf4") as ds:
        assert ds.y.attrs["units"] == "1" and ds.time.attrs["long_name"] == "simulation time"
        assert list(ds.state_name.values) == ["x", "y", "z"]
        np.testing.assert_array_equal(ds.y.values, np.asarray(run.ys))
