"""Where a sweep's results go: its group in an HDF5 session file, or one shard per process.

:func:`open_output` gives the :class:`Output` that ``difflab.solvers.execute_sweep``
writes through; ``difflab.sweep(out=...)`` opens one the same way. One process opens the
group (``_sweep_store``), resuming it if the file holds the same sweep. Over several
processes, process 0 decides the group's name and how the points are chunked and tells the
others (they must run the same chunks in step); each process writes its own shard file; at
the end process 0 copies the shards into the file the user named (or, with
``keep_shards``, leaves it a virtual view of them).
"""

import dataclasses

import jax
import numpy as np

from ..solvers import SweepJob, describe_observable
from . import _h5, _sweep_store

KEY_SCHEME = "jax.random.fold_in(key, point)"


@dataclasses.dataclass
class Output:
    """This process's store (``None`` if it writes nothing), the group, and its state."""

    store: object
    name: str
    done: bool
    record: object
    path: str
    keep_shards: bool = False
    command_line: str | None = None

    def read_done(self, job: SweepJob, todo, add) -> None:
        """Pass the stored rows of this process's chunks not in ``todo`` to ``add``."""
        first = job.layout.first
        for j in range(job.layout.n_chunks):
            start, stop = job.layout.chunk(j)
            if j in todo or stop <= start:
                continue
            if self.store is not None:
                rows = self.store.read(start - first, stop - first)
            else:
                rows = _sweep_store.read_rows(self.path, self.name, start, stop,
                                              self.record.observables)
            add(start, stop, rows["y"], rows["result"], rows["steps"], rows["observables"])

    def finish(self) -> None:
        """Once every process is done: process 0 copies the shards into the user's file.

        Also turns a complete sweep left as a view of its shards (``keep_shards``) into an
        ordinary group when it is run again without ``keep_shards``.
        """
        if jax.process_index() != 0 or self.keep_shards:
            return
        if jax.process_count() == 1 and not self.done:
            return  # written in place, as an ordinary group
        if _sweep_store.stored_shards(self.path, self.name) is None:
            return  # not a view of shards (or already consolidated)
        _sweep_store.consolidate(self.path, self.record, self.name,
                                 command_line=self.command_line)


def record(job: SweepJob, attrs: dict):
    """The :class:`SweepRecord` of a job: the parameter table and what to rerun it."""
    names = list(job.names)
    values = (np.stack([job.space[n] for n in names], axis=1) if names
              else np.zeros((job.n_points, 0)))
    return _sweep_store.SweepRecord(
        model=job.model, parameter_names=names, values=values, time=job.ts,
        state_names=job.state_names, chunk_size=job.layout.chunk_size, settings=job.settings(),
        key=job.key, key_scheme=KEY_SCHEME if job.key is not None else None,
        y0=job.initial_states(0, job.n_points) if job.y0_swept else None,
        observables={n: describe_observable(f) for n, f in job.observables},
        observable_sizes=dict(job.observable_sizes),
        attrs={"sweep_fingerprint": job.fingerprint(), "space_kind": job.space.kind,
               "space_shape": np.asarray(job.space.shape, dtype=np.int64),
               "swept": list(job.space.names), "trajectories": int(job.keep_y),
               "n_processes": jax.process_count(), "per_process": job.layout.per_process,
               **attrs})


def _decide(job: SweepJob, path, name, resume) -> tuple[str, bool, dict]:
    """``(name, exists, layout)`` of the group to write (process 0 decides for all)."""
    name, exists = _sweep_store.choose_name(path, job.fingerprint(), name, resume)
    layout = _sweep_store.stored_layout(path, name) if exists else {}
    return name, exists, layout


def _broadcast(decision):
    from jax.experimental import multihost_utils

    name, exists, layout = decision if decision is not None else ("", False, {})
    text = f"{name}|{int(exists)}|{layout.get('chunk_size', 0)}|{layout.get('n_processes', 0)}|" \
           f"{int(layout.get('complete', False))}"
    raw = np.frombuffer(text.encode().ljust(128, b"\0"), dtype=np.uint8)
    got = bytes(multihost_utils.broadcast_one_to_all(raw)).rstrip(b"\0").decode().split("|")
    layout = {"chunk_size": int(got[2]), "n_processes": int(got[3]), "complete": got[4] == "1"}
    return got[0], got[1] == "1", layout if got[1] == "1" else {}


def open_output(job: SweepJob, path, *, name=None, resume=None, attrs=None,
                command_line=None, keep_shards=False) -> Output:
    """Open (or create) the sweep's group; adopt its chunking if it is being resumed."""
    processes = jax.process_count()
    decision = _decide(job, path, name, resume) if jax.process_index() == 0 else None
    name, exists, stored = decision if processes == 1 else _broadcast(decision)
    done = bool(stored.get("complete"))
    if exists and not done and stored["n_processes"] != processes:
        raise ValueError(f"sweep {name!r} of {path} was started by {stored['n_processes']} "
                         f"processes; resume it with as many (or overwrite it)")
    if exists and stored["chunk_size"] != job.layout.chunk_size:
        job.set_chunk_size(stored["chunk_size"])
    if not exists:  # before anything is written: the results must fit on the disk
        _h5.check_free_space(path, job.output_bytes() / processes,
                             f"sweep {name!r} ({job.n_points:,} points)")
    rec = record(job, attrs or {})
    opened = dict(record=rec, path=path, keep_shards=keep_shards, command_line=command_line)
    if done:
        return Output(None, name, True, **opened)
    if processes == 1:
        if not exists:
            _sweep_store.create(path, rec, name, replace=resume is False, command_line=command_line)
        return Output(_sweep_store.SweepStore(path, name, rec, command_line=command_line),
                      name, False, **opened)
    if jax.process_index() == 0 and not exists:
        _sweep_store.write_index(path, rec, name, shards(job, path), command_line=command_line)
    layout = job.layout
    if layout.count() == 0:
        return Output(None, name, False, **opened)
    shard = _sweep_store.shard_path(path, jax.process_index(), processes)
    store = _sweep_store.SweepStore.open(shard, rec.rows(layout.first, layout.count()), name=name,
                                         resume=None if exists else False,
                                         command_line=command_line)
    return Output(store, name, False, **opened)


def shards(job: SweepJob, path) -> list[tuple[str, int, int]]:
    """``(file name, first point, points)`` of every process's shard."""
    layout, count = job.layout, jax.process_count()
    return [(_sweep_store.shard_path(path, q, count).name, q * layout.per_process, layout.count(q))
            for q in range(count) if layout.count(q) > 0]
