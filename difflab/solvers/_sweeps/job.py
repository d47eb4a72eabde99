"""A sweep checked and laid out: its points cut into chunks, devices and blocks, ready to run.

:class:`SweepJob` does every check before anything is traced, works out the
:class:`Layout`, and runs chunks through the compiled program (``kernel``),
yielding each :class:`SweepChunk` to the host as it completes.
"""

import dataclasses
import functools
import hashlib
import math
import queue
import time
from collections.abc import Iterable, Iterator

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ..._threads import start as start_thread
from ...models import Model
from .. import _auto_step, _sharding
from .._resources import check_memory
from .._result import Result
from .._settings import solve_arguments
from .._simulate import prepare, save_times
from . import computed
from . import kernel as _kernel
from . import observables as _observables
from .datasets import index_dimension
from .spaces import as_space

DEFAULT_MEMORY_BUDGET = 512 * 2**20
BLOCK_COLUMNS = 256  # points per block when stepping columns: about 6 KiB per state, in L1
BLOCK_EACH = 32  # points per block for adaptive/stochastic solvers, which wait on their slowest
NOT_RUN = -1
STEP_SAMPLES = 33  # points of the space probed for the automatic step
VECTOR = 8  # float64 lanes of an AVX-512 register


@dataclasses.dataclass(frozen=True)
class Layout:
    """How the points split into processes, chunks, devices and blocks.

    Process ``p`` owns points ``p * per_process`` onwards (``per_process`` is a multiple of
    ``chunk_size``) and runs ``n_chunks`` chunks in step with the others; each chunk puts
    ``device_rows`` rows (a multiple of ``block``) on each of its devices.
    """

    n_points: int
    chunk_size: int
    per_process: int
    n_chunks: int
    block: int
    device_rows: int
    local_devices: int
    devices: int
    process: int = 0

    @classmethod
    def make(cls, n, mesh, *, chunk_size, block_size, point_bytes, memory_budget):
        """``block_size=None``: each device solves its rows at once, and a chunk fills
        ``memory_budget`` on every device (the layout of GPUs and TPUs)."""
        processes, devices = jax.process_count(), mesh.size
        local = devices // processes
        share = -(-n // processes)
        if chunk_size is None:
            fit = max(1, int(memory_budget) // (2 * point_bytes))
            target = (min(share, local * fit) if block_size is None else
                      min(share, fit, max(-(-share // 10), 16 * local * block_size)))
            chunk_size = -(-share // -(-share // target))
        chunk_size = min(int(chunk_size), share)
        per_process = -(-share // chunk_size) * chunk_size
        rows = -(-chunk_size // local)
        n_blocks = -(-rows // (block_size or rows))
        block = -(-rows // n_blocks)
        if block >= VECTOR:  # whole vectors: a ragged block end costs more than padding
            block = -(-block // VECTOR) * VECTOR
        return cls(n, chunk_size, per_process, per_process // chunk_size, block,
                   n_blocks * block, local, devices, jax.process_index())

    def count(self, process: int | None = None) -> int:
        """How many points a process owns (this one by default)."""
        p = self.process if process is None else process
        return int(np.clip(self.n_points - p * self.per_process, 0, self.per_process))

    @property
    def first(self) -> int:
        return self.process * self.per_process

    def chunk(self, j: int) -> tuple[int, int]:
        """The global points ``(start, stop)`` of this process's chunk ``j`` (may be empty)."""
        start = min(j * self.chunk_size, self.count())
        stop = min(start + self.chunk_size, self.count())
        return self.first + start, self.first + stop


@dataclasses.dataclass(frozen=True, eq=False)
class SweepChunk:
    """Points ``start .. stop - 1`` of a sweep, computed and on the host."""

    index: int
    start: int
    stop: int
    y: np.ndarray
    result: np.ndarray
    steps: np.ndarray
    observables: dict
    elapsed: float

    @property
    def final(self) -> np.ndarray:
        return self.y[:, -1]

    @property
    def n_failed(self) -> int:
        return int(np.count_nonzero(self.result != Result.SUCCESS))


def _plain(value):
    """A concrete step as a float (``None`` and traced values as they are)."""
    return None if value is None or isinstance(value, jax.core.Tracer) else float(value)


def _key_base(key):
    if key is None:
        return None, None
    if jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key):
        return jax.random.key_data(key), str(jax.random.key_impl(key))
    return jnp.asarray(key), None


class SweepJob:
    """A checked sweep, ready to run chunk by chunk: :func:`sweep` without the writing.

    Everything is checked here, before tracing; bad arguments raise ``ValueError`` or
    ``TypeError`` naming the culprit.
    """

    def __init__(self, model, space, t1=None, *, t0=None, dt=None, solver=None, n_save=None,
                 y0=None, key=None, rtol=None, atol=None, max_steps=None, settings=None,
                 observables=None, trajectories=None, chunk_size=None,
                 memory_budget=None, block_size=None, devices=None, layout=None,
                 kernel="auto"):
        if not isinstance(model, Model):
            raise TypeError(f"model must be a difflab.Model, not {type(model).__name__}")
        self.model, self.space = model, as_space(space)
        self.space.check(model)
        self.state_names = tuple(model.state_names)
        self.observables = _observables.resolve_observables(observables, self.state_names)
        self.keep_y = bool(trajectories if trajectories is not None else n_save is not None)
        solve = solve_arguments(settings, t1=t1, t0=t0, dt=dt, solver=solver, n_save=n_save,
                                y0=y0, key=key, rtol=rtol, atol=atol, max_steps=max_steps)
        if n_save is None and not (self.observables or self.keep_y):
            solve["n_save"] = 2  # only the final state is kept
        self.plan, self.args = prepare(model, points=False, **solve)
        self.key = solve["key"]
        self.names = tuple(n for n in self.space.names if n != "y0" and not n.startswith("y0."))
        self.y0_swept = len(self.names) < len(self.space.names)
        if solve["dt"] is None and not self.plan.solver.adaptive:
            self._fastest_point_step(solve)
        self.options = dict(n_save=self.plan.n_save, **{k: solve[k] for k in (
            "t0", "t1", "rtol", "atol", "max_steps")}, dt=_plain(self.args["dt"]))
        self.mesh = _sharding.batch_mesh(self._devices(devices))
        self._check_chunking(chunk_size, block_size)
        columns = not (self.plan.solver.adaptive or self.plan.solver.stochastic)
        device = self.mesh.devices.flat[0]
        self.device_layout = _kernel.resolve_layout(layout, device.platform)
        self.engine = _kernel.resolve_engine(kernel, model, self.plan.solver, self.names)
        whole = self.device_layout == "whole"
        block = block_size or (None if whole else BLOCK_COLUMNS if columns else BLOCK_EACH)
        budget = DEFAULT_MEMORY_BUDGET if memory_budget is None else parse_size(memory_budget)
        if whole and memory_budget is None:
            budget = _kernel.device_budget(device, budget)
        self._block, self._budget = block, budget
        key_data, self._key_impl = _key_base(key)
        self.base = dict(self.args, key=key_data)
        self.observable_sizes = self._check_observables()
        self.set_chunk_size(chunk_size)
        self.ts = np.asarray(save_times(self.plan, self.args))
        if not self.keep_y:
            self.ts = self.ts[-1:]
        self.compile_time = 0.0

    def _fastest_point_step(self, solve: dict) -> None:
        """The automatic step for every point: the rule's (``_auto_step``) for the fastest
        rate probed over the base model and up to :data:`STEP_SAMPLES` points spread over
        the space, so that no point is stepped past its stability."""
        concrete = [solve["t1"], *jax.tree.leaves(eqx.filter(self.model, eqx.is_array))]
        if any(isinstance(x, jax.core.Tracer) for x in concrete):
            return
        n = len(self.space)
        index = np.unique(np.linspace(0, n - 1, min(n, STEP_SAMPLES)).round().astype(int))
        dtype = np.dtype(jnp.result_type(float))
        models = [_kernel.with_values(self.model, self.names, {
            name: jnp.asarray(self.space[name][i], dtype) for name in self.names}) for i in index]
        y0s = [self.initial_states(i, i + 1)[0] for i in index]
        t0, t1 = float(self.args["t0"]), float(self.args["t1"])
        rate = _auto_step.probe_rates(self.model, t0, t1, [self.args["y0"], *y0s],
                                      [self.model, *models])
        dt, _ = _auto_step.fixed_step(self.plan.solver, rate, t1 - t0, float(self.args["rtol"]))
        if dt < float(self.args["dt"]):
            self.plan, self.args = prepare(self.model, points=False, **dict(solve, dt=dt))

    def set_chunk_size(self, chunk_size: int | None) -> None:
        """Cut the points into chunks of ``chunk_size`` (``None``: from the memory budget)."""
        self.layout = Layout.make(len(self.space), self.mesh, chunk_size=chunk_size,
                                  block_size=self._block, point_bytes=self._point_bytes(),
                                  memory_budget=self._budget)
        self.kernel = _kernel.Kernel(self.plan, self.names, self.y0_swept, self.kernel_observables,
                                           self.keep_y, self.layout.block, self.state_names,
                                           self._key_impl, self.engine)

    @staticmethod
    def _devices(devices):
        if devices is not None and jax.process_count() > 1:
            raise ValueError("devices= cannot be chosen in a multi-process sweep: it uses them all")
        return devices

    @staticmethod
    def _check_chunking(chunk_size, block_size):
        for name, value in (("chunk_size", chunk_size), ("block_size", block_size)):
            if value is not None and (not isinstance(value, (int, np.integer)) or value < 1):
                raise ValueError(f"{name} must be a positive integer, got {value!r}")

    def _observed_values(self) -> int:
        """How many numbers the observables keep per point."""
        return sum(self.observable_sizes.get(name) or 1 for name, _ in self.observables)

    def _point_bytes(self) -> int:
        kept = self.plan.n_save if self.keep_y else 1
        n = len(self.state_names)
        return 8 * (kept * n + self._observed_values() + len(self.space.names) + n + 4)

    def output_bytes(self) -> int:
        """About the bytes of every point's results (trajectories or final states,
        observables, codes and swept values): in memory when collected, in a file when
        streamed to one."""
        n = len(self.state_names)
        values = len(self.ts) * n + self._observed_values() + len(self.space.names)
        return self.n_points * (8 * (values + (n if self.y0_swept else 0)) + 16)

    def check_memory(self, collect: bool = True) -> None:
        """``ValueError`` (one line) unless a chunk's work, and with ``collect`` every
        point's results, fit in the memory allowed (``DIFFLAB_MEMORY_LIMIT``)."""
        need = 2 * self.layout.chunk_size * self._point_bytes()
        hint = "use a smaller chunk_size"
        if collect:
            need += self.output_bytes()
            hint = ("keep fewer states (n_save) or points, or stream the sweep to a file "
                    "(out=, the command line), which keeps nothing in memory")
        check_memory(need, f"a sweep of {self.n_points:,} points", hint)

    def _check_observables(self) -> dict:
        """``{name: k}`` for the observables giving ``k`` values per point (``ValueError``
        for a name taken or a result of another shape)."""
        sizes, keyed = {}, []
        for name, fn in self.observables:
            if name in self.space.names:
                raise ValueError(f"observable {name!r} has the name of a swept column")
            fn, result = computed.keyed(fn, self._observe_point, self._point_structs())
            keyed.append((name, fn))
            shape = result.shape
            if len(shape) > 1:
                raise ValueError(f"observable {name!r} must return one number or one vector "
                                 f"per point, not an array of shape {shape}")
            if shape:
                sizes[name] = int(shape[0])
        taken = {index_dimension(name) for name in sizes} & {n for n, _ in self.observables}
        if taken:
            raise ValueError(f"observable {taken.pop()!r} has the name of another "
                             "observable's index dimension")
        self.kernel_observables = tuple(keyed)  # keyed by what they compute
        return sizes

    def _point_structs(self) -> tuple:
        """Shapes and dtypes of what a point's trajectory is made of in the kernel."""
        f, n = jnp.result_type(float), len(self.state_names)
        count = jnp.int64 if jax.config.jax_enable_x64 else jnp.int32
        dynamic = jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype),
                               self.args["model"])
        values = {name: jax.ShapeDtypeStruct((), f) for name in self.names}
        return (jax.ShapeDtypeStruct((self.plan.n_save,), f),
                jax.ShapeDtypeStruct((self.plan.n_save, n), f), jax.ShapeDtypeStruct((), jnp.int32),
                jax.ShapeDtypeStruct((), count), dynamic, values)

    def _observe_point(self, fn, ts, ys, result, steps, dynamic, values):
        """``fn`` of a point's trajectory, built as the kernel builds it (``kernel._observe``)."""
        model = eqx.combine(dynamic, self.plan.model_static)
        model = _kernel.with_values(model, self.names, values)
        return fn(_kernel.Trajectory(ts, ys, result, steps, self.state_names, model=model))

    # -- the points ---------------------------------------------------------------------

    @property
    def n_points(self) -> int:
        return len(self.space)

    def initial_states(self, start: int, stop: int) -> np.ndarray:
        """The initial state of points ``start .. stop - 1``: the base ``y0`` with swept parts."""
        rows = self.space.rows(start, stop)
        y0 = np.array(rows["y0"]) if "y0" in rows else np.tile(np.asarray(self.args["y0"]),
                                                                 (stop - start, 1))
        for name, values in rows.items():
            if name.startswith("y0."):
                y0[:, self.state_names.index(name[3:])] = values
        return y0

    def _host_points(self, start: int, stop: int) -> dict:
        if stop <= start:  # a process with no points left runs padding in step with the rest
            start, stop = 0, 1
        dtype = np.dtype(jnp.result_type(float))
        rows = self.space.rows(start, stop)
        points = {n: rows[n].astype(dtype) for n in self.names}
        index = np.int64 if dtype == np.float64 else np.int32
        points["index"] = np.arange(start, stop, dtype=index)
        if self.y0_swept:
            points["y0"] = self.initial_states(start, stop).astype(dtype)
        rows_local = self.layout.device_rows * self.layout.local_devices
        return _sharding.pad_batch(points, rows_local)

    # -- running ----------------------------------------------------------------------

    def program(self):
        """The compiled program and its replicated inputs (compiled once per kernel and size)."""
        base = _kernel.put_replicated(self.base, self.mesh)
        rows = self.layout.device_rows * self.layout.devices
        sharding = _sharding.batch_sharding(self.mesh)
        points = jax.tree.map(
            lambda x: jax.ShapeDtypeStruct((rows, *x.shape[1:]), x.dtype, sharding=sharding),
            self._host_points(0, 1))
        made, fresh = _kernel.program(self.kernel, self.mesh, base, points)
        if fresh:
            self.compile_time += made.compile_time
        return made, base

    def _put(self, j: int):
        start, stop = self.layout.chunk(j)
        rows_global = self.layout.device_rows * self.layout.devices
        return _sharding.put_batch(self._host_points(start, stop), self.mesh, rows_global)

    def run(self, chunks: Iterable[int]) -> Iterator[SweepChunk]:
        """Compute the given chunks of this process, yielding each as it completes.

        A chunk runs in a helper thread while this one waits, so Ctrl-C
        (``KeyboardInterrupt``) stops the sweep at once, not when the chunk ends (the
        abandoned chunk finishes in the background and is dropped). The next chunk
        starts as soon as one is done, so the devices keep working while the host
        stores results.
        """
        todo = list(chunks)
        if not todo:
            return
        program, base = self.program()
        worker = Worker()

        def start(j):
            points = self._put(j)
            worker.submit(lambda: jax.block_until_ready(program(base, points)))
            return j, time.perf_counter()

        try:
            current = start(todo.pop(0))
            while current is not None:
                out = worker.result()
                j, started = current
                current = start(todo.pop(0)) if todo else None
                yield self._fetch(j, started, out)
        finally:
            worker.close()

    def _fetch(self, j, started, out) -> SweepChunk:
        out = _sharding.local_rows(out)
        start, stop = self.layout.chunk(j)
        m = stop - start
        return SweepChunk(j, start, stop, out["y"][:m], out["result"][:m], out["steps"][:m],
                          {k: v[:m] for k, v in out.get("observables", {}).items()},
                          time.perf_counter() - started)

    # -- records ----------------------------------------------------------------------

    @property
    def solver_name(self) -> str:
        from .._steppers.catalog import FIXED

        solver = self.plan.solver
        for name in FIXED:
            if FIXED[name] == solver:
                return name
        inner = getattr(solver, "solver", None)
        return type(inner or solver).__name__.lower()

    def settings(self) -> dict:
        """The solver settings shared by every point, as a file records them."""
        return dict(self.options, solver=self.solver_name, y0=np.asarray(self.args["y0"]))

    def fingerprint(self) -> str:
        """A digest of everything that determines the results (not how they are chunked)."""
        h = hashlib.sha256()
        leaves = jax.tree.leaves(eqx.filter(self.model, eqx.is_array))
        for item in (type(self.model).__qualname__, self.solver_name, self.keep_y,
                     sorted((k, None if v is None else float(v)) for k, v in self.options.items()),
                     [(n, _observables.describe_observable(f)) for n, f in self.observables],
                     self.space.shape):
            h.update(repr(item).encode())
        for array in [*leaves, self.args["y0"], *self.space.columns.values()]:
            h.update(np.ascontiguousarray(np.asarray(array, dtype=np.float64)).tobytes())
        if self.key is not None:
            h.update(np.asarray(_key_base(self.key)[0]).tobytes())
        for name in self.space.names:
            h.update(name.encode())
        return h.hexdigest()


class Worker:
    """A thread that runs one task at a time; waiting for a result lets signals (Ctrl-C)
    through, and an abandoned task finishes unseen. The thread ends after :meth:`close`
    once its task is done, and the interpreter's exit waits for it (see ``difflab._threads``)."""

    def __init__(self):
        self._tasks, self._results = queue.SimpleQueue(), queue.SimpleQueue()
        self._pending = 0  # tasks submitted and not yet collected
        self._thread = start_thread(self._serve, name="difflab-sweep",
                                    stop=functools.partial(self._tasks.put, None))

    def _serve(self):
        while (task := self._tasks.get()) is not None:
            try:
                self._results.put((True, task()))
            except BaseException as error:  # handed to the waiting thread
                self._results.put((False, error))

    def submit(self, task) -> None:
        self._pending += 1
        self._tasks.put(task)

    def result(self):
        """The value of the oldest task not yet collected (or its exception)."""
        while True:
            try:
                ok, value = self._results.get(timeout=0.05)
            except queue.Empty:
                continue
            self._pending -= 1
            if not ok:
                raise value
            return value

    def close(self) -> None:
        """Let the thread end once its task, if any, is done; with no task left running,
        wait for it to end (at once), so that a sweep leaves no thread behind."""
        self._tasks.put(None)
        if not self._pending:
            self._thread.join()


MIN_MEMORY_BUDGET = 2**10  # below a KiB the budget is surely a slip (a bare number is bytes)


def parse_size(budget) -> int:
    """Bytes from a number or a size such as ``"512 MiB"`` or ``"2 GB"`` (at least 1 KiB)."""
    if isinstance(budget, str):
        units = {"kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40, "kb": 10**3,
                 "mb": 10**6, "gb": 10**9, "tb": 10**12, "b": 1}
        text = budget.strip().lower().replace(" ", "")
        size = None
        for unit, scale in units.items():
            if text.endswith(unit):
                try:
                    size = float(text[: -len(unit)]) * scale
                except ValueError:
                    pass
                break
        if size is None or not math.isfinite(size):
            raise ValueError(f"memory_budget {budget!r}: write a size like '512 MiB' or '2 GB'")
    elif isinstance(budget, (int, float)) and not isinstance(budget, bool):
        size = budget
    else:
        raise ValueError(f"memory_budget must be a number of bytes or a size like '512 MiB', "
                         f"got {budget!r}")
    if not size >= MIN_MEMORY_BUDGET:  # NaN too
        shown = f"{budget!r}" if isinstance(budget, str) else f"{budget!r} bytes"
        raise ValueError(f"memory_budget {shown} is too small: give at least '1 KiB' "
                         "(a bare number counts bytes; write e.g. '512 MiB')")
    return int(min(size, 2**62))
