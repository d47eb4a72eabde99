"""Sweeps of the app: one or two parameters over a grid, one observable, filled chunk by chunk.

Qt-free: :func:`run_sweep` calls :func:`difflab.sweep` with the lab's run settings and
hands each chunk to ``emit`` as it completes (the app's sweep worker plots it); ``stop()``
is checked between chunks. A sweep is a :class:`difflab.SweepResult`, saved and read
back as session files store it; :class:`SweepView` is how the panel reads one (its grid
axes and the observable drawn), for the app's sweeps and those of ``difflab sweep``.
"""

import dataclasses
import json
import math
from collections.abc import Callable

import numpy as np

import difflab as dl

from .runs import RunSettings, format_params, params_of

#: The reductions an app sweep can observe (``difflab.sweep`` observables).
REDUCTIONS = ("final", "max", "min", "mean", "amplitude", "std", "period")
NOT_RUN = -1


@dataclasses.dataclass(frozen=True)
class Axis:
    """One swept parameter: ``n`` values from ``lo`` to ``hi``, evenly or log spaced."""

    name: str
    lo: float
    hi: float
    n: int
    log: bool = False

    def __post_init__(self):
        if self.n < 1:
            raise ValueError(f"{self.name}: the number of values must be at least 1, got {self.n}")
        if not (math.isfinite(self.lo) and math.isfinite(self.hi)):
            raise ValueError(f"{self.name}: the range must be finite")
        if self.n > 1 and not self.hi > self.lo:
            raise ValueError(f"{self.name}: the upper end ({self.hi:g}) must exceed the lower "
                             f"({self.lo:g})")
        if self.log and self.lo <= 0:
            raise ValueError(f"{self.name}: a log range needs a positive lower end, got {self.lo:g}")

    def values(self) -> np.ndarray:
        if self.n == 1:
            return np.array([self.lo])
        if self.log:
            return np.geomspace(self.lo, self.hi, self.n)
        return np.linspace(self.lo, self.hi, self.n)


@dataclasses.dataclass(frozen=True)
class SweepRequest:
    """What to sweep: the model, one or two axes, the observable ``reduction(state)``."""

    model: dl.Model
    model_name: str
    axes: tuple[Axis, ...]
    reduction: str
    state: str
    settings: RunSettings
    chunk_size: int | None = None

    def __post_init__(self):
        if not 1 <= len(self.axes) <= 2:
            raise ValueError("sweep one or two parameters")
        if len(self.axes) == 2 and self.axes[0].name == self.axes[1].name:
            raise ValueError(f"sweep two different parameters, not {self.axes[0].name} twice")
        if self.reduction not in REDUCTIONS:
            raise ValueError(f"unknown reduction {self.reduction!r}; choose from {', '.join(REDUCTIONS)}")
        if self.state not in self.model.state_names:
            raise ValueError(f"{self.model_name} has no state {self.state!r}")

    @property
    def observable(self) -> str:
        """The observable's name in results and files: ``max_x``."""
        return f"{self.reduction}_{self.state}"

    @property
    def spec(self) -> str:
        """The observable as ``difflab.sweep`` reads it: ``max(x)``."""
        return f"{self.reduction}({self.state})"

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(a.n for a in self.axes)

    @property
    def n_points(self) -> int:
        return math.prod(self.shape)

    def space(self) -> dl.Space:
        return dl.grid({a.name: a.values() for a in self.axes})

    def sweep_kwargs(self) -> dict:
        s = self.settings
        kwargs = dict(t0=s.t0, dt=s.dt, solver=s.solver, observables={self.observable: self.spec},
                      chunk_size=self.chunk_size or default_chunk_size(self.n_points))
        if isinstance(self.model, dl.SDEModel):
            import jax

            kwargs["key"] = jax.random.key(s.seed)
        return kwargs


