"""Other programs read session files as they are: xarray (h5netcdf and netCDF4 engines),
netCDF-C, h5py, h5dump."""

import datetime
import shutil
import subprocess
from pathlib import Path

import h5py
import h5netcdf
import jax
import netCDF4
import numpy as np
import pytest
import xarray as xr

import difflab as dl

from .conftest import N_SAVE

GROUPS = ["runs/run0", "runs/hybrid", "sweeps/sweep0", "fits/fit0", "fits/fit0/data",
          "sensitivities/sensitivity0"]
ENGINES = ["h5netcdf", "netcdf4"]
OLD_LABELS = Path(__file__).parent / "data" / "labels_v1.h5"  # labels as 1-D strings


def _open(path, group, engine="h5netcdf"):
    return xr.open_dataset(path, engine=engine, group=group, decode_timedelta=False)


@pytest.mark.parametrize("group", GROUPS)
def test_xarray_reads_every_result_group(built, group):
    with _open(built["path"], group) as ds:
        for name, var in ds.variables.items():
            assert "long_name" in var.attrs, name
        assert ds.attrs.get("Conventions", "CF-1.10") == "CF-1.10"
        if "time" in ds.dims:  # simulation time: no epoch, so no axis T or standard_name
            attrs = ds["time"].attrs
            assert "axis" not in attrs and "standard_name" not in attrs, group
            assert attrs.get("units") in ("1", "s") or "not declared" in attrs["comment"], group


@pytest.mark.slow
def test_xarray_sees_the_dimensions_and_values(built):
    run = dl.open(built["path"]).runs[0]
    with _open(built["path"], "runs/run0") as ds:
        assert ds["y"].dims == ("time", "state")
        assert list(ds["state_name"].values) == ["x", "y", "z"]
        np.testing.assert_array_equal(ds["y"].values, np.asarray(run.ys))
        np.testing.assert_array_equal(ds["time"].values, np.asarray(run.ts))
        assert ds.attrs["model"] == "lorenz" and ds.attrs["param_rho"] == 28.0
    with _open(built["path"], "sweeps/sweep0") as ds:
        assert ds["y"].dims == ("point", "time", "state")
        assert ds["parameters"].dims == ("point", "parameter")
        assert list(ds["parameter_name"].values) == ["rho", "sigma"]
        np.testing.assert_array_equal(ds["y"].sel(point=5).values, dl.open(built["path"]).sweeps[0].y[5])
        assert ds["result"].attrs["flag_meanings"].split()[1] == "success"
    with _open(built["path"], "sensitivities/sensitivity0") as ds:
        assert ds["dy_dp"].dims == ("time", "state", "parameter")


def test_h5netcdf_finds_dimension_scales_on_every_variable(built):
    with h5netcdf.File(built["path"], "r") as f:
        for group in GROUPS:
            g = f[group]
            for name, var in g.variables.items():
                assert all(dim in g.dimensions or dim in f[group.rsplit("/", 1)[0]].dimensions
                           for dim in var.dimensions), (group, name)
        assert dict(f["sweeps/sweep0"].dimensions.items())["point"].size == 8


def test_big_results_are_chunked_between_a_tenth_and_one_mebibyte(tmp_path):
    path = tmp_path / "big.h5"
    model = dl.models.get("lorenz")()
    with dl.io.stream_session(path) as s:
        s.new_sweep(model=model, parameter_names=["rho"], values=np.ones((1000, 1)),
                    time=np.linspace(0, 1, 2001), chunk_size=100)
        s.new_sweep(model=model, parameter_names=["rho"], values=np.ones((20, 1)),
                    time=np.linspace(0, 1, 200_001), chunk_size=4)
    with h5py.File(path) as f:
        for name in ("sweep0", "sweep1"):
            y = f[f"sweeps/{name}/y"]
            nbytes = np.prod(y.chunks) * y.dtype.itemsize
            assert 100 * 1024 <= nbytes <= 1024 * 1024, (name, y.chunks)
            assert y.compression is None
        assert 100 % f["sweeps/sweep0/y"].chunks[0] == 0  # a chunk of points fills whole chunks


