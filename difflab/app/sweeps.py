"""Sweeps of the app: one or two parameters over a grid, one observable, filled chunk by chunk.

An axis sweeps a parameter (``rho``) or a component of the initial state, named as
``difflab.sweep`` names it (``y0.x``, drawn as ``x(0)``); the other components start
from the lab's initial state.

An observable is a number per point (a line over one parameter, a heat map over two;
``lyapunov``, the largest Lyapunov exponent, makes a chaos map), or the values of
``maxima`` (or of a ``section`` in a sweep of ``difflab sweep``) per point: an orbit
diagram over one parameter. ``after`` drops the saved times before it (the transient).

Qt-free: :func:`run_sweep` calls :func:`difflab.sweep` with the lab's run settings and
hands each chunk to ``emit`` as it completes (the app's sweep worker plots it); ``stop()``
is checked between chunks. A sweep is a :class:`difflab.SweepResult`, saved and read
back as session files store it; :class:`SweepView` is how the panel reads one (its grid
axes and the observable drawn), for the app's sweeps and those of ``difflab sweep``.
"""

import dataclasses
import json
import math
import re
from collections.abc import Callable

import numpy as np

import difflab as dl

from .runs import RunSettings, format_params, params_of

#: The reductions an app sweep can observe (``difflab.sweep`` observables).
REDUCTIONS = ("final", "max", "min", "mean", "amplitude", "std", "period", "maxima", "lyapunov")
ORBITS = ("maxima", "section")  # a vector of values per point: an orbit diagram
LYAPUNOV_DT = 0.01  # the step of the tangent dynamics when the run's dt is the solver's
ORBIT_SAMPLES = 5001  # saved times an orbit diagram finds its maxima between (one per step at most)
NOT_RUN = -1
INITIAL = "y0."  # an axis over a component of the initial state: "y0.x"


def initial_axis(state: str) -> str:
    """The name of the axis over the initial value of ``state``: ``y0.x``."""
    return INITIAL + state


def initial_component(name: str) -> str | None:
    """The state whose initial value axis ``name`` sweeps (``y0.x``: ``x``), else ``None``."""
    return name[len(INITIAL):] if name.startswith(INITIAL) else None


def axis_title(name: str) -> str:
    """An axis as a user reads it: ``rho``, or ``x(0)`` for ``y0.x``."""
    state = initial_component(name)
    return name if state is None else f"{state}(0)"


@dataclasses.dataclass(frozen=True)
class Axis:
    """One swept parameter (or initial-state component, ``y0.x``): ``n`` values from
    ``lo`` to ``hi``, evenly or log spaced."""

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
    """What to sweep: the model, one or two axes, the observable ``reduction(state)``
    over the saved times from ``after`` on (``None``: all of them). ``lyapunov`` ignores
    ``state`` and ``after``: the run is its transient, and it averages over as long again."""

    model: dl.Model
    model_name: str
    axes: tuple[Axis, ...]
    reduction: str
    state: str
    settings: RunSettings
    chunk_size: int | None = None
    after: float | None = None

    def __post_init__(self):
        if not 1 <= len(self.axes) <= 2:
            raise ValueError("sweep one or two parameters")
        if len(self.axes) == 2 and self.axes[0].name == self.axes[1].name:
            raise ValueError(f"sweep two different parameters, not {self.axes[0].name} twice")
        if self.reduction not in REDUCTIONS:
            raise ValueError(f"unknown reduction {self.reduction!r}; choose from {', '.join(REDUCTIONS)}")
        if self.state not in self.model.state_names:
            raise ValueError(f"{self.model_name} has no state {self.state!r}")
        for axis in self.axes:
            if initial_component(axis.name) not in (None, *self.model.state_names):
                raise ValueError(f"{self.model_name} has no state {axis.name[len(INITIAL):]!r} "
                                 "to start from")
        if self.vector and len(self.axes) == 2:
            raise ValueError(f"an orbit diagram ({self.reduction}) sweeps one parameter")
        if self.after is not None and not self.settings.t0 <= self.after < self.settings.t1:
            raise ValueError(f"after ({self.after:g}) must lie from t0 up to t1 "
                             f"({self.settings.t0:g} to {self.settings.t1:g})")

    @property
    def vector(self) -> bool:
        """True when each point keeps a vector of values (an orbit diagram)."""
        return self.reduction in ORBITS

    @property
    def observable(self) -> str:
        """The observable's name in results and files: ``max_x``."""
        return "lyapunov" if self.reduction == "lyapunov" else f"{self.reduction}_{self.state}"

    @property
    def spec(self) -> str:
        """The observable as ``difflab.sweep`` reads it: ``max(x)``, ``maxima(x, after=50)``."""
        s = self.settings
        if self.reduction == "lyapunov":
            text = f"lyapunov({s.t1 - s.t0!r}, dt={s.dt or LYAPUNOV_DT!r})"
        else:
            after = "" if self.after is None else f", after={float(self.after)!r}"
            text = f"{self.reduction}({self.state}{after})"
        (_, observable), = dl.solvers.resolve_observables({"o": text}, self.model.state_names)
        return dl.solvers.describe_observable(observable)

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
        if s.y0 is not None:  # the lab's initial state, the base of swept components
            kwargs["y0"] = np.asarray(s.y0, dtype=float)
        if self.vector and s.dt is not None:  # dense enough for the maxima, none kept
            steps = math.ceil((s.t1 - s.t0) / s.dt * (1.0 - 1e-12))
            kwargs.update(n_save=min(ORBIT_SAMPLES, steps + 1), trajectories=False)
        if isinstance(self.model, dl.SDEModel):
            import jax

            kwargs["key"] = jax.random.key(s.seed)
        return kwargs


