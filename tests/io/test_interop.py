"""Other programs read session files as they are: xarray + h5netcdf, h5py, h5dump."""

import shutil
import subprocess

import h5py
import h5netcdf
import numpy as np
import pytest
import xarray as xr

import difflab as dl

from .conftest import N_SAVE

GROUPS = ["runs/run0", "runs/hybrid", "sweeps/sweep0", "fits/fit0", "fits/fit0/data",
          "sensitivities/sensitivity0"]


def _open(path, group):
    return xr.open_dataset(path, engine="h5netcdf", group=group, decode_timedelta=False)


@pytest.mark.parametrize("group", GROUPS)
def test_xarray_reads_every_result_group(built, group):
    with _open(built["path"], group) as ds:
        for name, var in ds.variables.items():
            assert "long_name" in var.attrs, name
        assert ds.attrs.get("Conventions", "CF-1.10") == "CF-1.10"
        if "time" in ds.dims:
            assert ds["time"].attrs["units"] == "s" and ds["time"].attrs["axis"] == "T"


def test_xarray_sees_the_dimensions_and_values(built):
    run = dl.open(built["path"]).runs[0]
    with _open(built["path"], "runs/run0") as ds:
        assert ds["y"].dims == ("time", "state")
        assert list(ds["state"].values) == ["x", "y", "z"]
        np.testing.assert_array_equal(ds["y"].values, run.y)
        np.testing.assert_array_equal(ds["time"].values, run.time)
        assert ds.attrs["model"] == "lorenz" and ds.attrs["param.rho"] == 28.0
    with _open(built["path"], "sweeps/sweep0") as ds:
        assert ds["y"].dims == ("point", "time", "state")
        assert ds["parameters"].dims == ("point", "parameter")
        assert list(ds["parameter"].values) == ["rho", "sigma"]
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
