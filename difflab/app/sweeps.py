"""Sweeps of the app: one or two parameters over a grid, one observable, filled chunk by chunk.

Qt-free: :func:`run_sweep` calls :func:`difflab.sweep` with the lab's run settings and
hands each chunk to ``emit`` as it completes (the app's sweep worker plots it); ``stop()``
is checked between chunks. :func:`save_sweep` and :func:`load_sweeps` keep the results in
session files: a ``/sweeps/<name>`` group whose ``y`` holds the final states, plus one
``(point)`` variable per observable, as ``difflab sweep --out`` writes them; the grids of
one or two parameters that ``difflab sweep`` wrote are read back too.
"""

import dataclasses
import math
from collections.abc import Callable

import numpy as np

import difflab as dl

from .runs import RunSettings, format_params

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
class SweepData:
    """A sweep as the app holds it, filled in as chunks arrive (NaN/-1 where not yet run)."""

    request: SweepRequest
    values: np.ndarray
    observable: np.ndarray
    result: np.ndarray
    final: np.ndarray
    done: int = 0
    complete: bool = False
    stats: dict = dataclasses.field(default_factory=dict)

    @classmethod
    def empty(cls, request: SweepRequest) -> "SweepData":
        space, n = request.space(), request.n_points
        values = np.stack([space[a.name] for a in request.axes], axis=1)
        return cls(request, values, np.full(n, np.nan), np.full(n, NOT_RUN, np.int32),
                   np.full((n, len(request.model.state_names)), np.nan))

    @property
    def parameter_names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.request.axes)

    def add(self, chunk) -> None:
        sl = slice(chunk.start, chunk.stop)
        self.observable[sl] = chunk.observables[self.request.observable]
        self.result[sl] = chunk.result
        self.final[sl] = chunk.final
        self.done += chunk.stop - chunk.start

    def grid(self) -> np.ndarray:
        """The observable on the sweep's grid (NaN where not run or failed)."""
        values = np.where(self.result == dl.Result.SUCCESS, self.observable, np.nan)
        return values.reshape(self.request.shape)

    def point(self, index: int) -> dict[str, float]:
        return dict(zip(self.parameter_names, map(float, self.values[index])))

    def nearest(self, *coords: float) -> int:
        """The index of the grid point nearest to the given axis values (log axes in log10)."""
        idx = []
        for axis, c in zip(self.request.axes, coords):
            v = axis.values()
            v = np.log10(v) if axis.log else v
            idx.append(int(np.argmin(np.abs(v - c))))
        return int(np.ravel_multi_index(idx, self.request.shape))

    def failures(self, start: int = 0, stop: int | None = None) -> list[int]:
        r = self.result[start:stop]
        return [start + int(i) for i in np.flatnonzero((r != dl.Result.SUCCESS) & (r != NOT_RUN))]

    def describe_failure(self, index: int) -> str:
        """A failed point in words: the model, the point and the reason."""
        point = {**self.request.model.parameters(), **self.point(index)}
        point = {k: float(np.asarray(v)) for k, v in point.items() if np.ndim(v) == 0}
        return (f"{self.request.model_name} at sweep point {index} ({format_params(point)}): "
                f"{dl.Result(int(self.result[index])).message}")


class SweepStopped(Exception):
    """Raised from the progress callback to end a sweep early."""


def run_sweep(request: SweepRequest, emit: Callable = lambda data, chunk: None,
              stop: Callable[[], bool] = lambda: False) -> SweepData:
    """Run ``request`` with :func:`difflab.sweep`, calling ``emit(data, chunk)`` per chunk."""
    data = SweepData.empty(request)

    def progress(chunk):
        data.add(chunk)
        emit(data, chunk)
        if stop():
            raise SweepStopped

    try:
        result = dl.sweep(request.model, request.space(), request.settings.t1, progress=progress,
                          **request.sweep_kwargs())
    except SweepStopped:
        return data
    data.stats, data.complete = dict(result.stats), True
    return data


# -- session files ------------------------------------------------------------------------


