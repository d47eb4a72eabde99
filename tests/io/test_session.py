"""Session files: what they hold, rerunning, saving again, streaming writers, export."""

import csv
import hashlib
import json

import h5py
import numpy as np
import pytest

import difflab as dl
from difflab.io._session import LazyArray

from .conftest import N_SAVE, T1, load_user_model, tree_of


def _equal(a, b):
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_open_finds_every_result_with_its_model_and_settings(built):
    s = dl.open(built["path"])
    assert s.schema_version == dl.io.SCHEMA_VERSION == 3
    assert [len(s.runs), len(s.sweeps), len(s.fits), len(s.sensitivities)] == [4, 1, 1, 1]
    run = s.runs["run0"]
    assert isinstance(run, dl.Trajectory) and run.name == "run0"
    assert run is s.runs[0] and run.state_names == ("x", "y", "z")
    _equal(run.ts, built["trajs"]["lorenz"].ts)
    _equal(run.ys, built["trajs"]["lorenz"].ys)
    stored = s.stored("runs", "run0")
    assert stored.model.origin == "builtin" and stored.model.name == "lorenz"
    assert stored.model.parameters == {"sigma": 10.0, "rho": 28.0, "beta": 8.0 / 3.0}
    assert isinstance(run.model, dl.models.get("lorenz")) and float(run.model.rho) == 28.0
    assert stored.settings["solver"] == "rk4" and stored.settings["t1"] == T1
    assert stored.settings["n_save"] == N_SAVE
    assert run.settings.solver == "rk4" and run.settings.t1 == T1
    assert run.settings.n_save == N_SAVE and int(run.result) == 0 and run.message == "success"
    assert s.plot_layout == {"plots": [{"x": "time", "y": ["x", "y"]}]}
    assert s.app_settings == {"dark": True}
    with pytest.raises(KeyError, match="no result named 'nope'"):
        s.runs["nope"]


def test_provenance_names_versions_devices_precision_time_and_command(built):
    s = dl.open(built["path"])
    record = s.stored("runs", s.runs[0].name).provenance
    for package in ("difflab", "jax", "jaxlib", "diffrax", "equinox", "h5py"):
        assert record[f"{package}_version"] not in ("", "not installed")
    assert record["difflab_version"] == dl.__version__
    assert record["backend"] == "cpu" and record["precision"] == "float64"
    assert record["device_count"] >= 1 and len(record["devices"]) == record["device_count"]
    assert record["command_line"] == "pytest session" and record["time"].startswith("20")


def test_big_results_are_read_lazily(built):
    sweep = dl.open(built["path"]).sweeps[0]
    assert isinstance(sweep.y, LazyArray) and sweep.y.shape == (8, N_SAVE, 3)
    assert sweep.y[2:4].shape == (2, N_SAVE, 3)


def test_runs_rerun_to_the_same_result(built):
    s = dl.open(built["path"])
    for name in ("run0", "run1", "hybrid"):
        run = s.runs[name]
        again = run.rerun()
        _equal(again.ys, run.ys)
        _equal(again.ts, run.ts)
    assert s.stored("runs", "run1").attrs["seed"] == 7
    assert s.stored("runs", "run1").attrs["key_impl"] == "threefry2x32"
    assert s.runs["run1"].settings.key[0] == "threefry2x32"
    _equal(s.stored("runs", "hybrid").model.build().correction.layers[0].weight,
           built["models"]["hybrid"].correction.layers[0].weight)
    _equal(s.runs["hybrid"].model.correction.layers[0].weight,
           built["models"]["hybrid"].correction.layers[0].weight)


def test_a_sweep_point_reruns_to_its_stored_trajectory(built):
    s = dl.open(built["path"])
    sweep = s.sweeps[0]
    stored = s.stored("sweeps", sweep.name)
    assert sweep.complete and stored.complete and stored.parameter_names == ("rho", "sigma")
    assert sweep.space.names == ("rho", "sigma")
    _equal(stored.variables["parameters"].data, built["grid"])
    _equal(np.column_stack([sweep.space.columns[n] for n in ("rho", "sigma")]), built["grid"])
    assert sweep.point(5) == {"rho": 28.0, "sigma": 10.0}
    _equal(sweep.rerun(5).ys, sweep.y[5])
    _equal(sweep.y[5], dl.simulate(built["models"]["lorenz"].replace(sigma=10.0), T1,
                                   n_save=N_SAVE).ys)
    assert np.all(np.asarray(sweep.result) == 0)


