"""``sweep``: one model simulated at every point of a parameter space, on every device.

The points are cut into chunks; each chunk is padded to fill every device, laid over a
``Mesh`` of all devices with ``NamedSharding(mesh, P("batch"))``, solved by one compiled
program with no communication between devices (``_sweep_kernel``), and handed to the host
as it completes: to the ``progress`` callback, to an output (the HDF5 file: ``difflab.io``
opens it and hands it in), to the result. Every point gets its own result code; a failed
point is counted, never fatal.
"""

import dataclasses
import os
import time
from collections import Counter

import jax
import numpy as np
from jax.experimental import multihost_utils

from ...models import AbstractFieldModel
from .._datasets import to_dataset
from .. import _field_sweeps
from .._result import Result, message
from .._simulate import model_of, simulate
from .job import NOT_RUN, SweepJob
from .observables import describe_observable
from .spaces import Space, describe, short_names


@dataclasses.dataclass(eq=False)
class SweepResult:
    """What a sweep kept for each of its points, with its result code.

    ``final`` (points, n_states) are the final states; ``ys`` (points, n_save, n_states)
    the trajectories at ``ts`` when kept (else ``None``); ``observables[name]`` (points,)
    the reduced observables, or (points, k) for those keeping k values per point such as
    ``"maxima(x, after=50)"`` (``observable_specs[name]`` says how each is computed); ``result`` (points,) the :class:`Result` codes (``-1`` for a
    point another process computed); ``steps`` the steps each took. ``stats`` holds the
    timings: compile time apart from run time. ``model``, ``settings`` (shared by every
    point), ``key`` and the swept ``y0`` rows are what made it: :meth:`rerun` simulates
    one point again. A sweep read from a session file reads its arrays when used.
    """

    space: Space
    state_names: tuple
    ts: np.ndarray
    y: np.ndarray
    result: np.ndarray
    steps: np.ndarray
    observables: dict
    stats: dict
    trajectories: bool = False
    out: str | None = None
    name: str | None = None
    model: object = None
    settings: dict | None = None
    key: object = None
    y0: np.ndarray | None = None
    observable_specs: dict = dataclasses.field(default_factory=dict)

    @property
    def final(self) -> np.ndarray:
        return self.y[:, -1]

    @property
    def ys(self) -> np.ndarray | None:
        return self.y if self.trajectories else None

    def __getitem__(self, state: str) -> np.ndarray:
        """The final value of ``state`` at every point."""
        try:
            return self.final[:, self.state_names.index(state)]
        except ValueError:
            names = ", ".join(self.state_names)
            raise KeyError(f"no state {state!r}; the states are {names}") from None

    def __len__(self) -> int:
        return len(self.result)

    def __repr__(self) -> str:
        model = f"{type(self.model).__name__}, " if self.model is not None else ""
        kept = f"; n_save={len(self.ts)}" if self.trajectories else ""
        done = "" if self.complete else ", incomplete"
        return (f"SweepResult({model}{describe(self.space)}; states "
                f"{short_names(self.state_names)}{kept}; {self.failed.size} failed{done})")

    @property
    def failed(self) -> np.ndarray:
        """The indices of the points that did not succeed."""
        result = np.asarray(self.result)
        return np.flatnonzero((result != Result.SUCCESS) & (result != NOT_RUN))

    @property
    def notes(self) -> dict[str, str]:
        """``{observable: why}`` where a period or amplitude is NaN at points that solved
        ("not periodic: settles to a fixed point", ...)."""
        from .observables import nan_notes

        return nan_notes(self)

    @property
    def complete(self) -> bool:
        """True when every point has been computed (a stopped or killed sweep is not)."""
        return not np.any(np.asarray(self.result) == NOT_RUN)

    def point(self, i: int) -> dict[str, float]:
        """The swept values of point ``i`` (parameters and ``y0.<state>`` columns)."""
        return {name: float(self.space[name][i]) for name in self.space.names
                if name != "y0"}

    def rerun(self, i: int, model=None, key=None, **changes):
        """Simulate point ``i`` alone with the sweep's settings (a :class:`Trajectory`).

        A stochastic sweep gives point ``i`` the key ``jax.random.fold_in(key, i)``;
        ``key`` overrides it. ``model``: an instance of a user model's class, for a sweep
        read from a file.
        """
        if self.model is None or self.settings is None:
            raise ValueError("this sweep does not know the model and settings it ran with")
        params = {k: v for k, v in self.point(i).items() if not k.startswith("y0.")}
        built = model_of(self.model, model).replace(**params)
        settings = {**self.settings, **changes}
        if self.y0 is not None:
            settings["y0"] = np.asarray(self.y0[i], dtype=np.float64)
        if key is None and self.key is not None:
            key = jax.random.fold_in(self.key, i)
        return simulate(built, settings.pop("t1"), key=key, throw=False, **settings)

    @property
    def ok(self) -> bool:
        return self.failed.size == 0

    def message(self, point: int) -> str:
        """How point ``point`` ended, in words."""
        code = int(self.result[point])
        return "not run (computed by another process)" if code == NOT_RUN else message(code)

    def reshape(self, values) -> np.ndarray:
        """Per-point ``values`` laid out on the space's grid: ``res.reshape(res["x"])``."""
        return self.space.reshape(values)

    def to_xarray(self):
        """The results as an ``xarray.Dataset``, as the sweep's group in a session file
        reads: trajectories over ``point``; observables over the grid's axes (dims such as
        ``rho``, ``sigma``, coordinates with units) for a :func:`difflab.grid` space, else
        over ``point``, the swept values in ``parameters``."""
        return to_dataset(self)

    def summary(self) -> dict:
        """Counts (``failed``, ``failures`` by kind) and timings, JSON-serialisable."""
        return dict(self.stats)


