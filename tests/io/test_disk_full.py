"""A full disk: one line, and the file as it was (a run) or resumable (a sweep).

In-process the disk is made full by making h5py's writes fail (as HDF5 reports ENOSPC);
through the command line, as root, on a real 2 MiB tmpfs.
"""

import collections
import errno
import os
import shutil
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest

import difflab as dl
from difflab.io import (
    _h5,  # white-box: the row writer of sweeps, to make its writes fail
)
from tests.models_for_tests import Decay

ENOSPC = OSError(errno.ENOSPC, "No space left on device")
HDF5_ENOSPC = RuntimeError("Can't close dataset (file write failed: time = now, errno = 28, "
                           "error message = 'No space left on device')")


@pytest.mark.parametrize("failure", [ENOSPC, HDF5_ENOSPC], ids=["oserror", "hdf5"])
def test_a_run_on_a_full_disk_leaves_the_session_as_it_was(tmp_path, monkeypatch, failure):
    path = tmp_path / "session.h5"
    traj = dl.simulate(Decay(), 1.0, dt=1e-2)
    dl.io.save_run(path, traj, name="kept")
    before = path.read_bytes()

    def full(*args, **kwargs):
        raise failure

    monkeypatch.setattr(h5py.Group, "create_dataset", full)
    with pytest.raises(OSError) as info:
        dl.io.save_run(path, traj, name="lost")
    monkeypatch.undo()
    assert info.value.errno == errno.ENOSPC and info.value.filename == str(path)
    assert info.value.strerror == f"no space left on device; {path} is as it was"
    assert path.read_bytes() == before
    assert dl.open(path).runs.names() == ["kept"]
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_free_space_is_checked_before_anything_is_written(tmp_path, monkeypatch):
    path = tmp_path / "session.h5"
    small = dl.simulate(Decay(), 1.0, dt=1e-2)
    dl.io.save_run(path, small, name="kept")
    before = path.read_bytes()
    usage = collections.namedtuple("usage", "total used free")
    free = usage(10**9, 10**9 - 1_200_000, 1_200_000)
    monkeypatch.setattr(shutil, "disk_usage", lambda _: free)
    big = dl.simulate(Decay(), 100.0, dt=1e-3, n_save=100_001)
    with pytest.raises(OSError, match=r"not enough disk space: run 'big' needs about 1.53 MiB, "
                                      r"and 1.14 MiB is free there") as info:
        dl.io.save_run(path, big, name="big")
    assert info.value.errno == errno.ENOSPC
    with pytest.raises(OSError, match=r"sweep 'wide' \(5,000 points\) needs about 38.3 MiB"):
        dl.sweep(Decay(), {"rate": np.linspace(1, 2, 5000)}, 1.0, dt=1e-3, n_save=1001,
                 out=tmp_path / "sweep.h5", name="wide")
    assert path.read_bytes() == before and not (tmp_path / "sweep.h5").exists()


def test_a_sweep_that_fills_the_disk_keeps_its_chunks_and_resumes(tmp_path, monkeypatch):
    path, whole = tmp_path / "sweep.h5", tmp_path / "whole.h5"
    space, kw = {"rate": np.linspace(1, 2, 12)}, {"dt": 1e-2, "n_save": 11, "chunk_size": 4}
    calls = {"n": 0}
    write = _h5.RowWriter.write

    def fills_up(self, start, block):
        calls["n"] += 1
        if calls["n"] > 8:  # two chunks of y, result, steps, chunk_done; then the disk is full
            raise ENOSPC
        write(self, start, block)

    monkeypatch.setattr(_h5.RowWriter, "write", fills_up)
    with pytest.raises(OSError) as info:
        dl.sweep(Decay(), space, 1.0, out=path, name="scan", **kw)
    monkeypatch.undo()
    assert info.value.errno == errno.ENOSPC and "\n" not in str(info.value)
    assert "the chunks written before are kept" in info.value.strerror
    stored = dl.open(path).sweeps[0]
    assert not stored.complete and int(np.sum(np.asarray(stored.result) == 0)) == 8
    resumed = dl.sweep(Decay(), space, 1.0, out=path, name="scan", **kw)
    assert resumed.complete and resumed.stats["resumed"] == 8
    np.testing.assert_array_equal(resumed.y, dl.sweep(Decay(), space, 1.0, out=whole, **kw).y)


