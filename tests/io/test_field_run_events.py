"""A field run's events in its file: read back by DiffLab as they were, and by xarray
(either engine) as variables over (event, x, y)."""

import numpy as np
import pytest
import xarray as xr

import difflab as dl
from difflab.models import Diffusion, Grid



@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    model = Diffusion(D=0.01, grid=Grid(((0.0, 1.0), (0.0, 2.0)), (8, 6)))
    events = [dl.Event(lambda t, f: f["u"].max() - 0.5, direction=-1, terminal=True,
                       name="half"),
              dl.Event(lambda t, f: f["u"].max() - 0.8, name="most", max_events=3)]
    traj = dl.simulate(model, 3.0, dt=0.1, events=events)
    path = tmp_path_factory.mktemp("field_events") / "run.h5"
    return traj, path, dl.io.save_fields(path, traj)


def test_the_events_read_back_as_they_were(saved):
    traj, path, _ = saved
    back = dl.io.read_fields(path).events
    for name in ("half", "most"):
        np.testing.assert_array_equal(back.ts_of(name), traj.events.ts_of(name))
        np.testing.assert_array_equal(back.fields_of(name)["u"], traj.events.fields_of(name)["u"])
    assert back.stopped == "half" and back.capacity == (100, 3)
    assert back.names == traj.events.names and back.terminal == (True, False)
    np.testing.assert_array_equal(back.found, traj.events.found)
    assert np.isnan(np.asarray(dl.io.read_fields(path)["u"])[-1]).all()  # after the stop
    opened = dl.open(path).runs[saved[2]].events  # the session's way gives the same
    np.testing.assert_array_equal(opened.ts, back.ts)


@pytest.mark.parametrize("engine", ["h5netcdf", "netcdf4"])
def test_xarray_reads_the_fields_at_each_crossing(saved, engine):
    traj, path, name = saved
    with xr.open_dataset(path, group=f"runs/{name}", engine=engine) as ds:
        assert ds["event_u"].dims == ("event", "x", "y")
        np.testing.assert_array_equal(ds["event_time"].values,
                                      np.asarray(traj.events.ts)[:2])
        names = [str(n) for n in np.atleast_1d(ds.attrs["event_names"])]
        assert [names[k] for k in ds["event_which"].values] == ["most", "half"]
        np.testing.assert_array_equal(ds["event_u"].values[1],
                                      traj.events.fields_of("half")["u"][0])
