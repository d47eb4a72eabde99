"""Saving never loses work: every save adds to the file; one writer at a time, across processes."""

import os
import subprocess
import sys
import time
from pathlib import Path

import h5py
import jax
import numpy as np
import pytest

import difflab as dl
from difflab.cli import main

EXAMPLE = Path(__file__).parents[2] / "examples" / "sweep_lorenz.toml"


def snapshot(path) -> dict:
    """Every dataset and attribute of a file, by path (values as NumPy arrays)."""
    out = {}

    def visit(name, obj):
        for key in obj.attrs:
            if key in ("DIMENSION_LIST", "REFERENCE_LIST"):  # references: compared by target
                out[f"{name}@{key}"] = np.array(_targets(obj, key))
            else:
                out[f"{name}@{key}"] = np.asarray(obj.attrs[key])
        if isinstance(obj, h5py.Dataset):
            out[name] = obj[()]

    with h5py.File(path, "r") as f:
        f.visititems(visit)
    return out


def _targets(obj, key) -> list[str]:
    """The names of the objects a dimension-scale attribute refers to."""
    refs = obj.attrs[key]
    if key == "REFERENCE_LIST":
        return [f"{obj.file[ref].name}:{dim}" for ref, dim in refs]
    return [obj.file[ref].name for refs_of_dim in refs for ref in refs_of_dim]


def assert_kept(before: dict, after: dict) -> None:
    """Everything in ``before`` is in ``after``, bit for bit."""
    missing = sorted(set(before) - set(after))
    assert not missing, f"lost {missing[:5]}"
    for key, value in before.items():
        np.testing.assert_array_equal(after[key], value, err_msg=key, strict=True)


@pytest.mark.slow
def test_run_out_adds_to_a_sweep_session(tmp_path, capsys):
    """Observed: `difflab sweep ...; difflab run lorenz --out s.h5` deleted the 448-point sweep."""
    path = tmp_path / "s.h5"
    assert main(["sweep", str(EXAMPLE), "--out", str(path)]) == 0
    before = snapshot(path)
    assert main(["run", "lorenz", "--t1", "1", "--out", str(path)]) == 0
    session = dl.open(path)
    assert len(session.sweeps[0]) == 448 and len(session.runs) == 1
    assert session.stored("sweeps", session.sweeps[0].name).attrs["n_points"] == 448
    assert_kept({k: v for k, v in before.items() if not k.startswith("@")}, snapshot(path))


@pytest.mark.slow
def test_run_name_clash_and_foreign_files_need_overwrite(tmp_path, capsys):
    path, notes = tmp_path / "s.h5", tmp_path / "notes.h5"
    argv = ["run", "lorenz", "--t1", "0.1", "--name", "a"]
    assert main([*argv, "--out", str(path)]) == 0
    assert main([*argv, "--out", str(path)]) == 2
    assert "already holds a run named 'a'" in capsys.readouterr().err
    assert main([*argv, "--set", "rho=5", "--out", str(path), "--overwrite"]) == 0
    session = dl.open(path)
    assert session.stored("runs", "a").model.parameters["rho"] == 5.0
    assert float(session.runs["a"].model.rho) == 5.0
    notes.write_text("my notes")
    assert main([*argv, "--out", str(notes)]) == 2
    assert "not an HDF5 file" in capsys.readouterr().err and notes.read_text() == "my notes"
    assert main([*argv, "--out", str(tmp_path / "missing" / "x.h5")]) == 2
    assert "folder" in capsys.readouterr().err


LONG_SWEEP = """\
model = "lorenz"
name = "long"
[solver]
name = "rk4"
t1 = 2000.0
dt = 1e-3
[space.grid]
rho = {{ linspace = [0.0, 28.0, {n}] }}
[output]
n_save = 11
[run]
chunk_size = 1
"""


