"""Runs of the app: the run settings its controls hold, and the Qt-free work that makes runs.

A run is a :class:`difflab.Trajectory` (its arrays on the host), as ``simulate`` returns
it and a session file stores it. The functions here are what the app's worker threads
call (``solve``, ``stream_run``); they take immutable snapshots of the session state
(:class:`SolveRequest`), so they can run on any thread.
"""

import contextlib
import dataclasses
import importlib
import math
import threading
import time
from collections.abc import Callable, Iterator

import jax.numpy as jnp
import numpy as np

import difflab as dl

from .. import _memory_maps
from .._threads import own as own_thread
from .._threads import start as start_thread
from . import accuracy, timing


@dataclasses.dataclass(frozen=True)
class RunSettings:
    """The arguments of :func:`difflab.simulate` the app exposes, with the same defaults.

    ``dt``, ``solver`` and ``n_save`` of ``None`` mean "auto" (see
    :mod:`difflab.app.accuracy`); ``seed`` makes the key of stochastic models; ``y0`` is
    the initial state (``None``: the model's own), passed apart from
    :meth:`simulate_kwargs`.
    """

    t1: float = 10.0
    dt: float | None = None
    solver: str | None = None
    n_save: int | None = None
    t0: float = 0.0
    seed: int = 0
    y0: tuple[float, ...] | None = None

    def __post_init__(self):
        if self.y0 is not None:
            object.__setattr__(self, "y0", tuple(float(v) for v in self.y0))
            if not all(map(math.isfinite, self.y0)):
                raise ValueError(f"the initial state must be finite numbers, got {self.y0}")
        if not (math.isfinite(self.t1) and math.isfinite(self.t0)) or not self.t1 > self.t0:
            raise ValueError(f"t1 ({self.t1}) must be greater than t0 ({self.t0})")
        if self.dt is not None and not (math.isfinite(self.dt) and self.dt > 0):
            raise ValueError(f"dt must be positive, got {self.dt}")
        if self.n_save is not None and int(self.n_save) < 2:
            raise ValueError(f"n_save must be at least 2, got {self.n_save}")
        if self.solver is not None and self.solver not in dl.solvers.available_solvers():
            raise ValueError(f"unknown solver {self.solver!r}; choose from "
                             f"{', '.join(dl.solvers.available_solvers())}")

    def simulate_kwargs(self, model) -> dict:
        """Keyword arguments for ``simulate``/``stream`` (``t1`` and ``y0`` excluded)."""
        kwargs = dict(t0=self.t0, dt=self.dt, solver=self.solver, n_save=self.n_save)
        if isinstance(model, dl.SDEModel):
            import jax

            kwargs["key"] = jax.random.key(self.seed)
        return kwargs

    def as_dict(self) -> dict:
        """The settings as plain values (for session files and QSettings)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: dict) -> "RunSettings":
        """Settings from :meth:`as_dict` output; unknown keys are ignored."""
        fields = {f.name for f in dataclasses.fields(cls)}
        clean = {k: v for k, v in values.items() if k in fields}
        for key in ("t1", "t0", "dt"):
            if clean.get(key) is not None:
                clean[key] = float(clean[key])
        for key in ("n_save", "seed"):
            if clean.get(key) is not None:
                clean[key] = int(clean[key])
        return cls(**clean)


@dataclasses.dataclass(frozen=True)
class SolveRequest:
    """An immutable snapshot of what to simulate; ``serial`` orders requests."""

    serial: int
    model: dl.Model
    model_name: str
    settings: RunSettings
    points: int | None = None  # saved points on auto (what the plot can show)

    def simulate_kwargs(self) -> dict:
        """``settings.simulate_kwargs`` with the settings' initial state."""
        kwargs = self.settings.simulate_kwargs(self.model)
        if self.settings.y0 is not None:
            kwargs["y0"] = np.asarray(self.settings.y0, dtype=float)
        return kwargs


def format_params(params: dict[str, float], most: int = 8) -> str:
    """``g=9.81, length=1`` (the first ``most`` parameters)."""
    items = [f"{k}={v:.6g}" for k, v in list(params.items())[:most]]
    if len(params) > most:
        items.append("...")
    return ", ".join(items)


