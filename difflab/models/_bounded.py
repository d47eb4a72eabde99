"""Reading a user's text file safely: a regular file only, and never more than a limit.

Every reader of a model, equation, config or CSV file goes through :func:`read_bounded`:
a device (``/dev/zero``) would otherwise be read without end, since its size reads as 0,
and a FIFO would block for ever on open.
"""

import os
import stat

DEFAULT_LIMIT = 64 << 20  # 64 MiB: far more than any model, equation, config or data file


class FileReadError(ValueError):
    """A file that cannot be read as a user's text file; ``str()`` is one line."""

    def __init__(self, path, problem: str):
        self.path, self.problem = os.fspath(path), problem
        super().__init__(f"{self.path}: {problem}")


def _size(n: int) -> str:
    return f"{n / 2**20:.3g} MiB" if n >= 2**20 else f"{n:,} bytes"


def _checked(info: os.stat_result, path) -> None:
    if stat.S_ISDIR(info.st_mode):
        raise FileReadError(path, "is a directory, not a file")
    if not stat.S_ISREG(info.st_mode):
        kind = ("a FIFO" if stat.S_ISFIFO(info.st_mode) else
                "a device" if stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode)
                else "a socket" if stat.S_ISSOCK(info.st_mode) else "not a plain file")
        raise FileReadError(path, f"is {kind}, not a regular file; DiffLab reads files only")


def read_bounded(path, limit: int = DEFAULT_LIMIT) -> bytes:
    """The bytes of the regular file ``path`` (links followed), refused past ``limit``.

    Checked with ``os.stat`` before opening (no device or FIFO is opened), opened
    non-blocking and checked again on the descriptor, then read to ``limit + 1`` bytes
    at most. Every problem is a :class:`FileReadError` naming the file.
    """
    path = os.path.expanduser(os.fspath(path))
    try:
        _checked(os.stat(path), path)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise FileReadError(path, "no such file") from None
    except OSError as error:
        raise FileReadError(path, f"cannot read it ({error.strerror or error})") from None
    try:
        info = os.fstat(fd)
        _checked(info, path)  # replaced between the two looks
        if info.st_size > limit:
            raise FileReadError(path, f"is too large ({_size(info.st_size)}; "
                                      f"at most {_size(limit)})")
        chunks, total = [], 0
        while total <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except OSError as error:
        raise FileReadError(path, f"cannot read it ({error.strerror or error})") from None
    finally:
        os.close(fd)
    if total > limit:
        raise FileReadError(path, f"is too large (more than {_size(limit)})")
    return b"".join(chunks)


def read_bounded_text(path, limit: int = DEFAULT_LIMIT) -> str:
    """:func:`read_bounded` decoded as UTF-8 (a BOM allowed); other encodings are refused."""
    data = read_bounded(path, limit)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise FileReadError(path, f"is not UTF-8 text (byte {error.start}"
                                  + ("; it looks like UTF-16" if data[:2] in (b"\xff\xfe", b"\xfe\xff")
                                     else "") + ")") from None