def default_chunk_size(n_points: int, chunks: int = 40) -> int:
    """Small enough that the plot fills in visibly, big enough to keep the devices busy."""
    return max(16, -(-n_points // chunks))


def initial_states(request: SweepRequest) -> np.ndarray | None:
    """The initial state of every point when an axis sweeps one (else ``None``): the
    lab's, or the model's own, with the swept components."""
    swept = {initial_component(a.name) for a in request.axes} - {None}
    if not swept:
        return None
    base = request.settings.y0 or np.asarray(request.model.initial_state(), dtype=float)
    rows = np.tile(np.asarray(base, dtype=float), (request.n_points, 1))
    space, names = request.space(), list(request.model.state_names)
    for state in swept:
        rows[:, names.index(state)] = space[initial_axis(state)]
    return rows


@dataclasses.dataclass
class SweepView:
    """What the sweep panel draws of a :class:`difflab.SweepResult`: its axes (a grid of
    one or two parameters) and the observable shown, its ``spec`` such as ``max(x)``,
    stored as ``result.observables[observable]`` (the final state itself for
    ``final(x)``): one number per point, or a vector per point (an orbit diagram)."""

    result: dl.SweepResult
    model_name: str
    axes: tuple[Axis, ...]
    observable: str
    spec: str

    @classmethod
    def of(cls, result: dl.SweepResult, model_name: str,
           observable: str | None = None) -> "SweepView":
        """The view of a sweep made by the app or by ``difflab sweep`` (``ValueError`` if
        it is not a grid of one or two parameters), drawing ``observable`` (by name; by
        default the first it can draw, see :func:`drawable`)."""
        axes = grid_axes(result.space)
        choices = drawable(result, len(axes))
        return cls(result, model_name, axes, observable, choices[observable]) \
            if observable in choices else cls(result, model_name, axes, *next(iter(choices.items())))

    @property
    def after(self) -> float | None:
        """The start of the saved times the observable counts (``None``: all of them)."""
        found = re.search(r"after=([^,)]+)", self.spec)
        return None if found is None else float(found.group(1))

    def run_settings(self) -> dict:
        """The sweep's own ``t0``, ``t1``, ``dt`` and ``solver`` (what made it), as
        :meth:`difflab.app.lab.Lab.set_settings` takes them: a point clicked through is
        simulated as the sweep simulated it."""
        stored = self.result.settings or {}
        found = {k: stored[k] for k in ("t0", "t1", "dt") if stored.get(k) is not None}
        found = {k: float(v) for k, v in found.items()}
        if isinstance(stored.get("solver"), str):
            found["solver"] = stored["solver"]
        if "dt" in found or "solver" in found:
            found.setdefault("dt", None)
        return found

    def copy(self) -> "SweepView":
        """This view over copies of the sweep's arrays (the worker of a sweep let go of
        may still write into the ones it filled)."""
        r = self.result
        result = dataclasses.replace(
            r, y=np.array(r.y), result=np.array(r.result), steps=np.array(r.steps),
            observables={k: np.array(v) for k, v in r.observables.items()})
        return dataclasses.replace(self, result=result)

    @property
    def reduction(self) -> str:
        return self.spec.partition("(")[0]

    @property
    def state(self) -> str:
        return self.spec.partition("(")[2].partition(",")[0].removesuffix(")").strip()

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(a.n for a in self.axes)

    @property
    def vector(self) -> bool:
        """True when each point has a vector of values (an orbit diagram)."""
        return self.values.ndim == 2

    @property
    def diverging(self) -> bool:
        """True for values whose sign matters most (a chaos map: drawn centred at 0)."""
        return self.reduction == "lyapunov"

    @property
    def values(self) -> np.ndarray:
        """The observable at each point (the final state for ``final``): ``(points,)``,
        or ``(points, k)`` for an orbit diagram."""
        found = self.result.observables.get(self.observable)
        return np.asarray(found if found is not None else self.result[self.state], dtype=float)

    @property
    def done(self) -> int:
        return int(np.count_nonzero(np.asarray(self.result.result) != NOT_RUN))

    def grid(self) -> np.ndarray:
        """The observable on the sweep's grid (NaN where not run or failed)."""
        ok = np.asarray(self.result.result) == dl.Result.SUCCESS
        return np.where(ok, self.values, np.nan).reshape(self.shape)

    def orbit(self) -> tuple[np.ndarray, np.ndarray]:
        """An orbit diagram's dots: each finite value of each point that succeeded, and
        the swept value there."""
        ok = np.asarray(self.result.result) == dl.Result.SUCCESS
        values = np.where(ok[:, None], self.values, np.nan)
        swept = np.asarray(self.result.space[self.axes[0].name], dtype=float)
        keep = np.isfinite(values)
        return np.broadcast_to(swept[:, None], values.shape)[keep], values[keep]

    def nearest(self, *coords: float) -> int:
        """The index of the grid point nearest to the given axis values (log axes in log10)."""
        idx = []
        for axis, c in zip(self.axes, coords):
            v = axis.values()
            v = np.log10(v) if axis.log else v
            idx.append(int(np.argmin(np.abs(v - c))))
        return int(np.ravel_multi_index(idx, self.shape))

    def point(self, index: int) -> dict[str, float]:
        """The swept values of point ``index`` by axis name (``rho``, ``y0.x``)."""
        return {a.name: float(self.result.space[a.name][index]) for a in self.axes}

    def parameters(self, index: int) -> dict[str, float]:
        """The swept parameters of point ``index``."""
        return {k: v for k, v in self.point(index).items() if initial_component(k) is None}

    def initial_state(self, index: int) -> dict[str, float]:
        """The initial state of point ``index`` by state name when the sweep varies it
        (else empty): the whole state the point started from when the sweep kept it."""
        swept = {initial_component(k): v for k, v in self.point(index).items()
                 if initial_component(k) is not None}
        if not swept or self.result.y0 is None:
            return swept
        row = np.asarray(self.result.y0[index], dtype=float)
        return dict(zip(self.result.state_names, map(float, row)))

    def describe(self, index: int) -> str:
        """Point ``index`` in words: ``rho = 28, x(0) = 1.5``."""
        return ", ".join(f"{axis_title(k)} = {v:.4g}" for k, v in self.point(index).items())

    def failures(self, start: int = 0, stop: int | None = None) -> list[int]:
        return [int(i) for i in self.result.failed if start <= i < (stop or len(self.result))]

    def describe_failure(self, index: int) -> str:
        """A failed point in words: the model, the point and the reason."""
        swept = {axis_title(k): v for k, v in self.point(index).items()}
        point = {**params_of(self.result.model), **swept}
        return (f"{self.model_name} at sweep point {index} ({format_params(point)}): "
                f"{self.result.message(index)}")


def drawable(result: dl.SweepResult, n_axes: int) -> dict[str, str]:
    """``{name: spec}`` of every observable the app can draw over ``n_axes`` parameters
    (a number per point, or over one parameter a vector: an orbit diagram), in the
    sweep's order; the final value of the first state where there is none."""
    found = {}
    for name, spec in result.observable_specs.items():
        if spec.partition("(")[0] not in (*REDUCTIONS, *ORBITS) \
                or name not in result.observables:
            continue  # a Python function's
        vector = len(np.shape(result.observables[name])) == 2
        if n_axes == 1 or not vector:
            found[name] = spec
    state = result.state_names[0]
    return found or {f"final_{state}": f"final({state})"}


def grid_axes(space: dl.Space) -> tuple[Axis, ...]:
    """The axes of a grid of one or two parameters or initial-state components."""
    shape, names = tuple(space.shape), list(space.names)
    if space.kind != "grid" or not 1 <= len(shape) <= 2 or len(names) != len(shape) \
            or "y0" in names:
        raise ValueError("the app draws grids of one or two parameters or initial values")
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
        observable_specs={request.observable: request.spec}, y0=initial_states(request))


def run_sweep(request: SweepRequest, emit: Callable = lambda view, chunk: None,
              stop: Callable[[], bool] = lambda: False) -> SweepView:
    """Run ``request`` with :func:`difflab.sweep`, calling ``emit(view, chunk)`` per chunk;
    a stopped sweep keeps the points it ran."""
    live = SweepView(_empty(request), request.model_name, request.axes, request.observable,
                     request.spec)

    def progress(chunk):
        sl = slice(chunk.start, chunk.stop)
        result, name = live.result, request.observable
        got = chunk.observables[name]
        if result.observables[name].shape[1:] != got.shape[1:]:  # a vector per point
            result.observables[name] = np.full((len(result), *got.shape[1:]), np.nan)
        result.observables[name][sl] = got
        result.result[sl], result.y[sl, 0] = chunk.result, chunk.final
        emit(live, chunk)
        return False if stop() else None

    result = dl.sweep(request.model, request.space(), request.settings.t1, progress=progress,
                      **request.sweep_kwargs())
    return dataclasses.replace(live, result=result)


# -- session files ------------------------------------------------------------------------


def load_sweeps(lab, session) -> None:
    """Read back the sweeps of a session that the app can draw: grids of one or two
    parameters or initial-state components (the app's own and those of ``difflab sweep``)."""
    for stored in session.stored("sweeps"):
        try:
            result = session.sweeps[stored.name]
            if isinstance(result, dl.solvers.FieldSweepResult):
                continue  # the field view's (see session_io.load_field_sweep)
            result = _readable(result, stored)
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
    app = stored.attrs.get("app_sweep")  # files written before sweeps kept their grid
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