def params_of(model) -> dict[str, float]:
    """The scalar parameter values of a model (or of a stored model record)."""
    if isinstance(model, dl.io.ModelRecord):  # a user model not loaded here
        return dict(model.parameters)
    return {k: float(np.asarray(v)) for k, v in model.parameters().items() if np.ndim(v) == 0}


def complete(run: dl.Trajectory) -> bool:
    """Whether a run got to its end (a streamed run still coming, or stopped, did not)."""
    n_save = run.settings.n_save if run.settings is not None else len(run.ts)
    return len(run.ts) >= n_save or not run.ok


def describe_failure(run: dl.Trajectory, model_name: str) -> str:
    """A failed run in words: the model, the point (parameters, time) and the reason."""
    ys = np.asarray(run.ys)
    finite = np.all(np.isfinite(ys), axis=1) if len(ys) else np.array([])
    last = np.asarray(run.ts)[np.nonzero(finite)[0][-1]] if finite.any() else run.settings.t0
    return (f"{model_name} ({format_params(params_of(run.model))}) failed after "
            f"t = {float(last):.6g} with {run.settings.solver}: {run.message}")


def on_host(run: dl.Trajectory, name: str, **changes) -> dl.Trajectory:
    """``run`` named ``name`` with its arrays as NumPy arrays (what the plots draw)."""
    values = dict(ts=np.asarray(run.ts), ys=np.asarray(run.ys),
                  result=np.int32(np.max(np.asarray(run.result))),
                  steps=np.int64(np.max(np.asarray(run.steps))))
    return dataclasses.replace(run, name=name, **{**values, **changes})


#: a run slower than this (seconds) is worth the optimized program
SLOW_RUN = 0.02


def solve(request: SolveRequest) -> dl.Trajectory:
    """Simulate a request with :func:`difflab.simulate`, settings on auto chosen by
    :func:`difflab.app.accuracy.simulate`; failures are recorded, not raised.

    Compiled in two tiers: first quickly (``optimize=False``: a third less compile
    time, runs up to twice as long); where a second run is slower than
    :data:`SLOW_RUN`, the optimized program is compiled on a background thread and
    used from then on.
    Waits for a :func:`precompile` still running, rather than compile its programs twice.
    A long session's compiled programs are dropped before they reach the kernel's limit
    on memory maps (:mod:`difflab._memory_maps`).
    """
    _memory_maps.relieve()
    for thread in list(_precompiling):
        if thread is not threading.current_thread():
            thread.join()
    key = _program_key(request)
    with timing.compile_spans() as spans:
        traj = accuracy.simulate(request.model, request.settings, request.points,
                                 request.settings.y0, optimize=key in _optimized)
    end, wall = time.perf_counter(), traj.wall_time or 0.0
    warm = key in _warm  # else the run's wall time holds its compilation
    _warm.add(key)
    if warm and key not in _optimized and wall > SLOW_RUN:
        _optimize_later(request, key)
    run = on_host(traj, "current")
    timing.note(run, min(timing.overlap(spans, end - wall, end), wall))
    return run


_warm: set = set()  # the programs (see _program_key) that have run
_optimized: set = set()  # those whose optimized form is compiled
_optimizing: dict = {}  # key -> the thread compiling it


def _program_key(request: SolveRequest) -> tuple:
    """What tells the app's programs apart (values, which are traced, aside)."""
    s = request.settings
    return (request.model_name, type(request.model), s.solver, s.n_save, s.dt is None,
            request.points)


def _optimize_later(request: SolveRequest, key: tuple) -> threading.Thread:
    """Compile the optimized program of ``request`` on a background thread."""
    if key in _optimizing:
        return _optimizing[key]

    def run():
        try:
            accuracy.simulate(request.model, request.settings, request.points,
                              request.settings.y0, optimize=True)
            _optimized.add(key)
        except Exception:  # noqa: BLE001 (the quick program keeps serving)
            pass

    _optimizing[key] = thread = start_thread(run, name="difflab-optimize")
    return thread


_precompiling: list[threading.Thread] = []


