"""One writer per session file, across processes: a lock file beside it, held while writing.

``writing(path)`` takes ``.<name>.lock`` with ``flock`` before a writer computes or
writes anything, and names the holder (process id and command line) to a second writer.
Readers take no lock: they may open the file while a writer works. The lock is
re-entrant within a process, so a command that holds it can call the savers that take
it again.
"""

import contextlib
import errno
import fcntl
import os
import sys
from pathlib import Path

from ._errors import SessionFileError

_held: dict[str, list] = {}  # absolute lock path -> [file descriptor, depth]


def lock_path(path) -> Path:
    """The lock file of the session file ``path``."""
    path = Path(os.path.abspath(os.fspath(path)))
    return path.with_name(f".{path.name}.lock")


def check_writable(path) -> None:
    """``SessionFileError`` unless a file could be written at ``path`` (checked, not written)."""
    path = Path(os.fspath(path))
    folder = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise SessionFileError(path, "is a directory")
    if not folder.is_dir():
        raise SessionFileError(path, f"the folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise SessionFileError(path, f"the folder {folder} is not writable")
    if path.exists() and not os.access(path, os.W_OK):
        raise SessionFileError(path, "the file is read-only")


def holder(path) -> str:
    """Who holds the lock of ``path``, in words (``""`` if it does not say)."""
    try:
        text = lock_path(path).read_text(errors="replace").strip()
    except OSError:
        return ""
    pid, _, command = text.partition(" ")
    return f"process {pid} ({command})" if command else (f"process {pid}" if pid else "")


def _open_locked(lock: Path, path) -> int:
    """A descriptor of ``lock`` holding its exclusive ``flock`` (the file, not a stale link)."""
    while True:
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as error:
            raise SessionFileError(path, f"cannot create its lock file {lock.name} "
                                         f"({os.strerror(error.errno)})") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            os.close(fd)
            if error.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            who = holder(path)
            raise SessionFileError(path, "is being written by another DiffLab process"
                                         + (f": {who}" if who else "")
                                         + "; wait for it to finish or choose another file"
                                   ) from None
        try:  # the holder before us may have removed the lock file after we opened it
            if os.fstat(fd).st_ino == os.stat(lock).st_ino:
                return fd
        except FileNotFoundError:
            pass
        os.close(fd)


@contextlib.contextmanager
def writing(path):
    """Hold the one-writer lock of ``path`` for the block (``SessionFileError`` if taken)."""
    check_writable(path)
    lock = lock_path(path)
    key = str(lock)
    if key in _held:
        _held[key][1] += 1
    else:
        fd = _open_locked(lock, path)
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()} {' '.join(sys.argv) or 'python'}\n".encode())
        _held[key] = [fd, 1]
    try:
        yield
    finally:
        _held[key][1] -= 1
        if _held[key][1] == 0:
            fd = _held.pop(key)[0]
            with contextlib.suppress(OSError):
                os.remove(lock)
            os.close(fd)
