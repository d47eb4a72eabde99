"""The sweep store: a sweep's group in a session file, created whole, then filled chunk by chunk.

Built on the session writer (``_writer``) and its :class:`SweepWriter`, so a sweep group
follows ``docs/hdf5-schema.md``: ``parameters``, ``y``, ``result``, ``steps``,
``chunk_done``, and, added here, one ``(point)`` variable per observable, or
``(point, <name>_index)`` for one keeping a vector per point (an orbit diagram's values). The group is
created with every dataset full size inside an atomic write (a kill leaves the file as it
was), then reopened in SWMR mode and written in place: each chunk's data, a flush, its
``chunk_done`` flag, a flush. A killed sweep therefore loses at most the chunk in flight,
and running it again writes only the chunks not done.

The ``sweep_fingerprint`` attribute (a digest of the model, settings and points) tells
one sweep from another: the same sweep run again resumes its group.

While it writes, a sweep holds the file's one-writer lock (``_lock``), so no other
process writes the same file at once.

Past one machine each process writes a *shard* file of its own points. The first process
writes the file named by the user at once, its result variables HDF5 virtual datasets over
the shards (one file to open), and when all are done copies the shards in
(:func:`consolidate`), leaving an ordinary session file.
"""

import contextlib
import dataclasses
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np

from . import _h5, _netcdf, _sweep_grid
from ._errors import SessionFileError
from ._lock import real_path, writing
from ._netcdf import Empty, Variable
from ._streams import _sweep_variables
from ._writer import FORMAT, SessionWriter, out_of_space, stream_session, write_session

FINGERPRINT = "sweep_fingerprint"
KEPT = "the chunks written before are kept: free some space and run the sweep again to resume"
FILLS = {"y": np.nan, "result": -1, "steps": -1, "chunk_done": 0}


@dataclasses.dataclass
class SweepRecord:
    """What a sweep's group holds before any point is computed.

    ``values`` (points, parameters) are the swept parameters; ``y0`` the initial state of
    each point when it is swept; ``time`` the times kept per point; ``observables`` maps
    each observable's name to how it is computed, ``observable_sizes`` those keeping a
    vector per point to its length; ``attrs`` are added to the group (the fingerprint
    among them).
    """

    model: Any
    parameter_names: list
    values: np.ndarray
    time: np.ndarray
    state_names: tuple
    chunk_size: int
    settings: dict
    attrs: dict
    key: Any = None
    key_scheme: str | None = None
    y0: np.ndarray | None = None
    observables: dict = dataclasses.field(default_factory=dict)
    observable_sizes: dict = dataclasses.field(default_factory=dict)

    @property
    def n_points(self) -> int:
        return len(self.values)

    @property
    def fingerprint(self) -> str:
        return self.attrs[FINGERPRINT]

    def rows(self, first: int, count: int) -> "SweepRecord":
        """The record of points ``first .. first + count - 1`` (a shard)."""
        sl = slice(first, first + count)
        return dataclasses.replace(
            self, values=self.values[sl], y0=None if self.y0 is None else self.y0[sl],
            attrs={**self.attrs, "shard_first_point": first})

    def writer_options(self) -> dict:
        return dict(model=self.model, parameter_names=self.parameter_names, values=self.values,
                    time=self.time, chunk_size=self.chunk_size, state_names=self.state_names,
                    settings=self.settings, key=self.key, key_scheme=self.key_scheme, y0=self.y0)


def text(value) -> str | None:
    """A string attribute as ``str``, whether stored fixed-length (bytes) or variable."""
    if isinstance(value, (bytes, np.bytes_)):
        return bytes(value).decode("utf-8")
    return value if isinstance(value, str) else None


def texts(value) -> list[str]:
    """A string-array attribute as a list of ``str``."""
    return [text(v) for v in np.atleast_1d(value)]


def find(path, fingerprint: str) -> str | None:
    """The name of the sweep in ``path`` with this fingerprint, if any."""
    if not os.path.exists(path):
        return None
    with contextlib.closing(_h5.open_for_reading(path)) as f:
        for name, group in f.get("sweeps", {}).items():
            if text(group.attrs.get(FINGERPRINT)) == fingerprint:
                return name
    return None


def _names(path) -> set[str]:
    if not os.path.exists(path):
        return set()
    with contextlib.closing(_h5.open_for_reading(path)) as f:
        return set(f.get("sweeps", {}))


