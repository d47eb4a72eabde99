"""Saving an opened session again: the same models, results and provenance, current schema."""

from . import _h5
from ._writer import SessionWriter, write_session

_FILLS = {"sweeps": {"y": float("nan"), "result": -1, "steps": -1, "chunk_done": 0}}
_KEEP_ROOT = ("created", "title")


def save_session(session, path, *, compress: bool = False) -> None:
    """Write ``session`` to ``path`` atomically; big arrays are copied block by block.

    Saving onto the file the session was read from is safe: the new file is written
    beside it and replaces it only when complete.
    """
    with write_session(path, compress=compress) as writer:
        _h5.set_attrs(writer.file, {k: session.attrs[k] for k in _KEEP_ROOT
                                    if isinstance(session.attrs.get(k), str)})
        for pid, attrs in session.provenance.items():
            writer.write_provenance(pid, attrs)
        for key, record in session.models.items():
            writer.add_model_record(record, key=key)
        for result in session.results():
            _write(writer, result)
        writer.file.require_group("app")
        _h5.set_attrs(writer.file["app"], session.app)


def _write(writer: SessionWriter, result) -> None:
    writer.write_result(result.kind, result.name, result.attrs, result.variables,
                        subgroups=result.groups, fillvalues=_FILLS.get(result.kind))