def test_fits_and_sensitivities_hold_their_arrays_and_models(built):
    s = dl.open(built["path"])
    fit = s.fits[0]
    stored = s.stored("fits", fit.name)
    _equal(fit.loss_history, [3.0, 1.0, 0.25])
    _equal(fit.parameter_history, [[20.0], [25.0], [27.5]])
    assert stored.fitted_model.parameters["rho"] == 27.5 and stored.parameter_names == ("rho",)
    assert float(fit.model.rho) == 27.5 and fit.names == ("rho",)
    assert stored.attrs["optimizer"] == "adam" and stored.attrs["loss_name"] == "mse"
    _equal(stored.data["y"].data, np.asarray(built["trajs"]["lorenz"].ys)[:, :1])
    _equal(fit.data.y, np.asarray(built["trajs"]["lorenz"].ys)[:, :1])
    sens = s.sensitivities[0]
    stored = s.stored("sensitivities", sens.name)
    _equal(sens.gradient, [0.5, -1.5])
    assert sens.raw.shape == (N_SAVE, 3, 2) and stored.attrs["run"] == "run0"
    assert stored.attrs["value"] == 1.25 and stored.attrs["method"] == "forward"


def test_a_user_model_is_stored_by_path_hash_and_source_and_never_run(built):
    marker = built["user_file"].with_suffix(".ran")
    s = dl.open(built["path"])
    run = s.runs["user"]
    record = s.stored("runs", "user").model
    assert run.model is record  # a record: DiffLab does not build a user model
    source = built["user_file"].read_bytes()
    assert record.origin == "user" and record.name == "Decay"
    assert record.path == str(built["user_file"]) and record.source == source.decode()
    assert record.sha256 == hashlib.sha256(source).hexdigest()
    with pytest.raises(ValueError, match="never runs code from a session file"):
        run.rerun()
    assert not marker.exists()
    decay = load_user_model(built["user_file"])  # the user loads it explicitly
    marker.unlink()
    _equal(run.rerun(model=decay()).ys, run.ys)  # stored k=0.25, not the default 0.5


def test_static_fields_rebuild_the_model(tmp_path):
    oscillators = dl.models.get("kuramoto")(K=0.3, n=7)
    with dl.io.write_session(tmp_path / "k.h5") as s:
        key = s.add_model(oscillators)
        assert s.add_model(oscillators) == key  # one record per distinct model
    record = dl.open(tmp_path / "k.h5").models[key]
    assert record.static == {"n": 7}
    rebuilt = record.build()
    assert rebuilt.n == 7 and float(rebuilt.K) == 0.3


@pytest.mark.slow
def test_saving_an_opened_session_again_keeps_the_same_data(session_path, tmp_path):
    before = tree_of(session_path)
    dl.io.save(tmp_path / "copy.h5", dl.open(session_path))
    assert tree_of(tmp_path / "copy.h5") == before
    dl.io.save(session_path, dl.open(session_path))  # onto itself, through a temporary file
    assert tree_of(session_path) == before


def test_appending_adds_a_run_and_keeps_the_rest(session_path, built):
    traj = built["trajs"]["lorenz"]
    name = dl.io.save_run(session_path, traj, model=built["models"]["lorenz"],
                          settings=dict(t1=T1, n_save=N_SAVE))
    s = dl.open(session_path)
    assert name == "run4" and len(s.runs) == 5 and len(s.sweeps) == 1
    assert s.stored("runs", "run4").attrs["model"] == s.stored("runs", "run0").attrs["model"]
    assert len(s.provenance) == 2


@pytest.mark.slow
def test_a_streamed_run_grows_chunk_by_chunk(tmp_path):
    model = dl.models.get("van_der_pol")()
    path = tmp_path / "stream.h5"
    with dl.io.stream_session(path) as s:
        writer = s.new_run(model=model, settings=dict(t1=2.0, n_save=201), chunk_size=50)
        s.start_swmr()
        for chunk in dl.stream(model, 2.0, n_save=201, chunk_size=50):
            writer.append_chunk(chunk)
            assert writer.n_written == chunk.start + len(chunk.ts)
        writer.finish(result=0, steps=1000)
    s = dl.open(path)
    run, stored = s.runs[0], s.stored("runs", s.runs[0].name)
    assert stored.complete and stored.attrs["steps"] == 1000 and int(run.steps) == 1000
    _equal(run.ys, dl.simulate(model, 2.0, n_save=201).ys)
    _equal(run.rerun().ys, run.ys)