def _free_name(taken: set[str]) -> str:
    i = 0
    while f"sweep{i}" in taken:
        i += 1
    return f"sweep{i}"


def choose_name(path, fingerprint: str, name: str | None, resume: bool | None) -> tuple[str, bool]:
    """``(name, exists)``: the group to write, and whether it holds this sweep already.

    ``resume=None`` continues this sweep if the file holds it, else starts it;
    ``True`` insists on continuing; ``False`` always starts afresh (replacing ``name``).
    """
    found = None if resume is False else find(path, fingerprint)
    if found is not None and (name is None or name == found):
        return found, True
    if resume:
        raise ValueError(f"{os.fspath(path)} holds no sweep like this one to resume"
                         + (f" (its sweep {name!r} differs)" if name in _names(path) else ""))
    taken = _names(path)
    if name is not None and name in taken and resume is None:
        raise ValueError(f"{os.fspath(path)} already holds a different sweep named {name!r}; "
                         "choose another name, or overwrite it (resume=False, --overwrite)")
    return name or _free_name(taken), False


def stored_layout(path, name: str) -> dict:
    """How sweep ``name`` of ``path`` was cut up, and whether it is complete."""
    with contextlib.closing(_h5.open_for_reading(path)) as f:
        group = f[f"sweeps/{name}"]
        return {"chunk_size": int(group.attrs["chunk_size"]),
                "n_processes": int(group.attrs.get("n_processes", 1)),
                "complete": bool(np.all(group["chunk_done"][:] == 1))}


def read_rows(path, name: str, start: int, stop: int, observables) -> dict:
    """Rows ``start .. stop - 1`` of a stored sweep's results (virtual datasets too)."""
    with contextlib.closing(_h5.open_for_reading(path)) as f:
        return _rows(f[f"sweeps/{name}"], start, stop, observables)


def _rows(group, start: int, stop: int, observables) -> dict:
    return {"y": group["y"][start:stop], "result": group["result"][start:stop].astype(np.int32),
            "steps": group["steps"][start:stop],
            "observables": {n: _sweep_grid.read_points(group[n], start, stop, _vector(group, n))
                            for n in observables}}


def _vector(group, name: str) -> bool:
    """Whether observable ``name`` keeps a vector per point (its ``<name>_index`` axis)."""
    return index_dimension(name) in group


def index_dimension(observable: str) -> str:
    """The dimension along a vector observable's values (as ``SweepResult.to_xarray``
    names it)."""
    return f"{observable}_index"


def observable_variables(record: SweepRecord, grid: bool = True) -> dict[str, Variable]:
    """The empty variable of each observable: over ``point`` or, for a grid sweep (and
    ``grid``), the grid's axes; then ``<name>_index`` for one keeping ``k`` values per point."""
    axes = _sweep_grid.axes(record) if grid else None
    dims = tuple(axes) if axes else ("point",)
    along = _sweep_grid.point_coordinates(record) if grid and not axes else {}
    listed = {"coordinates": " ".join(along)} if along else {}
    shape = tuple(len(v.data) for v in axes.values()) if axes else (record.n_points,)
    out = {}
    for name, how in record.observables.items():
        k = record.observable_sizes.get(name)
        extra = () if k is None else (index_dimension(name),)
        units = _sweep_grid.observable_units(how, record.model, record.state_names)
        out[name] = Variable(dims + extra, Empty(shape + ((k,) if extra else ()), np.float64),
                             {"long_name": f"observable {name}", "difflab_observable": how,
                              **units, **listed})
    return out


def add_indices(group, record: SweepRecord) -> None:
    """The index coordinate of each vector observable: 0 .. k - 1."""
    for name, k in record.observable_sizes.items():
        _netcdf.add_coordinate(group, index_dimension(name), np.arange(k, dtype=np.int64),
                               {"long_name": f"index of the values of {name}"})


def add_observables(group, record: SweepRecord) -> None:
    """The observables' variables, on the grid's axes (coordinates added) for a grid."""
    add_indices(group, record)
    for name, axis in (_sweep_grid.axes(record) or {}).items():
        _netcdf.add_coordinate(group, name, axis.data, axis.attrs)
    along = _sweep_grid.point_coordinates(record)
    for name, var in along.items():
        _netcdf.write_variable(group, name, var)
        _netcdf.attach(group, name, var)
    for name in ("result", "steps") if along else ():
        group[name].attrs["coordinates"] = " ".join(along)
    for name, var in observable_variables(record).items():
        _netcdf.write_variable(group, name, var, fillvalue=np.nan, along=record.chunk_size)
        _netcdf.attach(group, name, var)
    _h5.set_attrs(group, {"observables": list(record.observables) or None})


