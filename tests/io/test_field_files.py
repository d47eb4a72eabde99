"""Field runs in session files: read back by xarray (both engines) and h5py as variables
over (time, x, y) on the grid's coordinates, streamed frame by frame."""

import shutil
import tracemalloc
from typing import ClassVar

import h5py
import jax.numpy as jnp
import numpy as np
import pytest
import xarray as xr

import difflab as dl
from difflab.models import AbstractFieldModel, Dirichlet, Grid, Neumann, Periodic, Robin

ENGINES = ["h5netcdf", "netcdf4"]
GRID = Grid(((0.0, 1.0), (-1.0, 2.0)), (16, 12))  # unequal axes: a transpose shows


class Waves(AbstractFieldModel):
    """A field model that declares its units (for the attribute tests; never advanced)."""

    grid: Grid
    c: float = dl.param(1.5, unit="m/s", doc="speed")
    field_names = ("h",)
    time_unit: ClassVar[str] = "s"
    field_units: ClassVar[dict] = {"h": "m"}
    length_unit: ClassVar[str] = "m"

    def linear_part(self):
        return {"h": jnp.zeros(self.grid.shape)}

    def nonlinear_part(self, t, fields):
        return {"h": 0.0 * fields["h"]}

    def initial_fields(self):
        return {"h": self.grid.coordinates[0]}


def _frames(grid, n, offset=0.0):
    """``n`` frames, each a different field over the grid: frame k is ``x + 10 y + k``."""
    x, y = (np.asarray(c) for c in grid.coordinates[:2])
    return np.stack([x + 10 * y + k + offset for k in range(n)])


@pytest.fixture(scope="module")
def gray_scott(tmp_path_factory):
    model = dl.models.GrayScott(grid=GRID)
    traj = dl.solvers.simulate_fields(model, 20.0, dt=1.0, frames=5)
    path = tmp_path_factory.mktemp("fields") / "gs.h5"
    name = dl.io.save_fields(path, traj, model, name="gs", settings={"dt": 1.0})
    assert name == "gs"
    return path, traj, model


@pytest.mark.parametrize("engine", ENGINES)
def test_xarray_reads_each_field_over_time_x_y(gray_scott, engine):
    path, traj, _ = gray_scott
    with xr.open_dataset(path, group="runs/gs", engine=engine) as ds:
        for name in ("u", "v"):
            assert ds[name].dims == ("time", "x", "y")
            np.testing.assert_array_equal(ds[name].values, np.asarray(traj.fields[name]))
        np.testing.assert_array_equal(ds.time.values, np.asarray(traj.ts))
        np.testing.assert_array_equal(ds.x.values, GRID.axis_coordinates(0))
        np.testing.assert_array_equal(ds.y.values, GRID.axis_coordinates(1))
        assert (ds.x.attrs["axis"], ds.y.attrs["axis"]) == ("X", "Y")
        assert "units" not in ds.x.attrs and "not declared" in ds.x.attrs["comment"]
        assert "standard_name" not in ds.time.attrs and "axis" not in ds.time.attrs
        assert ds.attrs["param_F"] == 0.04 and not any("." in k for k in ds.attrs)


def test_h5py_reads_the_frames_chunked_by_frame(gray_scott):
    path, traj, _ = gray_scott
    with h5py.File(path, "r") as f:
        group = f["runs/gs"]
        u = group["u"]
        assert u.chunks == (1, 16, 12) and u.maxshape[0] is None
        np.testing.assert_array_equal(u[...], np.asarray(traj.fields["u"]))
        assert [u.dims[i].keys()[0] for i in range(3)] == ["time", "x", "y"]
        np.testing.assert_array_equal(group.attrs["grid_points"], [16, 12])
        np.testing.assert_array_equal(group.attrs["grid_extent"], [0.0, 1.0, -1.0, 2.0])
        assert group.attrs["complete"] == 1 and group.attrs["dt"] == 1.0


def test_a_frame_plots_with_labelled_axes(gray_scott):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path, _, _ = gray_scott
    with xr.open_dataset(path, group="runs/gs", engine="h5netcdf") as ds:
        image = ds.u.isel(time=-1).plot()
    axes = image.axes
    assert (axes.get_xlabel(), axes.get_ylabel()) == ("y", "x")  # xarray: last dim across
    assert axes.get_title() == "time = 20.0"
    plt.close(axes.figure)


