"""The one error a bad session file gives: ``SessionFileError``, naming the file and the problem."""

import os


class SessionFileError(Exception):
    """A file is not a DiffLab session DiffLab can read.

    ``path`` is the file and ``problem`` what is wrong with it, in words; ``str(error)``
    is ``"<path>: <problem>"``, one line, as the CLI prints it.
    """

    def __init__(self, path: str | os.PathLike, problem: str):
        self.path = os.fspath(path)
        self.problem = " ".join(str(problem).split())
        super().__init__(f"{self.path}: {self.problem}")