def create(path, record: SweepRecord, name: str, *, replace: bool = False,
           command_line: str | None = None) -> None:
    """Write the sweep's group, every dataset full size, in one atomic step."""
    with write_session(path, command_line=command_line) as session:
        if replace and name in session.file["sweeps"]:
            del session.file["sweeps"][name]
        writer = session.new_sweep(name=name, **record.writer_options())
        _h5.set_attrs(writer.group, record.attrs)
        add_observables(writer.group, record)


class SweepStore:
    """An open sweep group, written chunk by chunk (``write``) and read back (``read``)."""

    def __init__(self, path, name: str, record: SweepRecord, *, command_line=None):
        self.path, self.name, self.record = os.fspath(path), name, record
        self._stack = contextlib.ExitStack()
        try:
            self._stack.enter_context(writing(self.path))
            self.session = self._stack.enter_context(
                stream_session(self.path, command_line=command_line, recover=True))
            self.writer = self.session.sweep_writer(name)
            self.session.start_swmr()
        except BaseException:
            self._stack.close()
            raise

    @classmethod
    def open(cls, path, record: SweepRecord, *, name=None, resume=None, command_line=None):
        """The store of ``record``'s sweep in ``path``: resumed if it is there, else created."""
        name, exists = choose_name(path, record.fingerprint, name, resume)
        if not exists:
            create(path, record, name, replace=resume is False, command_line=command_line)
        return cls(path, name, record, command_line=command_line)

    def pending_chunks(self) -> list[int]:
        return self.writer.pending_chunks()

    def write(self, chunk: int, *, y, result, steps, observables) -> None:
        """Store one chunk: observables, then ``y``/``result``/``steps``, then its done flag."""
        sl = self.writer.points(chunk)
        with out_of_space(self.path, KEPT):
            for name, values in observables.items():
                _sweep_grid.write_points(self.writer.group[name], sl.start, values,
                                         _vector(self.writer.group, name))
            self.writer.write_chunk(chunk, ys=y, result=result, steps=steps)

    def read(self, start: int, stop: int) -> dict:
        """Rows ``start .. stop - 1`` of this file's results."""
        return _rows(self.writer.group, start, stop, self.record.observables)

    @property
    def chunk_size(self) -> int:
        return self.writer.chunk_size

    def results(self) -> np.ndarray:
        """The result code of every point of this file (-1: not run yet)."""
        return self.writer.group["result"][:].astype(np.int32)

    def close(self) -> None:
        """Record whether the sweep is complete, and close the file."""
        if self._stack is None:
            return
        stack, self._stack = self._stack, None
        with out_of_space(self.path, KEPT):
            try:
                self.writer.finish()
            finally:  # the file is closed and the lock let go even if the disk is full
                stack.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def shard_path(path, process: int, n_processes: int) -> Path:
    """The file process ``process`` writes its points to: ``sweep.h5`` -> ``sweep.shard0of2.h5``."""
    path = Path(path)
    return path.with_name(f"{path.stem}.shard{process}of{n_processes}{path.suffix}")


@contextlib.contextmanager
def _edit(path, command_line=None):
    """A :class:`SessionWriter` on a copy of ``path`` that replaces it on success.

    Unlike ``write_session`` the file is not read through the session reader
    first, which refuses virtual datasets (the index of a multi-process sweep has them).
    """
    if os.path.exists(path):
        with contextlib.closing(_h5.open_for_reading(path)) as f:
            if text(f.attrs.get("difflab_format")) != FORMAT:
                raise SessionFileError(os.fspath(path), "not a DiffLab session file")
    with writing(path), _h5.atomic_file(real_path(path)) as tmp:
        if os.path.exists(path):
            shutil.copyfile(real_path(path), tmp)
        with _h5.create_file(tmp, "a") as f:
            yield SessionWriter(f, command_line=command_line)