def precompile(request: SolveRequest) -> threading.Thread:
    """Solve ``request`` on a background thread for its compiled programs alone (JAX keeps
    them): started as the window is being built, the window's first solve, the same one,
    finds them ready. A failure is left to that solve to report. Then, no longer waited
    for, the thread loads what a first adaptive or stiff solve would wait for."""

    def run():
        try:
            solve(request)
        except Exception:  # noqa: BLE001 (the real solve reports it)
            pass
        finally:
            _precompiling.remove(thread)
        _load_stiff_solvers()

    thread = threading.Thread(target=run, name="difflab-precompile")
    own_thread(thread, threading.Thread.is_alive, threading.Thread.join)
    _precompiling.append(thread)
    thread.start()
    return thread


def _load_stiff_solvers() -> None:
    """Import diffrax (0.1-0.4 s) and load LAPACK for the implicit solvers' Newton steps
    (scipy's, 0.1 s), which the first adaptive or stiff solve would otherwise wait for.
    A failure is left to the solve that needs them."""
    with contextlib.suppress(Exception):
        importlib.import_module("diffrax")
        jnp.linalg.solve(jnp.eye(2), jnp.ones(2)).block_until_ready()


def stream_run(request: SolveRequest, *, chunk_size: int | None = None,
               stop: Callable[[], bool] = lambda: False
               ) -> Iterator[tuple[dl.Trajectory, dl.solvers.Chunk]]:
    """Stream a request chunk by chunk, yielding the run so far and the chunk.

    The arrays are allocated once, full size; each run yielded holds the points computed
    so far (views of them). ``stop()`` is checked between chunks.
    """
    settings, model = request.settings, request.model
    ts = ys = None
    start = time.perf_counter()
    kwargs = request.simulate_kwargs()
    with contextlib.suppress(TypeError, ValueError):  # else the stream's checks say why
        kwargs.update(accuracy.choose(model, settings, request.points))
    chunk_size = chunk_size or default_chunk_size(kwargs["n_save"] or 1001)
    chunks, spans = dl.stream(model, settings.t1, chunk_size=chunk_size, throw=False,
                              **kwargs), []
    try:
        for chunk in timing.timed(chunks, spans):
            if ts is None:
                ts = np.full(chunk.total, np.nan)
                ys = np.full((chunk.total, chunk.ys.shape[1]), np.nan, order="F")  # columns
            filled = chunk.start + len(chunk.ts)
            ts[chunk.start:filled], ys[chunk.start:filled] = chunk.ts, chunk.ys
            run = dl.Trajectory(
                ts=ts[:filled], ys=ys[:filled], result=np.int32(chunk.result),
                steps=np.int64(0), state_names=tuple(model.state_names),
                wall_time=time.perf_counter() - start, model=model, settings=chunk.settings,
                name="current")
            timing.note(run, min(timing.overlap(spans, start, math.inf), run.wall_time))
            yield run, chunk
            if stop():
                break
    finally:
        chunks.close()


def default_chunk_size(n_save: int, target_chunks: int = 200) -> int:
    """Chunks small enough that a streamed run draws itself smoothly, big enough to be cheap."""
    return int(min(max(n_save // target_chunks, 16), 20_000))


def status_text(run: dl.Trajectory | None, model_name: str, settings: RunSettings) -> str:
    """The status line of the current run: its work and what auto chose, or why it failed."""
    if run is None:
        return ""
    solver = run.settings.solver if run.settings is not None else "?"
    if not run.ok:
        return f"{model_name}: {solver} failed: {run.message}"
    steps = f"{run.steps} steps" if run.steps else f"{len(run.ts)} points"
    compiling = timing.compile_time(run)
    wall = f" in {run.wall_time * 1e3:.1f} ms" if run.wall_time else ""
    if compiling > 0.0005:  # a first run: the time of its program apart, as the CLI says it
        wall = f", {(run.wall_time - compiling) * 1e3:.1f} ms run + {compiling:.2f} s compile"
    chosen = accuracy.chosen(run, settings)
    return f"{model_name}: {steps}{wall}, {solver}" + (f" (auto: {chosen})" if chosen else "")