def save_sweep(writer, name: str, data: SweepData) -> None:
    """Write a sweep into an open :class:`difflab.io.SessionWriter`."""
    request, s = data.request, data.request.settings
    settings = {k: v for k, v in s.as_dict().items() if v is not None and k != "n_save"}
    sweep = writer.new_sweep(model=request.model, parameter_names=list(data.parameter_names),
                             values=data.values, time=np.array([s.t1]),
                             state_names=request.model.state_names, chunk_size=len(data.values),
                             settings=settings, name=name)
    group = sweep.group
    if data.done == len(data.values):
        sweep.write_chunk(0, ys=data.final[:, None, :], result=data.result, steps=None)
    else:  # a stopped sweep: what was computed, with the chunk left pending (not complete)
        group["y"][:] = data.final[:, None, :]
        group["result"][:] = data.result.astype(np.int8)
    obs = group.create_dataset(request.observable, data=data.observable)
    obs.attrs.update({"long_name": f"observable {request.observable}",
                      "difflab_observable": request.spec, "_FillValue": np.nan})
    obs.dims[0].attach_scale(group["point"])
    group.attrs["observables"] = [request.observable]
    group.attrs["app_sweep"] = _app_attrs(data)
    sweep.finish()


def _app_attrs(data: SweepData) -> str:
    import json

    axes = [dataclasses.asdict(a) for a in data.request.axes]
    return json.dumps({"axes": axes, "reduction": data.request.reduction,
                       "state": data.request.state})


def load_sweeps(lab, session) -> None:
    """Read back the sweeps of a session that the app can draw: the app's own (they carry
    ``app_sweep``) and grids of one or two parameters (``difflab sweep``)."""
    for stored in session.stored("sweeps"):
        try:
            data = _sweep_from_file(lab, stored)
        except (KeyError, ValueError, TypeError) as error:
            lab.log(f"sweep {stored.name!r} could not be shown: {error}", "warning")
            continue
        lab.add_result("sweep", data, stored.name)


def _sweep_from_file(lab, stored) -> SweepData:
    record = stored.model
    model = lab.model_from_record(record)
    if model is None:
        raise ValueError(f"it uses the model file {record.path}, not loaded here")
    settings = RunSettings.from_dict({**stored.settings, "seed": stored.attrs.get("seed", 0)})
    axes, reduction, state, variable = _meta(stored, model)
    request = SweepRequest(model, record.name, axes, reduction, state, settings)
    data = SweepData.empty(request)
    variables = stored.variables
    data.values = np.asarray(variables["parameters"].data, dtype=float)
    data.result = np.asarray(variables["result"].data, dtype=np.int32)
    data.final = np.asarray(variables["y"].data[:, -1, :], dtype=float)
    data.observable = (np.asarray(stored.variables[variable].data, dtype=float) if variable
                       else data.final[:, model.state_names.index(state)])
    data.done = int(np.count_nonzero(data.result != NOT_RUN))
    data.complete = stored.complete
    return data


def _meta(stored, model) -> tuple[tuple[Axis, ...], str, str, str | None]:
    """Axes, reduction, state, and the variable holding the observable (None: final state)."""
    import json

    app = stored.attrs.get("app_sweep")
    if isinstance(app, str):  # the app's own sweep: axes and observable as it chose them
        meta = json.loads(app)
        reduction, state = meta["reduction"], meta["state"]
        return tuple(Axis(**a) for a in meta["axes"]), reduction, state, f"{reduction}_{state}"
    axes = _grid_axes(stored)
    for name in map(str, np.atleast_1d(stored.attrs.get("observables", []))):
        variable = stored.variables.get(name)
        spec = str(variable.attrs.get("difflab_observable", "")) if variable else ""
        reduction, _, state = spec.removesuffix(")").partition("(")
        if reduction in REDUCTIONS and state in model.state_names:
            return axes, reduction, state, name
    return axes, "final", model.state_names[0], None


def _grid_axes(stored) -> tuple[Axis, ...]:
    """The axes of a grid sweep as ``difflab sweep`` writes it (``space_shape``)."""
    shape = tuple(int(n) for n in np.atleast_1d(stored.attrs.get("space_shape", [])))
    names = stored.parameter_names
    if stored.attrs.get("space_kind") != "grid" or not 1 <= len(shape) <= 2 \
            or len(names) != len(shape):
        raise ValueError("the app draws grids of one or two parameters")
    grid = np.asarray(stored.variables["parameters"].data, dtype=float).reshape(*shape, len(shape))
    axes = []
    for k, name in enumerate(names):
        values = np.moveaxis(grid[..., k], k, 0).reshape(shape[k], -1)[:, 0]
        lo, hi, n = float(values[0]), float(values[-1]), len(values)
        log = n > 2 and lo > 0 and np.allclose(values, np.geomspace(lo, hi, n)) \
            and not np.allclose(values, np.linspace(lo, hi, n))
        axes.append(Axis(name, lo, hi, n, bool(log)))
    return tuple(axes)