def write_index(path, record: SweepRecord, name: str, shards: list[tuple[str, int, int]], *,
                command_line=None) -> None:
    """The file a user opens for a multi-process sweep: its results virtual over the shards.

    ``shards`` lists ``(file name relative to path, first point, points)``. h5py, xarray
    and netCDF-C read the virtual datasets as one; :func:`consolidate` copies the shards in.
    """
    n, cs = record.n_points, record.chunk_size
    variables = _sweep_variables(record.model, record.parameter_names, record.values,
                                 np.asarray(record.time), tuple(record.state_names), -(-n // cs),
                                 np.float64, record.y0)
    virtual = {k: variables.pop(k) for k in ("y", "result", "steps", "chunk_done")}
    virtual.update(observable_variables(record, grid=False))  # a view of shards: by point
    with _edit(path, command_line) as session:
        if name in session.file["sweeps"]:
            del session.file["sweeps"][name]
        attrs = session.result_attrs(model=record.model, settings=record.settings, key=record.key,
                                     extra={"n_points": n, "chunk_size": cs, "complete": 0,
                                            "key_scheme": record.key_scheme, **record.attrs})
        attrs.update(shards=[s[0] for s in shards],
                     shard_first_points=np.array([s[1] for s in shards], dtype=np.int64),
                     shard_points=np.array([s[2] for s in shards], dtype=np.int64))
        group = session.write_result("sweeps", name, attrs, variables)
        add_indices(group, record)
        for var_name, var in virtual.items():
            _virtual(group, var_name, var, name, shards, cs)
            _h5.set_attrs(group[var_name], var.attrs)
            _netcdf.attach(group, var_name, var)
        _h5.set_attrs(group, {"observables": list(record.observables) or None})


def _virtual(group, var_name, var, name, shards, cs) -> None:
    h5py = _h5.h5py()
    dtype = {"result": np.int8, "chunk_done": np.int8, "steps": np.int64}.get(var_name, np.float64)
    layout = h5py.VirtualLayout(shape=var.data.shape, dtype=dtype)
    for file, first, count in shards:
        rows = (first // cs, -(-count // cs)) if var_name == "chunk_done" else (first, count)
        tail = var.data.shape[1:]
        source = h5py.VirtualSource(file, f"/sweeps/{name}/{var_name}", shape=(rows[1], *tail))
        layout[rows[0] : rows[0] + rows[1]] = source
    group.create_virtual_dataset(var_name, layout, fillvalue=FILLS.get(var_name, np.nan))


def stored_shards(path, name: str) -> list[tuple[str, int, int]] | None:
    """The shards an index file's sweep ``name`` reads from (``None``: not an index)."""
    with contextlib.closing(_h5.open_for_reading(path)) as f:
        attrs = f[f"sweeps/{name}"].attrs
        if "shard_points" not in attrs:
            return None
        return [(file, int(first), int(count)) for file, first, count in
                zip(texts(attrs["shards"]), attrs["shard_first_points"], attrs["shard_points"])]


def consolidate(path, record: SweepRecord, name: str, shards=None, *,
                remove_shards: bool = True, command_line=None) -> None:
    """Copy the shards' results into ``path``: the sweep becomes an ordinary, complete group.

    The group is rebuilt as a one-process sweep writes it, then filled chunk by chunk
    from the shard files (beside ``path``; by default those the index names), which are
    then removed.
    """
    shards = stored_shards(path, name) if shards is None else shards
    folder = Path(path).parent
    with _edit(path, command_line) as session:
        if name in session.file["sweeps"]:
            session._provenance = _h5.text(session.file["sweeps"][name].attrs.get("provenance"))
            del session.file["sweeps"][name]
        writer = session.new_sweep(name=name, **record.writer_options())
        _h5.set_attrs(writer.group, record.attrs)
        add_observables(writer.group, record)
        for file, first, count in shards:
            with contextlib.closing(_h5.open_for_reading(folder / file)) as src:
                _copy_shard(writer, src[f"sweeps/{name}"], first, count, record)
        writer.finish()
    if remove_shards:
        for file, _, _ in shards:
            os.remove(folder / file)


def _copy_shard(writer, source, first, count, record) -> None:
    cs = record.chunk_size
    for chunk in range(first // cs, first // cs + -(-count // cs)):
        rows = writer.points(chunk)
        local = slice(rows.start - first, rows.stop - first)
        for obs in record.observables:
            _sweep_grid.write_points(writer.group[obs], rows.start, source[obs][local],
                                     _vector(writer.group, obs))
        writer.write_chunk(chunk, ys=source["y"][local], result=source["result"][local],
                           steps=source["steps"][local])