def test_open_gives_the_run_with_its_grid(gray_scott):
    path, traj, _ = gray_scott
    session = dl.open(path)
    run = session.runs["gs"]
    assert isinstance(run, dl.solvers.FieldTrajectory)
    assert (run.grid.extent, run.grid.points) == (GRID.extent, GRID.points)
    np.testing.assert_array_equal(np.asarray(run.fields["v"]), np.asarray(traj.fields["v"]))
    np.testing.assert_array_equal(run.ts, np.asarray(traj.ts))
    assert dl.io.read_fields(path).final["u"].shape == (16, 12)
    assert dict(run.settings)["dt"] == 1.0 and run.model.grid.points == (16, 12)
    assert float(run.model.F) == 0.04
    entry = session.summary()["runs"][0]
    assert entry["fields"] == ["u", "v"] and entry["dims"] == {"time": 5, "x": 16, "y": 12}
    assert entry["grid"] == "x 0..1 (16 points, periodic); y -1..2 (12 points, periodic)"


def test_saving_the_session_again_keeps_the_field_run(gray_scott, tmp_path):
    path, traj, _ = gray_scott
    dl.io.save(tmp_path / "copy.h5", dl.open(path))
    with xr.open_dataset(tmp_path / "copy.h5", group="runs/gs", engine="netcdf4") as ds:
        np.testing.assert_array_equal(ds.u.values, np.asarray(traj.fields["u"]))
        assert ds.u.dims == ("time", "x", "y")
    assert dl.io.read_fields(tmp_path / "copy.h5", "gs").grid.points == (16, 12)


def test_boundaries_and_units_come_back(tmp_path):
    grid = Grid(((0.0, 2.0), (0.0, 1.0), (0.0, 3.0)), (6, 5, 4),
                ((Dirichlet(1.5), Neumann(-0.5)), Robin(alpha=2.0, beta=0.25, value=3.0),
                 Periodic()))
    path = tmp_path / "walls.h5"
    with dl.io.field_writer(path, Waves(grid=grid), name="walls") as writer:
        writer.append(0.0, {"h": np.ones(grid.shape)})
    back = dl.io.read_fields(path).grid
    sides = [(type(s).__name__, getattr(s, "value", None)) for pair in back.boundaries
             for s in pair]
    assert sides == [("Dirichlet", 1.5), ("Neumann", -0.5), ("Robin", 3.0), ("Robin", 3.0),
                     ("Periodic", None), ("Periodic", None)]
    assert (back.boundaries[1][0].alpha, back.boundaries[1][0].beta) == (2.0, 0.25)
    with xr.open_dataset(path, group="runs/walls", engine="netcdf4") as ds:
        assert ds.h.dims == ("time", "x", "y", "z")
        np.testing.assert_array_equal(ds.x.values, grid.axis_coordinates(0))  # cell centres
        assert (ds.h.attrs["units"], ds.time.attrs["units"], ds.z.attrs["units"]) == (
            "m", "s", "m")
        assert ds.attrs["param_c"] == 1.5


def test_the_writer_appends_frames_and_the_file_is_valid_midway(tmp_path):
    grid = Grid(((0.0, 1.0), (0.0, 1.0)), (8, 6))
    path, midway = tmp_path / "stream.h5", tmp_path / "midway.h5"
    frames = _frames(grid, 300)
    with dl.io.field_writer(path, Waves(grid=grid), name="live") as writer:
        for k in range(100):
            writer.append(0.5 * k, {"h": frames[k]})
        shutil.copyfile(path, midway)  # the file as a crash would leave it
        writer.append(0.5 * np.arange(100, 300), {"h": frames[100:]})
    with xr.open_dataset(midway, group="runs/live", engine="h5netcdf") as ds:
        np.testing.assert_array_equal(ds.h.values, frames[:100])
        assert ds.attrs["complete"] == 0
    for engine in ENGINES:
        with xr.open_dataset(path, group="runs/live", engine=engine) as ds:
            np.testing.assert_array_equal(ds.h.values, frames)
            np.testing.assert_array_equal(ds.time.values, 0.5 * np.arange(300))
            assert ds.attrs["complete"] == 1


def test_memory_while_streaming_does_not_grow_with_frames(tmp_path):
    grid = Grid(((0.0, 1.0), (0.0, 1.0)), (128, 128))  # 128 KiB a frame
    frame = _frames(grid, 1)[0]
    n = 150  # 19 MiB of frames in all
    tracemalloc.start()
    try:
        with dl.io.field_writer(tmp_path / "big.h5", Waves(grid=grid)) as writer:
            for k in range(n):
                writer.append(float(k), {"h": frame})
            peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 0.2 * n * frame.nbytes  # a few frames' worth, not all of them


