"""Saving an opened session again: the same models, results and provenance, current schema."""

import contextlib
import os

from . import _h5
from ._errors import SessionFileError
from ._lock import real_path, writing
from ._writer import SessionWriter, write_session

_FILLS = {"sweeps": {"y": float("nan"), "result": -1, "steps": -1, "chunk_done": 0}}
_KEEP_ROOT = ("created", "title", "history")


def save_session(session, path, *, compress: bool = False) -> None:
    """Write ``session`` to ``path`` atomically; big arrays are copied block by block.

    Onto the file the session was read from, the file is rewritten whole in the current
    schema (a new file beside it replaces it when complete): it holds the same objects.
    Onto another session file, the session's objects are added to it (a name already
    there is an error).
    """
    same = os.path.exists(path) and os.path.samefile(path, session.path)
    with _rewritten(path, compress) if same else write_session(path, compress=compress) as writer:
        _h5.set_attrs(writer.file, {k: session.attrs[k] for k in _KEEP_ROOT
                                    if isinstance(session.attrs.get(k), str)})
        for pid, attrs in session.provenance.items():
            if pid not in writer.file["provenance"]:
                writer.write_provenance(pid, attrs)
        for key, record in session.models.items():
            if key not in writer.file["models"]:
                writer.add_model_record(record, key=key)
        for result in session.groups():
            _write(writer, result)
        _h5.set_attrs(writer.file["app"], session.app)


@contextlib.contextmanager
def _rewritten(path, compress: bool):
    """A writer on a new, empty file that replaces ``path`` when the block succeeds."""
    with writing(path), _h5.atomic_file(real_path(path)) as tmp, \
            _h5.create_file(tmp, "w") as f:
        yield SessionWriter(f, compress=compress)


def _write(writer: SessionWriter, result) -> None:
    writer.write_result(result.kind, result.name, result.attrs, result.variables,
                        subgroups=result.groups, fillvalues=_FILLS.get(result.kind))


def remove_stale_temporaries(path) -> None:
    """Remove the temporary files (``.<name>.<hex>.tmp``) that a killed save of ``path``
    left beside it, as a writer does when it takes the file's lock: for opening a file.
    Nothing is removed while a writer holds the lock, or where the file cannot be written."""
    if not os.path.isfile(path):
        return
    with contextlib.suppress(SessionFileError, OSError), writing(path):
        pass
