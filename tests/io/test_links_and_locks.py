"""Locks and writes by the file's identity: links, lock files that are not ours, orphans."""

import os
import shutil
import subprocess
import sys

import h5py
import pytest

import difflab as dl
from difflab.io import SessionFileError

HOLD = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
os.write(fd, b"4242 difflab sweep k.toml --out a.h5\\n")
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
sys.stdin.read()
"""


@pytest.fixture
def other_writer():
    """Another process holding the lock file at a path, until the test ends."""
    procs = []

    def hold(lock):
        proc = subprocess.Popen([sys.executable, "-c", HOLD, str(lock)], text=True,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert proc.stdout.readline().strip() == "held"
        procs.append(proc)

    yield hold
    for proc in procs:
        proc.communicate("", timeout=10)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A short Lorenz run, and a session file holding it twice."""
    model = dl.models.get("lorenz")()
    traj = dl.simulate(model, 0.05, dt=1e-2, n_save=6)
    path = tmp_path_factory.mktemp("links") / "base.h5"
    for name in ("first", "second"):
        dl.io.save_run(path, traj, name=name)
    return dict(path=path, trajs={"lorenz": traj}, models={"lorenz": model})


@pytest.fixture
def session_path(built, tmp_path):
    path = tmp_path / "session.h5"
    shutil.copyfile(built["path"], path)
    return path


def _add_run(path, built, **kwargs):
    return dl.io.save_run(path, built["trajs"]["lorenz"], model=built["models"]["lorenz"],
                          **kwargs)


def test_a_symlinked_lock_file_is_never_followed(session_path, tmp_path, built):
    important = tmp_path / "important.txt"
    important.write_text("DATA\n")
    (tmp_path / ".out.h5.lock").symlink_to(important)
    with pytest.raises(SessionFileError, match="is a symbolic link"):
        _add_run(tmp_path / "out.h5", built)
    assert important.read_text() == "DATA\n" and not (tmp_path / "out.h5").exists()


def test_a_hard_linked_lock_file_is_left_untouched(tmp_path, built):
    important = tmp_path / "important.txt"
    important.write_text("DATA\n")
    os.link(important, tmp_path / ".out.h5.lock")
    with pytest.raises(SessionFileError, match="not made by DiffLab"):
        _add_run(tmp_path / "out.h5", built)
    assert important.read_text() == "DATA\n"


def test_a_lock_file_left_by_a_killed_writer_is_replaced(tmp_path, built):
    (tmp_path / ".out.h5.lock").write_text("999999 difflab run lorenz --out out.h5\n")
    assert _add_run(tmp_path / "out.h5", built) == "run0"
    assert not (tmp_path / ".out.h5.lock").exists()


def test_a_symlink_shares_the_lock_of_the_file(session_path, tmp_path, built, other_writer):
    link = tmp_path / "b.h5"
    link.symlink_to(session_path.name)
    other_writer(tmp_path / f".{session_path.name}.lock")
    before = session_path.read_bytes()
    with pytest.raises(SessionFileError, match="process 4242 .difflab sweep k.toml"):
        _add_run(link, built)
    with pytest.raises(SessionFileError, match="being written by another DiffLab process"):
        with dl.io.stream_session(link):
            pass
    assert session_path.read_bytes() == before


def test_a_hard_link_shares_the_lock_of_the_file(session_path, tmp_path, built):
    link = tmp_path / "b.h5"
    os.link(session_path, link)
    with dl.io.writing(session_path):
        with pytest.raises(SessionFileError, match="another name of the same file"):
            _add_run(link, built)
    assert len(dl.open(link).runs) == len(dl.open(session_path).runs)


def test_writing_through_a_symlink_writes_the_file_it_names(session_path, tmp_path, built):
    link = tmp_path / "link.h5"
    link.symlink_to(session_path)
    runs = len(dl.open(session_path).runs)
    _add_run(link, built, name="added")
    assert link.is_symlink() and os.readlink(link) == str(session_path)
    assert len(dl.open(session_path).runs) == runs + 1


def test_orphan_temporaries_of_a_killed_save_are_removed_at_the_next_save(session_path, built):
    folder = session_path.parent
    orphan = folder / f".{session_path.name}.0123abcd.tmp"
    orphan.write_bytes(b"\0" * 1000)
    others = [folder / ".other.h5.0123abcd.tmp", folder / f".{session_path.name}.zz.tmp"]
    for path in others:
        path.write_bytes(b"keep")
    _add_run(session_path, built, name="again")
    assert not orphan.exists() and all(p.read_bytes() == b"keep" for p in others)


def test_a_device_is_not_a_session_to_write(tmp_path, built):
    link = tmp_path / "null.h5"
    link.symlink_to("/dev/null")
    with pytest.raises(SessionFileError, match="not a regular file"):
        _add_run(link, built)


def test_files_h5py_wrote_are_readable_after_a_locked_write(session_path, built):
    _add_run(session_path, built, name="plain")
    with h5py.File(session_path, "r") as f:
        assert "plain" in f["runs"]


# -- exporters replace nothing that is not theirs --------------------------------------


def test_an_export_never_replaces_a_session(session_path, built):
    before = session_path.read_bytes()
    run = dl.open(session_path).runs[0]
    for export in (dl.io.export_csv, dl.io.export_npz):
        with pytest.raises(FileExistsError, match="not replaced unless"):
            export(run, session_path)
        with pytest.raises(FileExistsError, match="never replaces"):
            export(run, session_path, overwrite=True)
    assert session_path.read_bytes() == before and len(dl.open(session_path).runs) == 2


def test_an_export_replaces_another_file_only_when_asked(tmp_path, built):
    path = tmp_path / "notes.csv"
    path.write_text("mine\n")
    with pytest.raises(FileExistsError):
        dl.io.export_csv(built["trajs"]["lorenz"], path)
    assert path.read_text() == "mine\n"
    dl.io.export_csv(built["trajs"]["lorenz"], path, overwrite=True)
    assert path.read_text().startswith("# DiffLab")


def test_a_file_made_or_replaced_under_the_lock_is_locked_through_its_hard_links(tmp_path,
                                                                                 built):
    path, link = tmp_path / "a.h5", tmp_path / "c.h5"
    with dl.io.writing(path):  # as a sweep does: the lock first, the file made inside
        _add_run(path, built, name="made")
        os.link(path, link)
        with pytest.raises(SessionFileError, match="another name of the same file"):
            _add_run(link, built, name="other")
        _add_run(path, built, name="replaced")  # an atomic save: a new file under the name
        os.remove(link)
        os.link(path, link)
        with pytest.raises(SessionFileError, match="another name of the same file"):
            _add_run(link, built, name="other")
    assert [r for r in dl.open(path).stored("runs")][0].name == "made"
