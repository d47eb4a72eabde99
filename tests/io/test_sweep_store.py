"""The sweep store: the session schema, netCDF readers, resuming, and the multi-process index."""

import h5py
import numpy as np
import pytest
import xarray as xr

import difflab as dl
from difflab.io import _sweep_output, _sweep_store

LORENZ = dl.models.get("lorenz")
SPACE = dl.grid(rho=np.linspace(0.0, 28.0, 10), **{"y0.x": [1.0, 2.0]})
OPTIONS = dict(dt=1e-3, n_save=11, chunk_size=6, observables={"x_max": "max(x)"})


class Stop(Exception):
    pass


def _stop_after(n):
    seen = []

    def progress(chunk):
        seen.append(chunk)
        if len(seen) == n:
            raise Stop

    return progress


@pytest.mark.slow
def test_a_sweep_file_follows_the_session_schema(tmp_path):
    out = tmp_path / "sweep.h5"
    res = dl.sweep(LORENZ(), SPACE, 1.0, out=out, **OPTIONS)
    assert res.name == "sweep0" and res.stats["out"] == str(out)
    session = dl.open(out)
    stored = session.sweeps[0]
    group = session.stored("sweeps", stored.name)
    assert stored.complete and group.complete and len(stored) == 20
    assert group.attrs["chunk_size"] == 6
    assert group.parameter_names == ("rho",)
    assert stored.space.names == res.space.names
    assert stored.space.shape == res.space.shape == (10, 2)
    assert stored.space.kind == res.space.kind == "grid"
    for name in res.space.names:
        np.testing.assert_array_equal(stored.space[name], res.space[name])
    np.testing.assert_array_equal(np.asarray(stored.y), res.ys)
    np.testing.assert_array_equal(np.asarray(stored.result), res.result)
    ds = xr.open_dataset(out, engine="h5netcdf", group="sweeps/sweep0")
    assert ds["y"].dims == ("point", "time", "state") and list(ds["state_name"].values) == list("xyz")
    assert ds["x_max"].dims == ("rho", "y0_x")  # a grid: on its axes, y0.x named y0_x
    np.testing.assert_array_equal(ds["x_max"].values.ravel(), res.observables["x_max"])
    np.testing.assert_array_equal(ds["y0"].values[:, 0], SPACE["y0.x"])
    np.testing.assert_array_equal(ds["parameters"].values[:, 0], SPACE["rho"])
    assert ds["time"].attrs["units"] and ds["result"].attrs["flag_meanings"].startswith("not_run")
    assert ds.attrs["space_kind"] == "grid" and list(ds.attrs["space_shape"]) == [10, 2]
    ds.close()
    rerun = stored.rerun(13)  # the file holds enough to rerun any point
    np.testing.assert_allclose(np.asarray(rerun.ys)[-1], res.final[13], atol=1e-12)


@pytest.mark.slow
def test_an_interrupted_sweep_resumes_from_its_last_chunk(tmp_path):
    out = tmp_path / "sweep.h5"
    whole = dl.sweep(LORENZ(), SPACE, 1.0, **OPTIONS)
    with pytest.raises(Stop):
        dl.sweep(LORENZ(), SPACE, 1.0, out=out, progress=_stop_after(2), **OPTIONS)
    with h5py.File(out, "r") as f:
        assert list(f["sweeps/sweep0/chunk_done"][:]) == [1, 1, 0, 0]
        assert f["sweeps/sweep0"].attrs["complete"] == 0
    chunks = []
    res = dl.sweep(LORENZ(), SPACE, 1.0, out=out, progress=chunks.append, **OPTIONS)
    assert [c.index for c in chunks] == [2, 3] and res.stats["resumed"] == 12
    np.testing.assert_array_equal(res.y, whole.y)
    np.testing.assert_array_equal(res.observables["x_max"], whole.observables["x_max"])
    assert dl.open(out).sweeps[0].complete
    again = dl.sweep(LORENZ(), SPACE, 1.0, out=out, **OPTIONS)  # complete: nothing to run
    assert again.stats["computed"] == 0 and again.name == "sweep0"
    np.testing.assert_array_equal(again.y, whole.y)


