"""``sweep`` for field models: every point's run in one vmapped program, reduced on the
device to the observables asked for, so only numbers per point come back."""

import dataclasses
import re

import jax
import jax.numpy as jnp
import numpy as np

from ..models import AbstractFieldModel, dominant_wavelength
from ._field_checks import WORKING_COPIES, check_memory_of, check_solver, check_stable
from ._field_runs import FIXED_STEPS, _default_dt, simulate_field_model
from ._result import Result
from ._sharding import (
    batch_mesh,
    local_rows,
    map_batch,
    pad_batch,
    padded_size,
    put_batch,
)
from ._sweeps.job import DEFAULT_MEMORY_BUDGET, NOT_RUN, Worker, parse_size
from ._sweeps.kernel import device_budget
from ._sweeps.spaces import Space, as_space

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")

DEFAULT_SWEEP_FRAMES = 11

#: on a CPU a sweep of enough points runs in at least this many chunks, so that its
#: progress shows and an interrupted sweep keeps most of its points (a CPU gains little
#: from a batch wider than its cores; an accelerator's chunks are what memory holds)
CPU_CHUNKS = 8


@dataclasses.dataclass(eq=False)
class FieldSweepResult:
    """A field model's sweep: ``observables[name]`` (points,) per observable, ``final``
    ``{field: (points, *grid.shape)}`` (the last frames), ``result`` (points,) the
    :class:`Result` code of each point (``DIVERGED`` where a value is not finite)."""

    space: Space
    observables: dict
    final: dict
    result: np.ndarray
    model: object = None
    settings: dict = dataclasses.field(default_factory=dict)  # t0, t1, dt, solver, n_save
    specs: dict = dataclasses.field(default_factory=dict)  # {name: "mean(u)"} where given

    def __len__(self) -> int:
        return len(self.result)

    @property
    def complete(self) -> bool:
        """True when every point has been computed (an interrupted sweep is not: its
        points not run have the result code ``-1``)."""
        return not np.any(np.asarray(self.result) == NOT_RUN)

    def __getitem__(self, name: str) -> np.ndarray:
        """The observable ``name`` at every point."""
        try:
            return self.observables[name]
        except KeyError:
            raise KeyError(f"no observable {name!r}; the observables are "
                           f"{', '.join(self.observables) or 'none'}") from None


def _check_columns(model: AbstractFieldModel, space: Space) -> None:
    specs = model.parameter_specs()
    for name in space.columns:
        if name not in specs:
            raise ValueError(f"{type(model).__name__} has no parameter {name!r} to sweep; "
                             f"its parameters are {', '.join(specs) or 'none'}")


#: the numbers a spec like ``"mean(u)"`` takes of a field's last frame ``u`` on grid ``g``
REDUCTIONS = {
    "mean": lambda u, g: jnp.mean(u),
    "max": lambda u, g: jnp.max(u),
    "min": lambda u, g: jnp.min(u),
    "norm": lambda u, g: jnp.sqrt(g.integrate(u**2)),  # the L2 norm over the domain
    "wavelength": dominant_wavelength,  # of the power spectrum's peak (periodic grids)
}
_SPEC = re.compile(r"\s*([a-z]+)\s*\(\s*([A-Za-z_]\w*)\s*\)\s*")


def spec_name(spec: str) -> str:
    """The name a spec gives its observable where none is given: ``mean(u)`` -> ``mean_u``."""
    return re.sub(r"\W+", "_", spec.strip()).strip("_")


def field_observable(spec: str, field_names) -> object:
    """``f(traj)`` for a spec ``"<kind>(<field>)"``: the kind (mean, max, min, norm,
    wavelength) of the field's last frame."""
    match = _SPEC.fullmatch(spec)
    if match is None or match.group(1) not in REDUCTIONS:
        raise ValueError(f"observable {spec!r}: write <kind>(<field>), kind one of "
                         f"{', '.join(REDUCTIONS)}")
    kind, field = match.groups()
    if field not in field_names:
        raise ValueError(f"observable {spec!r}: no field {field!r}; the fields are "
                         f"{', '.join(field_names)}")
    reduce = REDUCTIONS[kind]
    return lambda traj: reduce(traj[field][-1], traj.grid)


