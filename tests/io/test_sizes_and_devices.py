"""Devices, FIFOs and sizes: every read is bounded, every size a file carries is checked."""

import os

import h5py
import numpy as np
import pytest

import difflab as dl
from difflab.io import SessionFileError
from difflab.models import FileReadError, ModelFileError, read_bounded


@pytest.fixture
def fifo(tmp_path):
    def make(name):
        path = tmp_path / name
        os.mkfifo(path)
        return path
    return make


@pytest.fixture
def zero_link(tmp_path):
    def make(name):
        path = tmp_path / name
        path.symlink_to("/dev/zero")
        return path
    return make


def test_the_shared_reader_refuses_devices_fifos_and_big_files(tmp_path, fifo):
    big = tmp_path / "big.txt"
    big.write_bytes(b"x" * 101)
    with pytest.raises(FileReadError, match="is a device"):
        read_bounded("/dev/zero")
    with pytest.raises(FileReadError, match="is a FIFO"):
        read_bounded(fifo("pipe.txt"))
    with pytest.raises(FileReadError, match="too large"):
        read_bounded(big, limit=100)
    assert read_bounded(big, limit=101) == b"x" * 101


@pytest.mark.parametrize("name", ["m.eqn", "m.py"])
def test_model_files_that_are_devices_or_fifos_are_refused(name, zero_link, fifo):
    for path in (zero_link(name), fifo("f" + name)):
        with pytest.raises(ModelFileError, match="not a regular file"):
            dl.models.resolve(str(path))
        with pytest.raises(ModelFileError, match="not a regular file"):
            dl.models.peek_file(path)  # what `difflab trust` reads


def test_csv_that_is_a_device_or_a_fifo_is_refused(zero_link, fifo):
    for path in (zero_link("data.csv"), fifo("pipe.csv")):
        with pytest.raises(ValueError, match="not a regular file"):
            dl.io.read_csv(path)


# -- static fields of a stored model ---------------------------------------------------


def _sized_session(path, n):
    with dl.io.write_session(path) as s:
        key = s.add_model(dl.models.get("kuramoto")(n=4))
    with h5py.File(path, "r+") as f:
        f[f"models/{key}"].attrs["static_n"] = n
    return path


@pytest.mark.parametrize("n, message", [(np.int64(10**9), "out of range"),
                                        (np.int64(-5), "out of range"),
                                        ("abc", "does not fit the model"),
                                        (np.float64(2.5), "does not fit the model")])
def test_a_stored_model_s_static_fields_are_checked_on_open(tmp_path, n, message):
    path = _sized_session(tmp_path / "crafted.h5", n)
    with pytest.raises(SessionFileError, match=f"static_n = .*{message}"):
        dl.open(path)


def test_a_stored_model_with_a_sensible_size_opens(tmp_path):
    path = _sized_session(tmp_path / "fine.h5", np.int64(7))
    model = next(iter(dl.open(path).models.values())).build()
    assert model.n == 7


def test_an_unknown_static_setting_opens_but_is_not_built(tmp_path):
    """A setting the model does not have (an earlier version's) is never used: the file
    opens (``tests/io/test_older_models.py``), and rebuilding the model is refused."""
    path = _sized_session(tmp_path / "crafted.h5", np.int64(4))
    with h5py.File(path, "r+") as f:
        f["models"][next(iter(f["models"]))].attrs["static_size"] = np.int64(3)
    record = next(iter(dl.open(path).models.values()))
    with pytest.raises(ValueError, match="kuramoto has no setting 'size' any more"):
        record.build()