@pytest.mark.skipif(shutil.which("h5dump") is None, reason="h5dump not installed (hdf5-tools)")
def test_h5dump_reads_the_file(built):
    header = subprocess.run(["h5dump", "-H", str(built["path"])], capture_output=True,
                            text=True, timeout=60)
    assert header.returncode == 0, header.stderr
    for name in ('GROUP "runs"', 'DATASET "y"', 'ATTRIBUTE "difflab_schema_version"',
                 'GROUP "sweep0"', 'DATASET "chunk_done"'):
        assert name in header.stdout
    data = subprocess.run(["h5dump", "-d", "/sweeps/sweep0/parameters", str(built["path"])],
                          capture_output=True, text=True, timeout=60)
    assert data.returncode == 0 and "35, 10" in data.stdout.replace("\n", " ")
    assert f"( 8, {N_SAVE}, 3 )" in header.stdout


def _text_attrs(ds):
    """Every attribute as text, string arrays decoded (h5netcdf leaves fixed-length ones bytes)."""
    def plain(value):
        if isinstance(value, (list, np.ndarray)) and np.asarray(value).dtype.kind in "SO":
            return [v.decode() if isinstance(v, bytes) else v for v in value]
        return value

    return {name: sorted((k, repr(plain(v))) for k, v in var.attrs.items())
            for name, var in [("", ds), *ds.variables.items()]}


@pytest.mark.parametrize("group", GROUPS)
def test_netcdf4_reads_every_result_group_as_h5netcdf_does(built, group):
    with _open(built["path"], group, "netcdf4") as a, _open(built["path"], group) as b:
        xr.testing.assert_equal(a, b)
        assert _text_attrs(a) == _text_attrs(b)
        for name in ("state_name", "parameter_name"):
            if name in a.coords:
                assert all(isinstance(v, str) for v in a[name].values), name


@pytest.mark.slow
def test_labels_are_one_string_each_for_netcdf_c_h5py_and_difflab(built):
    session = dl.open(built["path"])
    with netCDF4.Dataset(built["path"]) as f:
        assert list(f["runs/run0"]["state_name"][:]) == ["x", "y", "z"]  # not "xyz"
        assert list(f["sweeps/sweep0"]["parameter_name"][:]) == ["rho", "sigma"]
    with h5py.File(built["path"]) as f:
        state = f["runs/run0/state_name"]
        assert h5py.check_string_dtype(state.dtype).length == 1  # fixed length: no global heap
        assert [b"".join(row).decode() for row in state[()]] == ["x", "y", "z"]
    assert session.runs[0].state_names == ("x", "y", "z")
    assert session.stored("sweeps", "sweep0").parameter_names == ("rho", "sigma")
    assert session.sweeps[0].space.names == ("rho", "sigma")


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINES)
def test_labels_outside_ascii_decode_alike(tmp_path, engine):
    path = tmp_path / "utf8.h5"
    with dl.io.write_session(path) as s:
        s.add_sensitivity(model=dl.models.get("lorenz")(), parameter_names=["ρ", "sigma"],
                          gradient=[1.0, 2.0], dy_dp=np.zeros((2, 2, 2)), time=[0.0, 1.0],
                          state_names=["θ₁", "x"])
    with _open(path, "sensitivities/sensitivity0", engine) as ds:
        assert list(ds["parameter_name"].values) == ["ρ", "sigma"]
        assert list(ds["state_name"].values) == ["θ₁", "x"]
    session = dl.open(path)
    assert session.sensitivities[0].parameters == ("ρ", "sigma")
    assert session.sensitivities[0].state_names == ("θ₁", "x")
    assert session.stored("sensitivities", "sensitivity0").parameter_names == ("ρ", "sigma")


@pytest.mark.slow
def test_files_with_labels_as_strings_still_open_and_save_anew(tmp_path):
    session = dl.open(OLD_LABELS)
    assert session.runs[0].state_names == ("S", "I", "R")
    assert session.stored("sweeps", session.sweeps[0].name).parameter_names == ("beta", "gamma")
    assert session.sweeps[0].space.names == ("beta", "gamma")
    assert session.stored("fits", session.fits[0].name).data["state"].data == ["I", "R"]
    assert session.fits[0].data.states == ("I", "R")
    assert session.sensitivities[0].parameters == ("beta", "gamma")
    assert session.stored("sensitivities", session.sensitivities[0].name).parameter_names == (
        "beta", "gamma")
    obs = dl.io.read_observations(OLD_LABELS)
    assert obs.states == ("S", "I", "R")
    dl.io.save(tmp_path / "new.h5", session)
    for group in ("runs/run0", "sweeps/sweep0", "fits/fit0/data", "sensitivities/sensitivity0"):
        with _open(OLD_LABELS, group) as old, _open(tmp_path / "new.h5", group, "netcdf4") as new:
            xr.testing.assert_equal(old, _labels_on_axes(new))
    assert dl.io.read_observations(tmp_path / "new.h5").states == ("S", "I", "R")