def _named(observables):
    """``{name: f or spec}`` from a dict, or from a list of specs."""
    if isinstance(observables, (list, tuple)):
        return {spec_name(s): s for s in observables}
    return observables


def field_observables(observables, field_names) -> dict:
    """``{name: f}`` from ``{name: f or spec}``, or a list of specs (named by
    :func:`spec_name`)."""
    observables = _named(observables)
    if not isinstance(observables, dict):
        raise TypeError("a field sweep's observables are {name: f} with f(traj) -> number "
                        "(f given the point's FieldTrajectory) or a spec like 'mean(u)'")
    out = {}
    for name, f in observables.items():
        if not isinstance(name, str) or not NAME.fullmatch(name):
            raise ValueError(f"observable name {name!r}: use letters, digits and '_'")
        if not (callable(f) or isinstance(f, str)):
            raise TypeError(f"observable {name!r} must be a function or a spec like 'mean(u)'")
        out[name] = field_observable(f, field_names) if isinstance(f, str) else f
    return out


def _points(model, space: Space):
    """The model at every point (host side, concrete: for checks before the run)."""
    for i in range(len(space)):
        yield model.replace(**{k: float(v[i]) for k, v in space.columns.items()})


def _step(model, space: Space, solver: str, t1: float, t0: float, dt):
    """The shared fixed step: the one given (checked stable at every point) or the
    default, the smallest any point needs."""
    if dt is None:
        return min(_default_dt(solver, m, t1 - t0) for m in _points(model, space))
    for m in _points(model, space):
        check_stable(solver, m, float(dt))
    return float(dt)


class FieldSweepInterrupted(KeyboardInterrupt):
    """Ctrl-C in a field sweep: ``partial`` is its :class:`FieldSweepResult` with the
    points of the chunks done; the others have the result code ``-1`` and NaN values."""

    def __init__(self, partial: FieldSweepResult):
        super().__init__(f"interrupted after {int((partial.result != NOT_RUN).sum())} of "
                         f"{len(partial)} points")
        self.partial = partial


@dataclasses.dataclass(frozen=True)
class FieldSweepChunk:
    """Points ``start .. stop - 1`` of a field sweep, done (what ``progress`` is given)."""

    start: int
    stop: int
    total: int
    n_failed: int


