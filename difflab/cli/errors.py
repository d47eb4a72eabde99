"""How the command line ends: exit codes, and the error for bad input."""

import errno
import os
import sys

from .._threads import running

EXIT_BAD_INPUT = 2
EXIT_FAILED = 1
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report Ctrl-C
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, as for any command whose reader stopped early


class UsageError(Exception):
    """Bad input from the command line, shown as one line."""


def printable(text) -> str:
    """``text`` with every character a terminal would act on (escape sequences, line
    breaks, bidi controls) written as a Python escape such as ``\\x1b``: text read from a
    file can then neither forge lines nor drive the terminal."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
                   for c in str(text))


def out_of_resources(error: BaseException) -> int:
    """Print one line for a machine out of memory or disk and give the exit status;
    re-raise any other error. (After a write failed on a full disk the HDF5 library
    cannot close its files: :func:`leave` then ends the process at once.)"""
    if isinstance(error, MemoryError):
        print(f"difflab: error: out of memory ({printable(error) or 'an allocation failed'})",
              file=sys.stderr)
        return EXIT_FAILED
    if not isinstance(error, OSError) or error.errno not in (errno.ENOSPC, errno.EDQUOT):
        raise error
    where = f"{error.filename}: " if error.filename else ""
    print(f"difflab: error: {printable(where + (error.strerror or str(error)))}",
          file=sys.stderr)
    global _hdf5_failed
    _hdf5_failed = True
    return EXIT_FAILED


_hdf5_failed = False  # a write failed on a full disk: HDF5 cannot close its files


def leave(status: int) -> int:
    """``status``, or the process ended with it at once (``os._exit``, output flushed)
    when shutting down normally would crash it: work abandoned at Ctrl-C may still run
    in XLA's threads or ours (the interpreter's exit then aborts), and HDF5 files left
    unclosable by a full disk segfault at exit."""
    if running() or _hdf5_failed or status == EXIT_INTERRUPTED:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    return status