def _labels_on_axes(ds):
    """A group of schema 3 (index ``state``, labels ``state_name``) as older files lay it out."""
    for dim in ("state", "parameter"):
        if f"{dim}_name" in ds.coords:
            ds = ds.assign_coords({dim: ds[f"{dim}_name"].values}).drop_vars(f"{dim}_name")
    return ds


@pytest.mark.parametrize("engine", ENGINES)
def test_the_root_group_carries_cf_global_attributes(built, engine):
    with xr.open_dataset(built["path"], engine=engine) as ds:
        attrs = dict(ds.attrs)
    with h5py.File(built["path"]) as f:
        raw = {k: v.decode() if isinstance(v, bytes) else v for k, v in f.attrs.items()}
    for name in ("Conventions", "title", "history", "source"):
        assert attrs[name] == raw[name], name
    assert attrs["Conventions"] == "CF-1.10" and attrs["title"]
    assert attrs["source"] == f"difflab {dl.__version__}"
    when, _, what = attrs["history"].partition(": ")
    assert datetime.datetime.fromisoformat(when).tzinfo is not None
    assert what == "pytest session" and when == attrs["created"]


LV = dl.models.get("lotka_volterra")


def _flat(path):
    return _open(path, "sweeps/sweep0")


@pytest.mark.slow
def test_a_grid_sweep_keeps_its_grid(tmp_path):
    path = tmp_path / "grid.h5"
    space = dl.grid(alpha=[0.9, 1.1, 1.3], beta=[0.3, 0.5])
    res = dl.sweep(LV(), space, 1.0, n_save=4, observables={"prey_max": "max(prey)"}, out=path)
    stored = dl.open(path).sweeps[0].to_xarray()
    with _flat(path) as flat:
        for ds in (res.to_xarray(), stored, flat):
            assert ds["y"].dims == ("point", "time", "state") and ds["result"].dims == ("point",)
            assert ds["prey_max"].dims == ("alpha", "beta")
            assert list(ds["alpha"].values) == [0.9, 1.1, 1.3]
            assert list(ds["beta"].values) == [0.3, 0.5] and ds["alpha"].attrs["units"]
            assert list(ds["state_name"].values) == ["prey", "predator"]
            for i in range(len(space)):  # C order: point i is grid index unravel_index(i)
                at = dict(alpha=space["alpha"][i], beta=space["beta"][i])
                np.testing.assert_array_equal(ds["y"].sel(point=i).values, res.y[i])
                assert ds["prey_max"].sel(at) == res.observables["prey_max"][i]
        xr.testing.assert_equal(stored, flat)  # the values and coordinates as saved


@pytest.mark.slow
def test_a_sampled_sweep_keeps_its_points(tmp_path):
    path = tmp_path / "sampled.h5"
    space = dl.uniform(jax.random.key(0), 5, alpha=(0.5, 1.5), beta=(0.2, 0.6))
    res = dl.sweep(LV(), space, 1.0, n_save=4, out=path)
    for ds in (res.to_xarray(), dl.open(path).sweeps[0].to_xarray()):
        assert ds["y"].dims == ("point", "time", "state") and ds["alpha"].dims == ("point",)
        np.testing.assert_array_equal(ds["alpha"].values, space["alpha"])
        with _flat(path) as flat:
            np.testing.assert_array_equal(ds["y"].values, flat["y"].values)


@pytest.mark.slow
def test_netcdf_c_finds_every_dimension_after_results_are_added_to_an_old_file(tmp_path):
    path = tmp_path / "old.h5"
    shutil.copyfile(OLD_LABELS, path)
    lorenz = dl.models.get("lorenz")()
    with dl.io.write_session(path) as s:  # adds to the file
        s.add_run(dl.simulate(lorenz, 0.1, n_save=4), model=lorenz)
    with netCDF4.Dataset(path) as f, h5py.File(path) as h:
        for group in [*GROUPS[:1], "runs/run1", *GROUPS[2:]]:
            for name, var in f[group].variables.items():
                assert tuple(d.size for d in var.get_dims()) == h[f"{group}/{name}"].shape, name
    for engine in ENGINES:
        with _open(path, "runs/run1", engine) as ds:
            assert list(ds["state_name"].values) == ["x", "y", "z"] and ds["y"].shape == (4, 3)