def chunk_points(model, n_save: int, n_points: int, n_devices: int, chunk_size=None,
                 memory_budget=None) -> int:
    """Points per chunk, a multiple of ``n_devices``: ``chunk_size`` rounded up, else as
    many as ``memory_budget`` (default 512 MiB; on a GPU or TPU half of each device's
    memory) holds of a point's frames and working copies, and on a CPU no more than
    ``1 / CPU_CHUNKS`` of the points."""
    if chunk_size is None:
        device = jax.devices()[0]
        budget = (device_budget(device, DEFAULT_MEMORY_BUDGET) if memory_budget is None
                  else parse_size(memory_budget))
        if device.platform == "cpu":  # CPU devices share the host's memory
            budget //= n_devices
        cells = int(np.prod(model.grid.shape, dtype=np.float64)) * len(model.field_names)
        chunk_size = n_devices * max(1, int(budget // (8 * cells * (n_save + WORKING_COPIES))))
        if device.platform == "cpu":
            chunk_size = min(chunk_size, -(-n_points // CPU_CHUNKS))
    elif int(chunk_size) < 1:
        raise ValueError(f"chunk_size must be at least 1, got {chunk_size}")
    return padded_size(min(int(chunk_size), n_points), n_devices)


def _program(model, t1, *, t0, dt, solver, n_save, y0, observables, mesh):
    """One chunk's runs, each device vmapping over its rows: ``(values, final)``."""

    def one(values):
        traj = simulate_field_model(model.replace(**values), t1, t0=t0, dt=dt, solver=solver,
                                    n_save=n_save, y0=y0, throw=False)
        return {k: f(traj) for k, f in observables.items()}, traj.final

    return jax.jit(map_batch(jax.vmap(one), mesh))


def _codes(values: dict, final: dict, n: int) -> np.ndarray:
    finite = np.ones(n, dtype=bool)
    for v in (*values.values(), *final.values()):
        finite &= np.isfinite(v.reshape(n, -1)).all(axis=1)
    return np.where(finite, int(Result.SUCCESS), int(Result.DIVERGED))


def sweep_fields(model: AbstractFieldModel, space, t1, *, observables, t0=None, dt=None,
                 solver=None, n_save=None, y0=None, throw: bool = False, chunk_size=None,
                 memory_budget=None, devices=None, progress=None) -> FieldSweepResult:
    """Run ``model`` at every point of ``space`` (columns naming its parameters) and return
    each point's observables (``{name: f}``, ``f`` given the point's
    :class:`FieldTrajectory` and run on the device, or a spec like ``"mean(u)"``) and
    final fields. The points run in chunks of ``chunk_size`` (default: what
    ``memory_budget`` holds), each one program sharded over ``devices`` (default all);
    ``progress`` is called with a :class:`FieldSweepChunk` as each chunk ends."""
    space = as_space(space)
    _check_columns(model, space)
    observables_given = observables
    observables = field_observables(observables, model.field_names)
    solver = model.default_solver if solver is None else solver
    check_solver(solver, model)
    if solver not in FIXED_STEPS:
        raise ValueError(f"a field sweep steps with {', '.join(FIXED_STEPS)}, not {solver!r}")
    t0 = 0.0 if t0 is None else float(t0)
    n_save = DEFAULT_SWEEP_FRAMES if n_save is None else int(n_save)
    check_memory_of(model, len(space))  # the final fields of every point, on the host
    mesh = batch_mesh(devices)
    size = chunk_points(model, n_save, len(space), mesh.size, chunk_size, memory_budget)
    check_memory_of(model, size * n_save)  # one chunk's frames
    dt = _step(model, space, solver, float(t1), t0, dt)
    program = _program(model, t1, t0=t0, dt=dt, solver=solver, n_save=n_save, y0=y0,
                       observables=observables, mesh=mesh)
    settings = dict(solver=solver, t0=t0, t1=float(t1), dt=dt, n_save=n_save)
    specs = {k: f for k, f in _named(observables_given).items() if isinstance(f, str)}
    parts = []

    def result() -> FieldSweepResult:
        values, final, codes = _joined(parts, len(space))
        return FieldSweepResult(space, values, final, codes, model, settings, specs)

    try:
        _run_chunks(program, space, mesh, size, parts, progress)
    except KeyboardInterrupt:
        if not parts:
            raise
        raise FieldSweepInterrupted(result()) from None
    done = result()
    if throw and (done.result != int(Result.SUCCESS)).any():
        raise ValueError(f"{int((done.result != 0).sum())} of {len(done)} points diverged")
    return done


def _run_chunks(program, space: Space, mesh, size: int, parts: list, progress) -> None:
    """Append to ``parts`` each chunk's ``(values, final, codes)`` as it is done. A chunk
    runs in a helper thread while this one waits, so that Ctrl-C stops the sweep at
    once (the abandoned chunk finishes unseen)."""
    n, worker = len(space), Worker()
    try:
        for start in range(0, n, size):
            stop = min(start + size, n)
            rows = pad_batch({k: np.asarray(v, dtype=float)
                              for k, v in space.rows(start, stop).items()}, size)
            points = put_batch(rows, mesh, size)
            worker.submit(lambda points=points: local_rows(program(points)))
            values, final = jax.tree.map(lambda a, k=stop - start: a[:k], worker.result())
            parts.append((values, final, _codes(values, final, stop - start)))
            if progress is not None:
                failed = int((parts[-1][2] != int(Result.SUCCESS)).sum())
                progress(FieldSweepChunk(start, stop, n, failed))
    finally:
        worker.close()


def _joined(parts: list, n: int) -> tuple[dict, dict, np.ndarray]:
    """The chunks' values, final fields and codes joined, the points after them not run
    (NaN, code ``-1``)."""
    values, final, codes = jax.tree.map(lambda *a: np.concatenate(a), *parts)
    done = len(codes)
    if done < n:
        def pad(a):
            return np.concatenate([a, np.full((n - done, *a.shape[1:]), np.nan, a.dtype)])

        values, final = jax.tree.map(pad, (values, final))
        codes = np.concatenate([codes, np.full(n - done, NOT_RUN, codes.dtype)])
    return values, final, codes