def _failures(result) -> dict:
    """How many points ended with each failing result code, by name."""
    result = np.asarray(result)
    codes = Counter(int(c) for c in result[(result != Result.SUCCESS) & (result != NOT_RUN)])
    return {Result(c).name.lower(): n for c, n in sorted(codes.items())}


class _Collector:
    """Keeps the chunks of this process in full-size arrays."""

    def __init__(self, job: SweepJob):
        n, k = job.n_points, len(job.ts)
        dtype = np.dtype(jax.numpy.result_type(float))
        self.y = np.full((n, k, len(job.state_names)), np.nan, dtype)
        self.result = np.full(n, NOT_RUN, np.int32)
        self.steps = np.full(n, NOT_RUN, np.int64)
        sizes = job.observable_sizes
        self.observables = {name: np.full((n, *((sizes[name],) if name in sizes else ())),
                                          np.nan, dtype) for name, _ in job.observables}

    def add(self, start, stop, y, result, steps, observables) -> None:
        self.y[start:stop], self.result[start:stop], self.steps[start:stop] = y, result, steps
        for name, values in observables.items():
            self.observables[name][start:stop] = values


_file_output = None  # how ``out=`` paths are opened; set by difflab.io (a layer above)


def set_sweep_output(opener) -> None:
    """Make ``sweep(out=path)`` stream to files opened by ``opener(job, path, name=, resume=)``.

    ``difflab.io`` registers its HDF5 writer when it is imported (as the first use of any
    of ``difflab``'s names does).
    """
    global _file_output
    _file_output = opener


def execute_sweep(job: SweepJob, *, output=None, progress=None, collect=True) -> SweepResult | dict:
    """Run ``job``; :func:`sweep` and the command line call this.

    ``output`` (from ``difflab.io``) receives each chunk as it completes and says which
    chunks it already holds. ``progress(chunk)`` is called as each chunk completes (if it
    returns ``False`` the sweep stops there: the points not run keep the code ``-1``, and
    a file output keeps their chunks pending, to resume); if it has a
    ``begin(total, done)`` method, that is called first with the points already done.
    With ``collect=False`` nothing is kept in memory and the stats are returned.
    """
    store = None if output is None else output.store
    keep = None
    try:
        job.check_memory(collect)  # before anything big is allocated
        keep = _Collector(job) if collect else None
        if output is not None and output.done:
            todo = []
        elif output is not None or jax.process_count() > 1:
            todo = _agreed_chunks(job, store)
        else:
            todo = list(range(job.layout.n_chunks))
        if keep is not None and output is not None:
            output.read_done(job, todo, keep.add)
        stats = _run(job, todo, store, keep, progress)
        codes = store.results() if store is not None else (keep.result if keep else None)
        if codes is not None:
            stats["failures"] = _failures(codes)
    finally:
        if store is not None:
            store.close()
    if jax.process_count() > 1:
        stats = _gather(stats)  # also the barrier: every shard is written
    if output is not None:
        output.finish()
    out, name = (None, None) if output is None else (os.fspath(output.path), output.name)
    stats.update(out=out, name=name, failed=sum(stats["failures"].values()))
    if keep is None:
        return stats
    y0 = job.initial_states(0, job.n_points) if job.y0_swept else None
    specs = {n: describe_observable(f) for n, f in job.observables}
    return SweepResult(job.space, job.state_names, job.ts, keep.y, keep.result, keep.steps,
                       keep.observables, stats, job.keep_y, out, name, job.model,
                       job.settings(), job.key, y0, specs)