# -- through the command line, on a real full disk (root only) ---------------------------


@pytest.fixture
def tiny_disk(tmp_path):
    """A 2 MiB tmpfs mounted for the test (skipped where mounting is not allowed)."""
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("mounting a small tmpfs needs root")
    where = tmp_path / "tiny"
    where.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(where)],
                             capture_output=True, check=False)
    if mounted.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    yield where
    subprocess.run(["umount", "-l", str(where)], capture_output=True, check=False)


NO_CHECK = ("import sys; import difflab.io._h5 as h; h.check_free_space = lambda *a, **k: None; "
            "from difflab.cli import main; sys.argv = ['difflab', *sys.argv[1:]]; "
            "sys.exit(main())")


def _difflab(*args, check_space=True, cwd=None):
    """``difflab ARGS`` in a new process; ``check_space=False``: with no check of free space
    before writing, so that the write itself meets the full disk."""
    head = ["-m", "difflab"] if check_space else ["-c", NO_CHECK]
    return subprocess.run([sys.executable, *head, *map(str, args)], capture_output=True,
                          text=True, timeout=600, cwd=cwd, check=False)


def _one_error_line(result) -> str:
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("difflab:")]
    assert len(lines) == 1, result.stderr
    return lines[0]


RUN = ["run", "lorenz", "--t1", "100", "--dt", "1e-3"]


@pytest.mark.slow
@pytest.mark.parametrize("check_space", [True, False], ids=["checked", "write-fails"])
def test_cli_run_on_a_full_disk_is_one_line_and_the_file_is_as_it_was(tiny_disk, check_space):
    out = tiny_disk / "run.h5"
    assert _difflab(*RUN, "--n-save", "2001", "--out", out).returncode == 0
    before = out.read_bytes()
    result = _difflab(*RUN, "--n-save", "100001", "--out", out, check_space=check_space)
    assert result.returncode == 1  # not a segfault (139) in HDF5 on the way out
    line = _one_error_line(result)
    assert line.startswith(f"difflab: error: {out}: ")
    assert ("not enough disk space" if check_space else "is as it was") in line
    assert result.stderr.strip() == line
    assert out.read_bytes() == before and sorted(p.name for p in tiny_disk.iterdir()) == ["run.h5"]
    assert dl.open(out).runs.names() == ["run0"]


SWEEP = """\
model = "lorenz"
[solve]
t1 = 1.0
dt = 1e-3
n_save = 1001
[space.grid]
rho = { linspace = [0.0, 28.0, 200] }
[run]
chunk_size = 20
"""


@pytest.mark.slow
def test_cli_sweep_filling_the_disk_is_one_line_and_resumes_elsewhere(tiny_disk, tmp_path):
    config, out = tmp_path / "sweep.toml", tiny_disk / "sweep.h5"
    config.write_text(SWEEP)
    refused = _difflab("sweep", config, "--out", out)  # about 4.6 MiB: said before starting
    assert refused.returncode == 1 and not out.exists()
    assert "not enough disk space: sweep 'sweep0' (200 points) needs about" in \
        _one_error_line(refused)
    result = _difflab("sweep", config, "--out", out, check_space=False)
    assert result.returncode == 1
    assert _one_error_line(result).endswith(
        "no space left on device; the chunks written before are kept: free some space and "
        "run the sweep again to resume")
    moved = tmp_path / "moved.h5"
    shutil.copyfile(out, moved)  # the disk made bigger
    done = int(np.sum(np.asarray(dl.open(moved).sweeps[0].result) == 0))
    assert 0 < done < 200
    resumed = _difflab("sweep", config, "--out", moved, "--json")
    assert resumed.returncode == 0, resumed.stderr
    assert f'"resumed": {done}' in resumed.stdout and dl.open(moved).sweeps[0].complete
    Path(out).unlink()