def test_a_streamed_fit_appends_steps_and_records_its_fitted_model(tmp_path):
    model = dl.models.get("lorenz")()
    path = tmp_path / "fit.h5"
    with dl.io.stream_session(path) as s:
        writer = s.new_fit(model=model, parameter_names=["rho", "beta"], optimizer="adam")
        s.start_swmr()
        for k in range(3):
            writer.append([1.0 / (k + 1)] * 2, [[20.0 + k, 2.0]] * 2)
        writer.finish(fitted_model=model.replace(rho=22.0), result=0, message="converged")
    s = dl.open(path)
    fit = s.fits[0]
    stored = s.stored("fits", fit.name)
    assert stored.complete and stored.attrs["n_steps"] == 6
    assert stored.attrs["result_message"] == "converged"
    assert not fit.stopped and len(fit.loss_history) == 6
    _equal(stored.variables["step"].data, np.arange(6))
    assert stored.fitted_model.parameters["rho"] == 22.0 and float(fit.model.rho) == 22.0


def test_export_runs_and_sweeps_to_csv_and_npz(built, tmp_path):
    s = dl.open(built["path"])
    run, sweep = s.runs[0], s.sweeps[0]
    dl.io.export_csv(run, tmp_path / "run.csv")
    rows = [r for r in csv.reader(open(tmp_path / "run.csv")) if not r[0].startswith("#")]
    assert rows[0] == ["t", "x", "y", "z"]
    _equal(np.array(rows[1:], dtype=float),
           np.column_stack([np.asarray(run.ts), np.asarray(run.ys)]))
    dl.io.export_csv(sweep, tmp_path / "sweep.csv")
    rows = [r for r in csv.reader(open(tmp_path / "sweep.csv")) if not r[0].startswith("#")]
    assert rows[0] == ["point", "rho", "sigma", "result", "t", "x", "y", "z"]
    table = np.array(rows[1:], dtype=float)
    assert table.shape == (8 * N_SAVE, 8)
    _equal(table[N_SAVE * 5 : N_SAVE * 6, 5:], sweep.y[5])
    fit = s.fits[0]
    dl.io.export_csv(fit, tmp_path / "fit.csv")
    rows = [r for r in csv.reader(open(tmp_path / "fit.csv")) if not r[0].startswith("#")]
    assert rows[0] == ["step", "loss", "rho"]
    _equal(np.array(rows[1:], dtype=float), [[0, 3.0, 20.0], [1, 1.0, 25.0], [2, 0.25, 27.5]])
    arrays = {"ys": run.ys, "y": sweep.y, "loss_history": fit.loss_history}
    for result, field in ((run, "ys"), (sweep, "y"), (fit, "loss_history")):
        dl.io.export_npz(result, tmp_path / "r.npz", overwrite=True)
        with np.load(tmp_path / "r.npz", allow_pickle=False) as npz:
            _equal(npz[field], arrays[field])
            assert json.loads(str(npz["attrs"]))["name"] == result.name
    with np.load(tmp_path / "r.npz", allow_pickle=False) as npz:
        assert list(npz["names"]) == ["rho"]
        assert json.loads(str(npz["attrs"]))["params.rho"] == 27.5
        _equal(npz["parameter_history"], [[20.0], [25.0], [27.5]])


@pytest.mark.slow
def test_compression_is_a_choice_and_stays_readable(built, tmp_path):
    s = dl.open(built["path"])
    dl.io.save(tmp_path / "z.h5", s, compress=True)
    with h5py.File(built["path"]) as plain, h5py.File(tmp_path / "z.h5") as packed:
        assert plain["sweeps/sweep0/y"].compression is None
        y = packed["sweeps/sweep0/y"]
        assert y.compression == "gzip" and y.shuffle
    _equal(dl.open(tmp_path / "z.h5").sweeps[0].y, s.sweeps[0].y)


