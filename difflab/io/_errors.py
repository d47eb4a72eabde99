"""The one error a bad session file gives: ``SessionFileError``, naming the file and the problem."""

import os


class SessionFileError(Exception):
    """A file is not a DiffLab session DiffLab can read.

    ``path`` is the file and ``problem`` what is wrong with it, in words; ``str(error)``
    is ``"<path>: <problem>"``, one line, as the CLI prints it.
    """

    def __init__(self, path: str | os.PathLike, problem: str):
        self.path = os.fspath(path)
        self.problem = _printable(" ".join(str(problem).split()))
        super().__init__(f"{_printable(self.path)}: {self.problem}")


def _printable(text: str) -> str:
    """``text`` with control characters (a file's names may hold escape sequences) escaped."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
                   for c in text)