def _agreed_chunks(job: SweepJob, store) -> list[int]:
    """The chunks to run: those any process still lacks (all processes run in step)."""
    mine = np.ones(job.layout.n_chunks, dtype=bool)
    if store is not None:
        mine[:] = False
        mine[store.pending_chunks()] = True
    if jax.process_count() > 1:
        if store is None and job.layout.count() == 0:
            mine[:] = False
        mine = np.any(multihost_utils.process_allgather(mine), axis=0)
    return [int(j) for j in np.flatnonzero(mine)]


def _run(job, todo, store, keep, progress) -> dict:
    """Compute the chunks ``todo``; returns the timings and counts."""
    layout = job.layout
    sizes = [layout.chunk(j)[1] - layout.chunk(j)[0] for j in range(layout.n_chunks)]
    resumed = sum(sizes) - sum(sizes[j] for j in todo)
    if hasattr(progress, "begin"):
        progress.begin(layout.count(), resumed)
    writes = set(store.pending_chunks()) if store is not None else set()
    codes, start_time, compiled = Counter(), time.perf_counter(), job.compile_time
    computed, stopped = 0, False
    for chunk in job.run(todo):
        computed += max(chunk.stop - chunk.start, 0)
        if chunk.stop > chunk.start:
            if chunk.index in writes:
                store.write(chunk.index, y=chunk.y, result=chunk.result, steps=chunk.steps,
                            observables=chunk.observables)
            if keep is not None:
                keep.add(chunk.start, chunk.stop, chunk.y, chunk.result, chunk.steps,
                         chunk.observables)
            codes.update(int(c) for c in chunk.result[chunk.result != Result.SUCCESS])
        if progress is not None and progress(chunk) is False and jax.process_count() == 1:
            stopped = True
            break
    run_time = max(time.perf_counter() - start_time - (job.compile_time - compiled), 1e-12)
    return dict(points=job.n_points, computed=computed, resumed=resumed,
                chunks=layout.n_chunks, chunks_resumed=layout.n_chunks - len(todo),
                chunk_size=layout.chunk_size, devices=job.mesh.size,
                processes=jax.process_count(), compile_time=job.compile_time, run_time=run_time,
                points_per_second=computed / run_time, stopped=stopped,
                failures={Result(c).name.lower(): n for c, n in sorted(codes.items())})


def _gather(stats: dict) -> dict:
    """Add up the counts of every process (the timings are the slowest process's)."""
    names = [r.name.lower() for r in Result if r != Result.SUCCESS]
    mine = np.array([stats["computed"], stats["resumed"], stats["run_time"], stats["compile_time"],
                     *[stats["failures"].get(n, 0) for n in names]], dtype=np.float64)
    every = multihost_utils.process_allgather(mine)
    total = every.sum(axis=0)
    run_time = float(every[:, 2].max())
    failures = {n: int(v) for n, v in zip(names, total[4:]) if v}
    return dict(stats, computed=int(total[0]), resumed=int(total[1]), run_time=run_time,
                compile_time=float(every[:, 3].max()), failures=failures,
                points_per_second=float(total[0]) / max(run_time, 1e-12))


def _sweep_fields(model, space, t1, *, out, settings, **options):
    if out is not None or settings is not None:
        raise ValueError("a field model's sweep takes no out= or settings= yet")
    return _field_sweeps.sweep_fields(model, space, t1, **options)


