"""One writer per session file, across processes and across the file's names.

``writing(path)`` holds two locks before a writer computes or writes anything:

- ``.<name>.lock`` beside the file's real path (symbolic links resolved, so every link
  to a file shares it), made with an exclusive create and never followed if it is a
  link: DiffLab writes only into a lock file it created itself, and names the holder
  (process id and command line) to a second writer. A lock file left by a writer that
  was killed is removed and made anew; anything else in its place is refused.
- an open-file-description lock (``F_OFD_SETLK``) on the data file itself, so a second
  name of it (a hard link) is refused too. It does not conflict with HDF5's own file lock.

Readers take no lock: they may open the file while a writer works. The lock is
re-entrant within a process, so a command that holds it can call the savers that take
it again. Orphan temporary files of earlier writers that were killed
(``.<name>.<8 hex digits>.tmp``) are removed once the lock is held.
"""

import contextlib
import errno
import fcntl
import os
import re
import stat
import struct
import sys
from pathlib import Path

from ._errors import SessionFileError

_held: dict[str, list] = {}  # absolute lock path -> [lock fd, depth, data fd or None]
_MAX_LOCK_BYTES = 1 << 16  # a lock file DiffLab wrote is one short line
_OURS = re.compile(rb"\A(\d+ .*)?\Z", re.DOTALL)


def real_path(path) -> Path:
    """``path`` with every symbolic link resolved: the file a write reaches."""
    return Path(os.path.realpath(os.path.expanduser(os.fspath(path))))


def lock_path(path) -> Path:
    """The lock file of the session file ``path`` (beside the file it names)."""
    real = real_path(path)
    return real.with_name(f".{real.name}.lock")