@pytest.mark.slow
def test_a_second_writer_is_refused_before_it_computes(tmp_path):
    """Observed: `run --out F.h5` while a sweep streamed into F.h5 replaced it; all was lost."""
    path, config = tmp_path / "f.h5", tmp_path / "long.toml"
    config.write_text(LONG_SWEEP.format(n=64))
    sweep = subprocess.Popen([sys.executable, "-m", "difflab", "sweep", str(config), "--out",
                              str(path)], stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not _chunks_done(path):
            assert sweep.poll() is None and time.monotonic() < deadline, sweep.stderr.read()
            time.sleep(0.2)
        start = time.perf_counter()
        run = subprocess.run([sys.executable, "-m", "difflab", "run", "lorenz", "--t1", "1e4",
                              "--dt", "1e-3", "--out", str(path)], capture_output=True, text=True)
        assert run.returncode == 2
        assert "being written by another DiffLab process" in run.stderr
        assert f"process {sweep.pid}" in run.stderr and "sweep" in run.stderr
        assert time.perf_counter() - start < 60  # refused up front (start-up on a busy machine)
        assert len(dl.open(path).sweeps) == 1  # a reader may read while the sweep writes
    finally:
        sweep.kill()
        sweep.wait()


def _chunks_done(path) -> bool:
    try:
        return int(np.sum(dl.open(path).stored("sweeps")[0].variables["chunk_done"].data)) > 0
    except (dl.io.SessionFileError, IndexError, KeyError):
        return False


@pytest.mark.slow
def test_python_saves_add_by_default(tmp_path):
    """Observed: `Sensitivity.save`, `FitResult.save`, `dl.io.save_run` replaced the file."""
    path = tmp_path / "s.h5"
    model = dl.models.get("lotka_volterra")()
    traj = dl.simulate(model, 2.0, dt=1e-2)
    first = dl.io.save_run(path, traj)
    sens = dl.sensitivity(model, 2.0, params=["alpha"], dt=1e-2)
    data = dl.io.Observations(np.asarray(traj.ts[::10]), np.asarray(traj.ys[::10]),
                              model.state_names)
    fit = dl.fit(model.replace(alpha=1.2), data, ["alpha"], dt=1e-2)
    before = snapshot(path)
    names = [dl.io.save(path, sens), dl.io.save(path, fit), dl.io.save(path, traj)]
    session = dl.open(path)
    assert first in session.runs.names() and names[0] in session.sensitivities.names()
    assert names[1] in session.fits.names() and names[2] in session.runs.names()
    stored_fit = session.fits[names[1]]  # the solver's settings, not the optimizer's max_steps
    assert stored_fit.settings["max_steps"] == fit.settings["max_steps"]
    assert stored_fit.params == fit.params and not stored_fit.stopped
    assert_kept({k: v for k, v in before.items() if k.startswith("runs/")}, snapshot(path))
    with pytest.raises(dl.io.SessionFileError, match="already in the file"):
        dl.io.save(path, traj, name=first)


def test_a_run_saved_without_settings_reruns_bit_for_bit(tmp_path):
    """Observed: a run saved without settings= lost its dt; rerun() took 1000 steps, not 60000."""
    model = dl.models.get("lorenz")()
    traj = dl.simulate(model, 6.0, dt=1e-4, n_save=61)
    path = tmp_path / "r.h5"
    dl.io.save_run(path, traj)
    session = dl.open(path)
    stored, group = session.runs[0], session.stored("runs", session.runs[0].name)
    assert group.settings["dt"] == 1e-4 and group.attrs["precision"] == "float64"
    assert stored.settings.dt == 1e-4 and stored.settings.precision == "float64"
    again = stored.rerun()
    assert int(again.steps) == 60000
    np.testing.assert_array_equal(np.asarray(again.ys), np.asarray(stored.ys))
    np.testing.assert_array_equal(np.asarray(traj.rerun().ys), np.asarray(traj.ys))


def test_stochastic_runs_remember_their_key(tmp_path):
    model = dl.models.get("ornstein_uhlenbeck")()
    traj = dl.simulate(model, 1.0, dt=1e-2, key=jax.random.key(7))
    path = tmp_path / "r.h5"
    dl.io.save_run(path, traj)
    np.testing.assert_array_equal(np.asarray(dl.open(path).runs[0].rerun().ys),
                                  np.asarray(traj.ys))


def test_the_lock_is_released_and_leaves_no_file(tmp_path):
    path = tmp_path / "x.h5"
    with dl.io.writing(path):
        assert (tmp_path / ".x.h5.lock").exists()
        with dl.io.writing(path):  # re-entrant in one process
            pass
    assert os.listdir(tmp_path) == []