def sweep(model, space, t1=None, *, t0=None, dt=None, solver=None, n_save=None, y0=None,
          key=None, rtol=None, atol=None, max_steps=None, settings=None, observables=None,
          trajectories=None, chunk_size=None, memory_budget=None, block_size=None,
          devices=None, out=None, name=None, resume=None, progress=None, layout=None,
          kernel="auto") -> SweepResult:
    """Simulate ``model`` at every point of ``space``, sharded over every device.

    Args:
        model: the :class:`difflab.Model` whose parameters are swept.
        space: a dict of equal-length arrays (zipped points) or a :class:`Space` from
            ``difflab.grid``, ``uniform``, ``latin_hypercube`` or ``sobol``. Columns name
            parameters (``"rho"``), the initial state (``"y0"``, rows of states) or one
            component of it (``"y0.x"``).
        t1, t0, dt, solver, y0, rtol, atol, max_steps, settings: as in
            :func:`difflab.simulate`, shared by every point (``y0`` is the base initial
            state).
        n_save: keep each trajectory at ``n_save`` evenly spaced times (``ys``); without
            it only the final state is kept, unless ``trajectories=True`` (the
            ``n_save`` of ``settings`` only sets the times observables see).
        key: a ``jax.random`` key for stochastic models; point ``i`` uses
            ``jax.random.fold_in(key, i)``.
        observables: ``{name: f}`` with ``f(traj) -> number`` run on the device for each
            point, or a spec like ``"max(x)"``; the trajectory is not kept unless asked.
        chunk_size: points per chunk (default: from ``memory_budget``, about a tenth of
            the sweep on a CPU; on a GPU or TPU as many as fill it); ``memory_budget``:
            bytes a chunk may take (default 512 MiB; on a GPU or TPU half the memory of
            each device); ``block_size``: points a device steps together.
        layout: how a device walks its rows: ``"blocks"`` of ``block_size`` one after
            another (the CPU's default) or ``"whole"``, all at once (the default on GPUs
            and TPUs).
        kernel: ``"xla"``, ``"pallas"`` (the Pallas kernel of fixed-step sweeps; see
            :func:`pallas_supported`) or ``"auto"`` (``"xla"`` for now: see
            ``docs/performance.md``).
        devices: an int (the first N devices) or a list of devices; default all.
        out: an HDF5 session file to stream the results to, chunk by chunk; ``name`` its
            group under ``/sweeps``. The same sweep run again resumes the group
            (``resume=None``); ``resume=True`` insists on resuming, ``False`` starts over.
        progress: called with each :class:`SweepChunk` as it completes.

    A second sweep of the same model, settings and number of points, whatever the values,
    reuses the compiled program.

    A field model (``docs/fields.md``) is swept in chunks, each one vmapped program
    sharded over the devices: ``observables`` are ``{name: f}`` with ``f`` given each
    point's ``FieldTrajectory``, or specs like ``"mean(u)"`` (mean, max, min, norm of a
    field's last frame); ``n_save`` sets its frames (default 11); the result is a
    ``FieldSweepResult``.
    """
    if isinstance(model, AbstractFieldModel):
        return _sweep_fields(model, space, t1, t0=t0, dt=dt, solver=solver, n_save=n_save,
                             y0=y0, observables=observables, out=out, settings=settings,
                             chunk_size=chunk_size, memory_budget=memory_budget,
                             devices=devices, progress=progress)
    job = SweepJob(model, space, t1, t0=t0, dt=dt, solver=solver, n_save=n_save, y0=y0,
                   key=key, rtol=rtol, atol=atol, max_steps=max_steps, settings=settings,
                   observables=observables, trajectories=trajectories, chunk_size=chunk_size,
                   memory_budget=memory_budget, block_size=block_size, devices=devices,
                   layout=layout, kernel=kernel)
    job.check_memory(collect=True)  # before a file is touched
    output = None
    if out is not None:
        if _file_output is None:
            raise RuntimeError("sweep(out=...) needs difflab.io: import difflab.io")
        output = _file_output(job, out, name=name, resume=resume)
    return execute_sweep(job, output=output, progress=progress)