@pytest.mark.slow
def test_another_sweep_gets_its_own_group_and_names_are_checked(tmp_path):
    out = tmp_path / "sweep.h5"
    dl.sweep(LORENZ(), SPACE, 1.0, out=out, **OPTIONS)
    other = dl.sweep(LORENZ(), SPACE, 0.5, out=out, **OPTIONS)
    assert other.name == "sweep1"
    with pytest.raises(ValueError, match="already holds a different sweep named 'sweep0'"):
        dl.sweep(LORENZ(), SPACE, 2.0, out=out, name="sweep0", **OPTIONS)
    with pytest.raises(ValueError, match="no sweep like this one to resume"):
        dl.sweep(LORENZ(), SPACE, 2.0, out=out, resume=True, **OPTIONS)
    replaced = dl.sweep(LORENZ(), SPACE, 2.0, out=out, name="sweep0", resume=False, **OPTIONS)
    assert replaced.name == "sweep0"
    assert sorted(s.name for s in dl.open(out).sweeps) == ["sweep0", "sweep1"]


@pytest.mark.slow
def test_the_multi_process_index_reads_as_one_file_from_anywhere(tmp_path, monkeypatch):
    out = tmp_path / "data" / "sweep.h5"
    out.parent.mkdir()
    whole = dl.sweep(LORENZ(), SPACE, 1.0, **OPTIONS)
    job = dl.solvers.SweepJob(LORENZ(), SPACE, 1.0, **OPTIONS)
    record = _sweep_output.record(job, {})
    shards = [(_sweep_store.shard_path(out, p, 2).name, first, count)
              for p, (first, count) in enumerate([(0, 12), (12, 8)])]
    _sweep_store.write_index(out, record, "sweep0", shards)
    for name, first, count in shards:  # what each process writes (here: from the whole)
        with _sweep_store.SweepStore.open(out.parent / name, record.rows(first, count),
                                          name="sweep0") as store:
            for c in store.pending_chunks():
                local = store.writer.points(c)
                rows = slice(first + local.start, first + local.stop)
                store.write(c, y=whole.y[rows], result=whole.result[rows], steps=whole.steps[rows],
                            observables={"x_max": whole.observables["x_max"][rows]})
    monkeypatch.chdir(tmp_path)  # virtual datasets find their shards beside the index
    ds = xr.open_dataset(out, engine="h5netcdf", group="sweeps/sweep0")
    np.testing.assert_array_equal(ds["y"].values, whole.y)
    np.testing.assert_array_equal(ds["x_max"].values, whole.observables["x_max"])
    np.testing.assert_array_equal(ds["chunk_done"].values, 1)
    ds.close()
    with pytest.raises(dl.io.SessionFileError, match="other files"):
        dl.open(out)  # DiffLab's own reader follows no links to other files...
    _sweep_store.consolidate(out, record, "sweep0", shards)  # ...so the shards are copied in
    stored = dl.open(out).sweeps[0]
    assert stored.complete and not list(out.parent.glob("*.shard*"))
    np.testing.assert_array_equal(np.asarray(stored.y), whole.y)


@pytest.mark.slow
def test_two_writers_never_share_a_sweep_file(tmp_path):
    out = tmp_path / "sweep.h5"
    job = dl.solvers.SweepJob(LORENZ(), SPACE, 1.0, **OPTIONS)
    record = _sweep_output.record(job, {})
    with _sweep_store.SweepStore.open(out, record) as store:
        assert store.pending_chunks() == [0, 1, 2, 3]
        with pytest.raises(dl.io.SessionFileError, match="being written by another writer"):
            _sweep_store.SweepStore.open(out, record)
    with _sweep_store.SweepStore.open(out, record) as store:  # free again once closed
        assert store.name == "sweep0"
