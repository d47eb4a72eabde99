"""Reading an untrusted file first in a forked child, so damage cannot hang or crash us.

HDF5 is C code: a damaged file can send it into an endless loop or a segmentation
fault, which no Python ``try`` can catch. Where the platform can ``fork``, a session file
is first read in a child process that reports progress through a pipe; if the child
stops making progress for ``stall_s`` seconds it is killed, and if it dies the HDF5
library crashed. Either way the caller gets a :class:`SessionFileError`, and only a file
the child read through is then opened in this process.
"""

import os
import select
import signal
import time
import warnings

from ._errors import SessionFileError
from ._h5 import _short

STALL_S = 10.0  # seconds without progress before a read counts as stuck
BEAT_S = 0.05  # the child reports progress at most this often


class _Beat:
    def __init__(self, fd: int):
        self.fd, self.last = fd, 0.0

    def __call__(self) -> None:
        now = time.monotonic()
        if now - self.last >= BEAT_S:
            os.write(self.fd, b".")
            self.last = now


def _child(path: str, validate, fd: int) -> None:
    try:
        validate(path, _Beat(fd))
        message = b"ok"
    except SessionFileError as error:
        message = b"E" + error.problem.encode("utf-8", "replace")
    except BaseException as error:  # noqa: BLE001  (any failure is the file's problem)
        message = f"Edamaged or unreadable ({_short(error)})".encode("utf-8", "replace")
    os.write(fd, b"\n" + message)


def _fork():
    from h5py._objects import phil  # no h5py call may be half-way through in the child

    with phil, warnings.catch_warnings():
        # JAX warns that a forked child must not use JAX; this one only reads HDF5.
        warnings.simplefilter("ignore", RuntimeWarning)
        return os.fork()


def _collect(path: str, fd: int, pid: int, stall_s: float) -> bytes:
    data = b""
    while True:
        ready, _, _ = select.select([fd], [], [], stall_s)
        if not ready:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise SessionFileError(path, f"reading it got stuck for {stall_s:g} s "
                                         "(damaged HDF5 metadata)")
        chunk = os.read(fd, 65536)
        if not chunk:
            return data
        data = (data + chunk)[-65536:]


def check(path: str, validate, *, stall_s: float = STALL_S) -> None:
    """Run ``validate(path, beat)`` in a forked child; raise its error here.

    ``beat()`` must be called now and then to show progress. Without ``os.fork`` (or
    with ``DIFFLAB_NO_FORK=1``) ``validate`` runs in this process.
    """
    if not hasattr(os, "fork") or os.environ.get("DIFFLAB_NO_FORK") == "1":
        validate(path, lambda: None)
        return
    read_fd, write_fd = os.pipe()
    pid = _fork()
    if pid == 0:  # the child: validate, report, leave without running any cleanup
        status = 0
        try:
            os.close(read_fd)
            _child(path, validate, write_fd)
        except BaseException:  # noqa: BLE001
            status = 1
        finally:
            os._exit(status)
    os.close(write_fd)
    try:
        data = _collect(path, read_fd, pid, stall_s)
    finally:
        os.close(read_fd)
    _, status = os.waitpid(pid, 0)
    report = data.rpartition(b"\n")[2] if b"\n" in data else b""
    if os.WIFSIGNALED(status) or not report:
        sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        raise SessionFileError(path, "the HDF5 library crashed reading it"
                                     + (f" (signal {sig})" if sig else "") + "; the file is damaged")
    if report != b"ok":
        raise SessionFileError(path, report[1:].decode("utf-8", "replace"))