def test_version_0_files_are_upgraded_on_open(tmp_path):
    path = tmp_path / "old.h5"
    model = dl.models.get("lorenz")(rho=20.0)
    traj = dl.simulate(model, T1, n_save=N_SAVE)
    with h5py.File(path, "w") as f:  # exactly what DiffLab 0.1's write_run_h5 wrote
        f.attrs["difflab_version"] = "0.1.0"
        run = f.create_group("runs/run0")
        run.attrs["model"] = "lorenz"
        for name, value in model.parameters().items():
            run.attrs[f"param.{name}"] = float(value)
        for key, value in dict(t0=0.0, solver="rk4", n_save=N_SAVE, t1=T1).items():
            run.attrs[key] = value
        run.attrs["result"] = 0
        time = run.create_dataset("time", data=np.asarray(traj.ts))
        time.make_scale("time")
        state = run.create_dataset("state", data=np.array(traj.state_names, dtype="S"))
        state.make_scale("state")
        ys = run.create_dataset("y", data=np.asarray(traj.ys))
        ys.dims[0].attach_scale(time)
        ys.dims[1].attach_scale(state)
    old = dl.open(path)
    assert old.schema_version == 0 and old.runs[0].state_names == ("x", "y", "z")
    _equal(old.runs[0].rerun().ys, traj.ys)
    dl.io.save(tmp_path / "new.h5", old)
    new = dl.open(tmp_path / "new.h5")
    assert new.schema_version == 3
    assert new.stored("runs", new.runs[0].name).model.parameters["rho"] == 20.0
    assert float(new.runs[0].model.rho) == 20.0
    _equal(new.runs[0].ys, traj.ys)


@pytest.mark.slow
def test_difflab_open_summarises_the_file_for_people_and_machines(built, capsys):
    from difflab.cli import main

    assert main(["open", str(built["path"])]) == 0
    out = capsys.readouterr().out
    assert "schema version 3" in out and "runs (4):" in out and "sweeps (1):" in out
    assert "chunks 3/3 done" in out and "user Decay" in out and "pytest session" in out
    assert main(["open", str(built["path"]), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["schema_version"] == 3 and [r["name"] for r in summary["runs"]] == [
        "run0", "run1", "hybrid", "user"]
    assert summary["sweeps"][0]["dims"] == {"time": N_SAVE, "state": 3, "point": 8,
                                            "parameter": 2, "chunk": 3}
    assert summary["models"]["lorenz"]["parameters"]["rho"] == 28.0


@pytest.mark.slow
def test_difflab_run_writes_a_session_and_compresses_on_request(tmp_path):
    from difflab.cli import main

    argv = ["run", "ornstein_uhlenbeck", "--t1", "0.5", "--n-save", "51", "--seed", "3"]
    assert main([*argv, "--out", str(tmp_path / "a.h5")]) == 0
    assert main([*argv, "--out", str(tmp_path / "b.h5"), "--compress"]) == 0
    a, b = dl.open(tmp_path / "a.h5").runs[0], dl.open(tmp_path / "b.h5").runs[0]
    _equal(a.ys, b.ys)
    stored = dl.open(tmp_path / "a.h5").stored("runs", a.name)
    assert stored.attrs["seed"] == 3 and "key_data" in stored.attrs
    assert a.settings.key is not None
    _equal(a.rerun().ys, a.ys)  # the stored key reproduces the noise
    with h5py.File(tmp_path / "b.h5") as f:
        assert f["runs/run0/y"].compression == "gzip"


def test_an_equation_model_reopens_from_its_stored_text(tmp_path):
    text = "dx/dt = v\ndv/dt = -k*x\nparams: k = 2.0\ninit: x = 1, v = 0\n"
    model = dl.models.from_equations(text)().replace(k=3.0)
    traj = dl.simulate(model, 2.0, dt=1e-3)
    path = tmp_path / "eqn.h5"
    with dl.io.write_session(path) as s:
        s.add_run(traj, model=model, settings=dict(t1=2.0, dt=1e-3))
    s = dl.open(path)
    run = s.runs[0]
    record = s.stored("runs", run.name).model
    assert record.origin == "equations" and "dv/dt = -k*x" in record.source
    rebuilt = record.build()  # parsed again: no trust needed, nothing executed
    assert float(rebuilt.k) == 3.0 and float(run.model.k) == 3.0
    np.testing.assert_allclose(run.rerun().ys, traj.ys, rtol=1e-12)


def test_a_sweep_of_initial_states_only_is_written_read_and_rerun(tmp_path):
    """No swept parameter: the file holds an empty parameter list, read back as a grid."""
    path = tmp_path / "y0.h5"
    model = dl.models.get("lorenz")()
    res = dl.sweep(model, dl.grid(**{"y0.x": [1.0, 2.0, 3.0]}), 0.5, dt=1e-3, n_save=5, out=path)
    stored = dl.open(path).sweeps[0]
    assert isinstance(stored, dl.SweepResult) and stored.space.shape == (3,)
    np.testing.assert_array_equal(np.asarray(stored.y), res.y)
    np.testing.assert_array_equal(np.asarray(stored.rerun(2).ys), res.y[2])
    ds = stored.to_xarray()  # the grid's axis y0.x, a CF name: y0_x
    assert ds["y"].dims == ("point", "time", "state") and list(ds["y0_x"].values) == [1, 2, 3]
