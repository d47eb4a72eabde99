"""Crash safety: atomic saves survive a kill; streamed sweeps are read while written (SWMR),
survive their writer dying, and resume."""

import os
import signal
import subprocess
import sys
import textwrap

import h5py
import numpy as np
import pytest

import difflab as dl
from difflab.io import _netcdf

from .conftest import tree_of

KILLED_SAVE = textwrap.dedent("""
    import sys, time
    import difflab as dl
    from difflab.io import _h5, _netcdf

    def stall(original):
        calls = []
        def wrapper(*args, **kwargs):
            result = original(*args, **kwargs)
            calls.append(1)
            if len(calls) == int(sys.argv[3]):
                print("stalled", flush=True)
                time.sleep(120)
            return result
        return wrapper

    if sys.argv[2] == "writing":
        _netcdf._copy = stall(_netcdf._copy)
    else:
        _h5.fsync_path = stall(_h5.fsync_path)
    dl.io.save(sys.argv[1], dl.open(sys.argv[1]), compress=True)
""")

SWEEP_WRITER = textwrap.dedent("""
    import os, sys
    import numpy as np
    import difflab as dl

    path, crash_after = sys.argv[1], int(sys.argv[2])
    model = dl.models.get("lorenz")()
    with dl.io.stream_session(path) as s:
        w = s.new_sweep(model=model, parameter_names=["rho"], values=np.arange(12.0)[:, None],
                        time=np.linspace(0, 1, 11), chunk_size=3)
        s.start_swmr()
        print("ready", flush=True)
        for c in w.pending_chunks():
            sys.stdin.readline()
            w.write_chunk(c, ys=np.full((3, 11, 3), float(c)), result=0, steps=c)
            print(f"wrote {c}", flush=True)
            if c + 1 == crash_after:
                os._exit(1)
        sys.stdin.readline()
        w.finish()
    print("closed", flush=True)
""")


def _start(script, *args):
    return subprocess.Popen([sys.executable, "-c", script, *map(str, args)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def _expect(process, line):
    got = process.stdout.readline().strip()
    assert got == line, f"expected {line!r} from the child, got {got!r}"


@pytest.mark.slow
@pytest.mark.parametrize("stage, call", [("writing", 6), ("fsync", 1)])
def test_killing_a_save_leaves_the_previous_file_intact(session_path, stage, call):
    before = tree_of(session_path)
    child = _start(KILLED_SAVE, session_path, stage, call)
    try:
        _expect(child, "stalled")
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
    assert tree_of(session_path) == before
    assert len(dl.open(session_path).runs) == 4
    leftovers = [p for p in os.listdir(session_path.parent) if p.endswith(".tmp")]
    assert len(leftovers) == 1 and leftovers[0].startswith(".session.h5.")


@pytest.mark.slow
def test_a_failed_save_removes_its_temporary_file(session_path, monkeypatch):
    before = tree_of(session_path)

    def broken(dataset, data):
        raise OSError("disk full")

    monkeypatch.setattr(_netcdf, "_copy", broken)
    with pytest.raises(OSError, match="disk full"):
        dl.io.save(session_path, dl.open(session_path))
    assert tree_of(session_path) == before
    assert os.listdir(session_path.parent) == ["session.h5"]


@pytest.mark.slow
def test_a_reader_follows_a_sweep_another_process_is_writing(tmp_path):
    path = tmp_path / "live.h5"
    writer = _start(SWEEP_WRITER, path, 0)
    try:
        _expect(writer, "ready")
        with h5py.File(path, "r", swmr=True) as f:
            done, y = f["sweeps/sweep0/chunk_done"], f["sweeps/sweep0/y"]
            for c in range(4):
                writer.stdin.write("\n")
                writer.stdin.flush()
                _expect(writer, f"wrote {c}")
                done.refresh()
                y.refresh()
                np.testing.assert_array_equal(done[:], [1] * (c + 1) + [0] * (3 - c))
                assert np.all(y[3 * c : 3 * c + 3] == c)
                opened = dl.open(path)
                live = opened.sweeps[0]
                assert live.complete == (c == 3) and live.y[3 * c, 0, 0] == c
                assert opened.stored("sweeps", live.name).complete == (c == 3)
        writer.stdin.write("\n")
        writer.stdin.flush()
        _expect(writer, "closed")
    finally:
        writer.kill()
        writer.wait(timeout=60)
    session = dl.open(path)
    sweep = session.sweeps[0]
    assert sweep.complete and session.stored("sweeps", sweep.name).attrs["complete"] == 1
    np.testing.assert_array_equal(sweep.steps, np.repeat(np.arange(4), 3))


@pytest.mark.slow
def test_a_sweep_whose_writer_died_stays_readable_and_resumes(tmp_path):
    path = tmp_path / "crashed.h5"
    writer = _start(SWEEP_WRITER, path, 2)
    writer.communicate("\n\n\n", timeout=120)
    assert writer.returncode == 1
    session = dl.open(path)
    sweep, stored = session.sweeps[0], session.stored("sweeps", "sweep0")
    assert not sweep.complete and not stored.complete and stored.attrs["complete"] == 0
    np.testing.assert_array_equal(stored.variables["chunk_done"].data, [1, 1, 0, 0])
    np.testing.assert_array_equal(sweep.result, [0] * 6 + [-1] * 6)
    assert np.all(np.asarray(sweep.y[:6]) == np.repeat([0.0, 1.0], 3)[:, None, None])
    assert np.all(np.isnan(sweep.y[6:]))
    with h5py.File(path, "r") as f:  # left marked closed: any reader opens it as it is
        np.testing.assert_array_equal(f["sweeps/sweep0/chunk_done"][:], [1, 1, 0, 0])
    import xarray as xr

    with xr.open_dataset(path, group="sweeps/sweep0", engine="h5netcdf") as ds:
        assert ds["y"].shape == (12, 11, 3) and float(ds["y"][3, 0, 0]) == 1.0
    with dl.io.stream_session(path) as s:
        resumed = s.sweep_writer("sweep0")
        assert resumed.pending_chunks() == [2, 3]
        for c in resumed.pending_chunks():
            resumed.write_chunk(c, ys=np.full((3, 11, 3), float(c)), result=0, steps=c)
        resumed.finish()
    with h5py.File(path, "r") as f:  # marked closed again: any reader opens it
        assert f["sweeps/sweep0"].attrs["complete"] == 1
    session = dl.open(path)
    sweep = session.sweeps[0]
    assert sweep.complete and session.stored("sweeps", sweep.name).complete
    np.testing.assert_array_equal(sweep.y[:, 0, 0], np.repeat(np.arange(4.0), 3))


@pytest.mark.slow
def test_a_file_left_open_by_a_dead_writer_is_refused_until_recovered(tmp_path):
    path = tmp_path / "left-open.h5"
    code = textwrap.dedent(f"""
        import os
        from difflab.io import _h5, SessionWriter
        writer = SessionWriter(_h5.create_file({str(path)!r}, "w"))
        writer.file.flush()
        os._exit(1)
    """)
    assert subprocess.run([sys.executable, "-c", code], timeout=120).returncode == 1
    with pytest.raises(dl.io.SessionFileError, match="left open for writing"):
        dl.open(path)
    assert dl.io.recover(path) and not dl.io.recover(path)
    assert len(dl.open(path).runs) == 0


@pytest.mark.slow
def test_an_atomic_save_keeps_the_file_permissions(session_path):
    os.chmod(session_path, 0o640)
    dl.io.save(session_path, dl.open(session_path))
    assert os.stat(session_path).st_mode & 0o777 == 0o640