def default_chunk_size(n_points: int, chunks: int = 40) -> int:
    """Small enough that the plot fills in visibly, big enough to keep the devices busy."""
    return max(16, -(-n_points // chunks))


@dataclasses.dataclass
class SweepView:
    """What the sweep panel draws of a :class:`difflab.SweepResult`: its axes (a grid of
    one or two parameters) and the observable shown, ``reduction(state)``, stored as
    ``result.observables[observable]`` (the final state itself for ``final``)."""

    result: dl.SweepResult
    model_name: str
    axes: tuple[Axis, ...]
    reduction: str
    state: str
    observable: str

    @classmethod
    def of(cls, result: dl.SweepResult, model_name: str) -> "SweepView":
        """The view of a sweep made by the app or by ``difflab sweep`` (``ValueError`` if
        it is not a grid of one or two parameters)."""
        return cls(result, model_name, grid_axes(result.space), *_observable(result))

    @property
    def spec(self) -> str:
        return f"{self.reduction}({self.state})"

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(a.n for a in self.axes)

    @property
    def values(self) -> np.ndarray:
        """The observable at each point (the final state for ``final``)."""
        found = self.result.observables.get(self.observable)
        return np.asarray(found if found is not None else self.result[self.state], dtype=float)

    @property
    def done(self) -> int:
        return int(np.count_nonzero(np.asarray(self.result.result) != NOT_RUN))

    def grid(self) -> np.ndarray:
        """The observable on the sweep's grid (NaN where not run or failed)."""
        ok = np.asarray(self.result.result) == dl.Result.SUCCESS
        return np.where(ok, self.values, np.nan).reshape(self.shape)

    def nearest(self, *coords: float) -> int:
        """The index of the grid point nearest to the given axis values (log axes in log10)."""
        idx = []
        for axis, c in zip(self.axes, coords):
            v = axis.values()
            v = np.log10(v) if axis.log else v
            idx.append(int(np.argmin(np.abs(v - c))))
        return int(np.ravel_multi_index(idx, self.shape))

    def point(self, index: int) -> dict[str, float]:
        return {a.name: float(self.result.space[a.name][index]) for a in self.axes}

    def failures(self, start: int = 0, stop: int | None = None) -> list[int]:
        return [int(i) for i in self.result.failed if start <= i < (stop or len(self.result))]

    def describe_failure(self, index: int) -> str:
        """A failed point in words: the model, the point and the reason."""
        point = {**params_of(self.result.model), **self.point(index)}
        return (f"{self.model_name} at sweep point {index} ({format_params(point)}): "
                f"{self.result.message(index)}")


def _observable(result: dl.SweepResult) -> tuple[str, str, str]:
    """``(reduction, state, name)`` of the first observable the app can draw (else the
    final value of the first state)."""
    for name, spec in result.observable_specs.items():
        reduction, _, state = spec.removesuffix(")").partition("(")
        if reduction in REDUCTIONS and state in result.state_names:
            return reduction, state, name
    return "final", result.state_names[0], f"final_{result.state_names[0]}"


def grid_axes(space: dl.Space) -> tuple[Axis, ...]:
    """The axes of a grid of one or two parameters."""
    shape, names = tuple(space.shape), list(space.names)
    if space.kind != "grid" or not 1 <= len(shape) <= 2 or len(names) != len(shape) \
            or any(n.startswith("y0") for n in names):
        raise ValueError("the app draws grids of one or two parameters")
    axes = []
    for k, name in enumerate(names):
        grid = np.asarray(space[name], dtype=float).reshape(shape)
        values = np.moveaxis(grid, k, 0).reshape(shape[k], -1)[:, 0]
        lo, hi, n = float(values[0]), float(values[-1]), len(values)
        log = n > 2 and lo > 0 and np.allclose(values, np.geomspace(lo, hi, n)) \
            and not np.allclose(values, np.linspace(lo, hi, n))
        axes.append(Axis(name, lo, hi, n, bool(log)))
    return tuple(axes)


def _empty(request: SweepRequest) -> dl.SweepResult:
    """The sweep of ``request`` before any point is run (what the plot shows first)."""
    n, k = request.n_points, len(request.model.state_names)
    return dl.SweepResult(
        space=request.space(), state_names=tuple(request.model.state_names),
        ts=np.array([request.settings.t1]), y=np.full((n, 1, k), np.nan),
        result=np.full(n, NOT_RUN, np.int32), steps=np.full(n, NOT_RUN, np.int64),
        observables={request.observable: np.full(n, np.nan)}, stats={}, model=request.model,
        observable_specs={request.observable: request.spec})


def run_sweep(request: SweepRequest, emit: Callable = lambda view, chunk: None,
              stop: Callable[[], bool] = lambda: False) -> SweepView:
    """Run ``request`` with :func:`difflab.sweep`, calling ``emit(view, chunk)`` per chunk;
    a stopped sweep keeps the points it ran."""
    live = SweepView(_empty(request), request.model_name, request.axes, request.reduction,
                     request.state, request.observable)

    def progress(chunk):
        sl = slice(chunk.start, chunk.stop)
        result = live.result
        result.observables[request.observable][sl] = chunk.observables[request.observable]
        result.result[sl], result.y[sl, 0] = chunk.result, chunk.final
        emit(live, chunk)
        return False if stop() else None

    result = dl.sweep(request.model, request.space(), request.settings.t1, progress=progress,
                      **request.sweep_kwargs())
    return dataclasses.replace(live, result=result)


# -- session files ------------------------------------------------------------------------


def load_sweeps(lab, session) -> None:
    """Read back the sweeps of a session that the app can draw: grids of one or two
    parameters (the app's own and those of ``difflab sweep``)."""
    for stored in session.stored("sweeps"):
        try:
            result = _readable(session.sweeps[stored.name], stored)
            SweepView.of(result, "")  # one the app can draw
        except (KeyError, ValueError, TypeError) as error:
            lab.log(f"sweep {stored.name!r} could not be shown: {error}", "warning")
            continue
        if isinstance(result.model, dl.io.ModelRecord):
            model = lab.model_from_record(result.model)
            result = result if model is None else dataclasses.replace(result, model=model)
        lab.add_result("sweep", result, stored.name)


def _readable(result: dl.SweepResult, stored) -> dl.SweepResult:
    """A sweep with its arrays read; the app's sweeps of files written before the sweeps
    kept their grid (``app_sweep``) get it back."""
    app = stored.attrs.get("app_sweep")
    if isinstance(app, str) and result.space.kind != "grid":
        meta = json.loads(app)
        axes = [Axis(**a) for a in meta["axes"]]
        name = f"{meta['reduction']}_{meta['state']}"
        result = dataclasses.replace(
            result, space=dl.grid({a.name: a.values() for a in axes}),
            observable_specs={**result.observable_specs,
                              name: f"{meta['reduction']}({meta['state']})"})
    return dataclasses.replace(
        result, y=np.asarray(result.y), result=np.asarray(result.result, dtype=np.int32),
        steps=np.asarray(result.steps), ts=np.asarray(result.ts),
        observables={k: np.asarray(v, dtype=float) for k, v in result.observables.items()})
