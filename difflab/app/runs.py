"""Runs of the app: run settings, the record of one run, and the Qt-free work that makes them.

The functions here are what the app's worker threads call (``solve``, ``stream_run``);
they take immutable snapshots of the session state, so they can run on any thread.
"""

import dataclasses
import math
import time
from collections.abc import Callable, Iterator

import numpy as np

import difflab as dl


@dataclasses.dataclass(frozen=True)
class RunSettings:
    """The arguments of :func:`difflab.simulate` the app exposes, with the same defaults.

    ``dt``, ``solver`` and ``n_save`` of ``None`` mean "the engine's default"; ``seed``
    makes the key of stochastic models.
    """

    t1: float = 10.0
    dt: float | None = None
    solver: str | None = None
    n_save: int | None = None
    t0: float = 0.0
    seed: int = 0

    def __post_init__(self):
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
        """Keyword arguments for ``simulate``/``stream`` (``t1`` excluded)."""
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


@dataclasses.dataclass
class Run:
    """One simulation as the app keeps it: what was run, and its saved times and states.

    Duck-types :class:`difflab.Trajectory` (``ts``, ``ys``, ``result``, ``steps``,
    ``state_names``, ``wall_time``), so ``difflab.io`` writers take it as it is.
    """

    name: str
    model: dl.Model
    model_name: str
    settings: RunSettings
    ts: np.ndarray
    ys: np.ndarray
    state_names: tuple[str, ...]
    result: int = 0
    steps: int = 0
    wall_time: float | None = None
    serial: int = 0
    complete: bool = True
    visible: bool = True
    filled: int | None = None

    @property
    def n_valid(self) -> int:
        """How many saved points hold data (fewer than ``len(ts)`` while streaming)."""
        return len(self.ts) if self.filled is None else self.filled

    @property
    def params(self) -> dict[str, float]:
        if isinstance(self.model, dl.io.ModelRecord):  # a user model not loaded here
            return dict(self.model.parameters)
        return {k: float(np.asarray(v)) for k, v in self.model.parameters().items()
                if np.ndim(v) == 0}

    @property
    def ok(self) -> bool:
        return self.result == dl.Result.SUCCESS

    @property
    def message(self) -> str:
        return dl.Result(self.result).message

    def __getitem__(self, state: str) -> np.ndarray:
        return self.ys[:, self.state_names.index(state)]

    def renamed(self, name: str) -> "Run":
        """A copy named ``name``, holding only the points computed (a stopped stream)."""
        n = self.n_valid
        return dataclasses.replace(self, name=name, ts=self.ts[:n].copy(), ys=self.ys[:n].copy(),
                                   filled=None)


@dataclasses.dataclass(frozen=True)
class SolveRequest:
    """An immutable snapshot of what to simulate; ``serial`` orders requests."""

    serial: int
    model: dl.Model
    model_name: str
    settings: RunSettings


def format_params(params: dict[str, float], most: int = 8) -> str:
    """``g=9.81, length=1`` (the first ``most`` parameters)."""
    items = [f"{k}={v:.6g}" for k, v in list(params.items())[:most]]
    if len(params) > most:
        items.append("...")
    return ", ".join(items)


def describe_failure(run: Run) -> str:
    """A failed run in words: the model, the point (parameters, time) and the reason."""
    finite = np.all(np.isfinite(run.ys), axis=1) if len(run.ys) else np.array([])
    last = run.ts[np.nonzero(finite)[0][-1]] if finite.any() else run.settings.t0
    return (f"{run.model_name} ({format_params(run.params)}) failed after t = {float(last):.6g} "
            f"with {run.settings.solver or 'the default solver'}: {run.message}")


def solve(request: SolveRequest) -> Run:
    """Simulate a request with :func:`difflab.simulate`; failures are recorded, not raised."""
    settings = request.settings
    traj = dl.simulate(request.model, settings.t1, throw=False,
                       **settings.simulate_kwargs(request.model))
    ts, ys = np.asarray(traj.ts), np.asarray(traj.ys)
    return Run("current", request.model, request.model_name, settings, ts, ys,
               tuple(traj.state_names), int(np.max(np.asarray(traj.result))),
               int(np.max(np.asarray(traj.steps))), traj.wall_time, request.serial)


def stream_run(request: SolveRequest, *, chunk_size: int | None = None,
               stop: Callable[[], bool] = lambda: False) -> Iterator[tuple[Run, dl.solvers.Chunk]]:
    """Stream a request chunk by chunk, yielding the run so far (filled to the chunk) and the chunk.

    The run's arrays are allocated once, full size (NaN where not yet computed); ``stop()``
    is checked between chunks, and a stopped run is marked incomplete.
    """
    settings, model = request.settings, request.model
    run = None
    start = time.perf_counter()
    chunks = dl.stream(model, settings.t1, chunk_size=chunk_size or 100, throw=False,
                       **settings.simulate_kwargs(model))
    try:
        for chunk in chunks:
            if run is None:
                run = _empty_run(request, chunk.total, chunk.ys.shape[1])
            stop_at = chunk.start + len(chunk.ts)
            run.ts[chunk.start:stop_at], run.ys[chunk.start:stop_at] = chunk.ts, chunk.ys
            run.result, run.filled = int(chunk.result), stop_at
            run.wall_time = time.perf_counter() - start
            run.complete = stop_at == chunk.total or chunk.result != dl.Result.SUCCESS
            yield run, chunk
            if stop():
                break
    finally:
        chunks.close()


def _empty_run(request: SolveRequest, total: int, n_states: int) -> Run:
    ts = np.full(total, np.nan)
    ys = np.full((total, n_states), np.nan, order="F")  # each state's column contiguous
    return Run("current", request.model, request.model_name, request.settings, ts, ys,
               tuple(request.model.state_names), serial=request.serial, complete=False)


def default_chunk_size(n_save: int, target_chunks: int = 200) -> int:
    """Chunks small enough that a streamed run draws itself smoothly, big enough to be cheap."""
    return int(min(max(n_save // target_chunks, 16), 20_000))
