"""Field runs to and from session files: saved whole, streamed frame by frame, read back
(the group's layout is in ``_fields``)."""

import contextlib

from ..solvers import FieldTrajectory
from ._fields import FieldWriter, add_fields, field_trajectory, is_field_run
from ._reader import open_session
from ._writer import stream_session, write_session


def save_fields(path, traj, model=None, *, name=None, settings=None, overwrite=False,
                compress=False) -> str:
    """Add a field run (``traj`` of :func:`difflab.solvers.simulate_fields`, computed with
    ``model``) to a session file, atomically; returns its name in ``/runs``."""
    model = getattr(traj, "model", None) if model is None else model
    if model is None:
        raise ValueError("this field run does not know its model: pass model=")
    with write_session(path, overwrite=overwrite, compress=compress) as session:
        return add_fields(session, traj, model, name=name, settings=settings)


@contextlib.contextmanager
def field_writer(path, model, *, grid=None, name=None, settings=None, overwrite=False,
                 compress=False, command_line=None):
    """Stream a field run into ``path`` in place: yields a :class:`FieldWriter`; readers
    may open the file while frames are appended (SWMR). The run is ``complete`` once the
    block ends without an error."""
    with stream_session(path, overwrite=overwrite, compress=compress,
                        command_line=command_line) as session:
        writer = FieldWriter.create(session, model=model, grid=grid, name=name,
                                    settings=settings)
        session.start_swmr()
        yield writer
        writer.finish()


def read_fields(path, name: str | None = None) -> FieldTrajectory:
    """The field run ``name`` (default: the first) of a session file, with its grid."""
    session = open_session(path)
    stored = [s for s in session.stored("runs") if is_field_run(s.attrs)]
    if name is not None:
        stored = [s for s in stored if s.name == name]
    if not stored:
        which = f"named {name!r}" if name else "at all"
        raise KeyError(f"{path} holds no field run {which}")
    return field_trajectory(stored[0])
