"""Bad and hostile files: each gives a SessionFileError naming the file and the problem."""

import os
import pickle
import subprocess
import sys

import h5py
import numpy as np
import pytest
import xarray as xr

import difflab as dl
from difflab.cli import main
from difflab.io import SessionFileError


def _edit(path, change):
    with h5py.File(path, "r+") as f:
        change(f)
    return path


def _set(name, value, **kwargs):
    def change(f):
        obj, _, attr = name.rpartition("@")
        f[obj or "/"].attrs.create(attr, value, **kwargs) if kwargs else f[obj or "/"].attrs.__setitem__(attr, value)
    return change


def _replace(name, data, **kwargs):
    def change(f):
        del f[name]
        f.create_dataset(name, data=data, **kwargs)
    return change


def _delete(name):
    def change(f):
        del f[name]
    return change


EDITS = {
    "newer version": (_set("@difflab_schema_version", np.int64(99)), "schema version 99 is newer"),
    "version as text": (_set("@difflab_schema_version", "1"), "wrong type"),
    "other format": (_set("@difflab_format", "something-else"), "difflab_format"),
    "no models group": (_delete("models"), "missing group 'models'"),
    "missing y": (_delete("runs/run0/y"), "'y' is missing"),
    "missing time": (_delete("runs/run0/time"), "'time' is missing"),
    "y as strings": (_replace("runs/run0/y", np.array([["a"], ["b"]], dtype=object),
                              dtype=h5py.string_dtype()), "'y' has dtype object, expected floats"),
    "y one-dimensional": (_replace("runs/run0/y", np.zeros(3)), "'y' has 1 dimensions"),
    "y wrong dtype": (_replace("runs/run0/y", np.array([["a"]], dtype="S1")), "dtype"),
    "y wrong shape": (_replace("runs/run0/y", np.zeros((3, 3))), "has shape (3, 3), expected"),
    "state as numbers": (_replace("runs/run0/state", np.zeros(3)), "'state' has dtype float64"),
    "unknown model": (_set("runs/run0@model", "ghost"), "model 'ghost', which the file"),
    "model key a number": (_set("runs/run0@model", np.int64(3)),
                           "attribute 'model' has the wrong type"),
    "absurd dimension": (_replace("runs/run0/time", None, shape=(2**40,), dtype="f8",
                                  chunks=(1024,), maxshape=(None,)), "absurd shape"),
    "absurd attribute": (_set("runs/run0@y0", np.zeros(2_000_000)), "too many"),
    "huge text": (_set("runs/run0@solver", "x" * (2 << 20)), "characters long"),
    "compound attribute": (_set("runs/run0@t1", np.zeros(1, dtype=[("a", "f8"), ("b", "i4")])),
                           "unsupported type"),
    "reference attribute": (lambda f: f["runs/run0"].attrs.__setitem__("t0", f["models"].ref),
                            "unsupported type"),
    "bad utf-8": (_set("runs/run0@solver", np.bytes_(b"\xff\xfe"),
                       dtype=h5py.string_dtype("utf-8", 2)), "not UTF-8"),
    "sweep points mismatch": (_set("sweeps/sweep0@n_points", np.int64(9)), "n_points is 9"),
    "sweep chunks mismatch": (_set("sweeps/sweep0@chunk_size", np.int64(1)), "chunks do not cover"),
    "zero chunk size": (_set("sweeps/sweep0@chunk_size", np.int64(0)), "must be at least 1"),
    "bad origin": (_set("models/lorenz@origin", "eval"), "origin must be"),
    "leaf missing": (_delete("models/lorenz/leaves/leaf_0"), "leaf 0 is missing"),
    "invalid json layout": (_set("app@plot_layout", "{not json"), "not valid JSON"),
    "external link": (lambda f: (f.__delitem__("runs/run0/y"), f["runs/run0"].__setitem__(
        "y", h5py.ExternalLink("/etc/passwd", "/y"))), "'y' is missing"),
    "sensitivity empty": (lambda f: (f.__delitem__("sensitivities/sensitivity0/gradient"),
                                     f.__delitem__("sensitivities/sensitivity0/dy_dp")),
                          "neither gradient nor dy_dp"),
    "pickle in an attribute": (_set("runs/run0@solver", np.void(pickle.dumps(print))),
                               "unsupported type"),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", EDITS)
def test_a_broken_session_is_refused_with_the_file_and_the_problem(session_path, case):
    change, message = EDITS[case]
    _edit(session_path, change)
    with pytest.raises(SessionFileError) as caught:
        dl.open(session_path)
    assert str(caught.value).startswith(f"{session_path}: ")
    assert message in str(caught.value) and "\n" not in str(caught.value)


def _write(path, data: bytes):
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("case, message", [
    ("empty", "not an HDF5 file"), ("text", "not an HDF5 file"), ("zip", "not an HDF5 file"),
    ("truncated", "damaged or truncated"), ("netcdf", "not a DiffLab session"),
    ("plain hdf5", "not a DiffLab session"), ("missing", "no such file"),
    ("directory", "is a directory"),
])
def test_files_that_are_not_sessions(session_path, tmp_path, case, message):
    path = tmp_path / f"{case}.h5"
    if case == "empty":
        _write(path, b"")
    elif case == "text":
        _write(path, b"t,x\n0,1\n")
    elif case == "zip":
        np.savez(tmp_path / "a.npz", a=np.zeros(3))
        os.replace(tmp_path / "a.npz", path)
    elif case == "truncated":
        data = session_path.read_bytes()
        _write(path, data[: len(data) // 2])
    elif case == "netcdf":
        xr.Dataset({"t": ("time", np.arange(3.0))}).to_netcdf(path, engine="h5netcdf")
    elif case == "plain hdf5":
        with h5py.File(path, "w") as f:
            f["x"] = np.arange(3)
    elif case == "directory":
        path.mkdir()
    with pytest.raises(SessionFileError, match=message):
        dl.open(path)


@pytest.mark.slow
def test_reading_a_damaged_dataset_later_is_a_session_file_error(session_path):
    sweep = dl.open(session_path).sweeps[0]
    _edit(session_path, _delete("sweeps/sweep0/y"))
    with pytest.raises(SessionFileError, match="gone from the file"):
        sweep.y[0]


def test_the_cli_prints_one_line_and_exits_2(session_path, capsys):
    _edit(session_path, EDITS["newer version"][0])
    assert main(["open", str(session_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"difflab: error: {session_path}: schema")


@pytest.mark.slow
def test_the_installed_command_shows_no_traceback(tmp_path):
    path = _write(tmp_path / "junk.h5", b"\x89HDF\r\n\x1a\n" + b"\0" * 100)
    result = subprocess.run([sys.executable, "-m", "difflab", "open", str(path)],
                            capture_output=True, text=True, timeout=120)
    lines = result.stderr.splitlines()
    assert result.returncode == 2 and len(lines) == 1
    assert lines[0].startswith(f"difflab: error: {path}: damaged or truncated HDF5 file (")