def test_compressed_runs_read_back_the_same(tmp_path, gray_scott):
    _, traj, model = gray_scott
    dl.io.save_fields(tmp_path / "small.h5", traj, model, compress=True)
    single = dl.solvers.FieldTrajectory(traj.ts, {n: np.asarray(u, np.float32) for n, u in
                                                  traj.fields.items()}, traj.grid, "etdrk4")
    dl.io.save_fields(tmp_path / "small.h5", single, model, name="single")
    with h5py.File(tmp_path / "small.h5", "r") as f:
        assert f["runs/run0/v"].compression == "gzip"
        assert f["runs/single/v"].dtype == np.float32 and f["runs/run0/v"].dtype == np.float64
    with xr.open_dataset(tmp_path / "small.h5", group="runs/run0", engine="netcdf4") as ds:
        np.testing.assert_array_equal(ds.v.values, np.asarray(traj.fields["v"]))


@pytest.mark.parametrize("attr, value", [("grid_points", np.array([16], np.int64)),
                                         ("grid_extent", np.array([1.0, 0.0, 0.0, 1.0])),
                                         ("grid_boundaries", np.array([b"wall"] * 4))])
def test_a_damaged_grid_is_refused(gray_scott, tmp_path, attr, value):
    path = tmp_path / "bad.h5"
    shutil.copyfile(gray_scott[0], path)
    with h5py.File(path, "r+") as f:
        f["runs/gs"].attrs[attr] = value
    with pytest.raises(dl.io.SessionFileError, match="/runs/gs"):
        dl.open(path)


def test_axes_that_disagree_with_the_grid_are_refused(gray_scott, tmp_path):
    path = tmp_path / "bad.h5"
    shutil.copyfile(gray_scott[0], path)
    with h5py.File(path, "r+") as f:
        f["runs/gs"].attrs["grid_points"] = np.array([16, 13], np.int64)
    with pytest.raises(dl.io.SessionFileError, match="the axes hold"):
        dl.open(path).runs["gs"]


def _cf_check(path, group, folder):
    """The CF checker's errors and warnings on ``group``, exported flat as CF-1.8 (the
    newest it knows), with empty tables in place of the ones it would fetch."""
    try:
        from cfchecker import cfchecks
    except (ImportError, OSError) as error:  # cfunits: FileNotFoundError without UDUNITS-2
        pytest.skip(f"the CF checker cannot be imported: {error}")
    version = "<version_number>1</version_number>"
    tables = {"sn": ("standard_name_table",
                     version + "<last_modified>2024-01-01T00:00:00Z</last_modified>"),
              "area": ("area_type_table", version + "<date>2024-01-01</date>"),
              "region": ("standard_region_list", version + "<date>2024-01-01</date>")}
    for name, (tag, body) in tables.items():
        (folder / f"{name}.xml").write_text(f'<?xml version="1.0"?><{tag}>{body}</{tag}>')
    flat = folder / "flat.nc"
    with xr.open_dataset(path, group=group, engine="h5netcdf") as ds:
        ds.attrs["Conventions"] = "CF-1.8"
        ds.to_netcdf(flat, engine="netcdf4")
    results = cfchecks.CFChecker(
        silent=True, version="1.8", cfStandardNamesXML=str(folder / "sn.xml"),
        cfAreaTypesXML=str(folder / "area.xml"),
        cfRegionNamesXML=str(folder / "region.xml")).checker(str(flat))
    parts = [("global", results["global"]), *results["variables"].items()]
    return ([f"{w}: {m}" for w, r in parts for m in r["FATAL"] + r["ERROR"]],
            [f"{w}: {m}" for w, r in parts for m in r["WARN"]])


def test_a_field_run_passes_the_cf_checker(tmp_path):
    grid = Grid(((0.0, 1.0), (0.0, 2.0)), (8, 6))
    with dl.io.field_writer(tmp_path / "cf.h5", Waves(grid=grid), name="w") as writer:
        writer.append(np.arange(3.0), {"h": np.ones((3, *grid.shape))})
    errors, warnings = _cf_check(tmp_path / "cf.h5", "runs/w", tmp_path)
    assert errors == []
    # every quantity has its units and every name is a CF name; the one warning left is
    # CF's advice to order the axes (time, y, x), where DiffLab keeps the grid's (x, y)
    assert [w for w in warnings if "(2.4)" not in w] == [], warnings