def check_writable(path) -> None:
    """``SessionFileError`` unless a file could be written at ``path`` (checked, not written)."""
    path = Path(os.fspath(path))
    real = real_path(path)
    folder = real.parent
    if real.is_dir():
        raise SessionFileError(path, "is a directory")
    if not folder.is_dir():
        raise SessionFileError(path, f"the folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise SessionFileError(path, f"the folder {folder} is not writable")
    if real.exists():
        mode = os.stat(real).st_mode
        if not stat.S_ISREG(mode):
            raise SessionFileError(path, "is not a regular file (a device, FIFO or socket)")
        if not os.access(real, os.W_OK):
            raise SessionFileError(path, "the file is read-only")


def _lock_text(path) -> str:
    """The line in the lock file of ``path`` (``""`` if absent or not a plain file)."""
    try:
        fd = os.open(lock_path(path), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return ""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return ""
        return os.read(fd, 4096).decode(errors="replace").strip()
    finally:
        os.close(fd)


def live_writer(path) -> bool:
    """True if the lock file of ``path`` names a process that is running (read only: the
    lock itself is not touched, so a writer starting now is never turned away)."""
    pid = _lock_text(path).partition(" ")[0]
    if not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


def holder(path) -> str:
    """Who holds the lock of ``path``, in words (``""`` if it does not say)."""
    text = _lock_text(path)
    pid, _, command = text.partition(" ")
    return f"process {pid} ({command})" if command else (f"process {pid}" if pid else "")


def _busy(path, who: str = "") -> SessionFileError:
    return SessionFileError(path, "is being written by another DiffLab process"
                                  + (f": {who}" if who else "")
                                  + "; wait for it to finish or choose another file")


def _open_existing(lock: Path, path) -> int | None:
    """A descriptor of the lock file already there, if it is one DiffLab made."""
    try:
        fd = os.open(lock, os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None  # gone meanwhile: try to create it again
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise SessionFileError(path, f"its lock file {lock} is a symbolic link, which "
                                         "DiffLab does not follow; remove the link") from None
        raise SessionFileError(path, f"cannot open its lock file {lock.name} "
                                     f"({os.strerror(error.errno)})") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1 or info.st_size > _MAX_LOCK_BYTES \
            or not _OURS.match(os.pread(fd, _MAX_LOCK_BYTES, 0)):
        os.close(fd)
        raise SessionFileError(path, f"{lock} is in the way of its lock file and was not "
                                     "made by DiffLab; move it away (it is left untouched)")
    return fd


def _flock(fd: int, path) -> None:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        os.close(fd)
        if error.errno not in (errno.EAGAIN, errno.EACCES):
            raise
        raise _busy(path, holder(path)) from None


def _open_locked(lock: Path, path) -> int:
    """A descriptor of a lock file this process created, holding its ``flock``."""
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    while True:
        try:
            fd, created = os.open(lock, flags, 0o644), True
        except FileExistsError:
            fd, created = _open_existing(lock, path), False
            if fd is None:
                continue
        except OSError as error:
            raise SessionFileError(path, f"cannot create its lock file {lock.name} "
                                         f"({os.strerror(error.errno)})") from None
        _flock(fd, path)
        try:  # the holder before us may have removed the lock file after we opened it
            same = os.fstat(fd).st_ino == os.lstat(lock).st_ino
        except FileNotFoundError:
            same = False
        if same and created:
            return fd
        if same:  # left by a writer that stopped: make our own in its place
            with contextlib.suppress(FileNotFoundError):
                os.remove(lock)
        os.close(fd)


_OFD = getattr(fcntl, "F_OFD_SETLK", None)


def _lock_data(real: Path, path) -> int | None:
    """A descriptor of the data file holding a write lock on it (shared by its hard links)."""
    if _OFD is None:
        return None
    try:
        fd = os.open(real, os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None  # absent (it will be made), or not ours to open: the name lock holds
    try:
        fcntl.fcntl(fd, _OFD, struct.pack("hhqqi", fcntl.F_WRLCK, 0, 0, 0, 0))
    except OSError as error:
        os.close(fd)
        if error.errno not in (errno.EAGAIN, errno.EACCES):
            return None
        raise SessionFileError(path, "is being written by another DiffLab process through "
                                     "another name of the same file (a hard link); wait for "
                                     "it to finish or choose another file") from None
    return fd


_TEMPORARY = r"\.{}\.[0-9a-f]{{8}}\.tmp"


def remove_orphans(real: Path) -> None:
    """Remove the temporary files of ``real`` that killed writers left (lock held)."""
    pattern = re.compile(_TEMPORARY.format(re.escape(real.name)))
    with contextlib.suppress(OSError), os.scandir(real.parent) as entries:
        for entry in entries:
            if pattern.fullmatch(entry.name) and entry.is_file(follow_symlinks=False):
                with contextlib.suppress(OSError):
                    os.remove(entry.path)


@contextlib.contextmanager
def writing(path):
    """Hold the one-writer lock of ``path`` for the block (``SessionFileError`` if taken)."""
    check_writable(path)
    real = real_path(path)
    lock = real.with_name(f".{real.name}.lock")
    key = str(lock)
    if key in _held:
        _held[key][1] += 1
        _relock_data(_held[key], real, path)
    else:
        fd = _open_locked(lock, path)
        try:
            data = _lock_data(real, path)
        except BaseException:
            _release(lock, fd)
            raise
        os.write(fd, f"{os.getpid()} {' '.join(sys.argv) or 'python'}\n".encode())
        _held[key] = [fd, 1, data]
        remove_orphans(real)
    try:
        yield
    finally:
        _held[key][1] -= 1
        if _held[key][1] == 0:
            fd, _, data = _held.pop(key)
            if data is not None:
                os.close(data)
            _release(lock, fd)
        else:  # an inner save may have made or replaced the file: lock the one there now
            with contextlib.suppress(SessionFileError):
                _relock_data(_held[key], real, path)


def _relock_data(entry: list, real: Path, path) -> None:
    """Hold the data-file lock on the file at ``real`` now (made or replaced since)."""
    try:
        now = os.stat(real)
    except OSError:
        return
    if entry[2] is not None:
        held = os.fstat(entry[2])
        if (held.st_dev, held.st_ino) == (now.st_dev, now.st_ino):
            return
    fresh = _lock_data(real, path)
    if fresh is not None:
        if entry[2] is not None:
            os.close(entry[2])
        entry[2] = fresh


def _release(lock: Path, fd: int) -> None:
    with contextlib.suppress(OSError):
        os.remove(lock)
    os.close(fd)
