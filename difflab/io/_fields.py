"""Field runs in session files: each field a variable over ``(time, x[, y[, z]])``.

A field run is a ``/runs/<name>`` group (``docs/hdf5-schema.md``) whose ``field_names``
attribute names its fields. The axes are coordinate variables ``x``, ``y``, ``z`` (CF
``axis``, ``long_name``, ``units`` where declared) holding the grid's points; the grid
itself (extent, points, boundaries) is kept in ``grid_*`` attributes, enough to rebuild
it on reading. A vector field (an array ``(ndim, *grid.shape)``) is a variable over
``(time, component, x, ...)``, its components labelled by the axes' names
(``component_name``) and named in the ``vector_fields`` attribute. ``time`` is unlimited
and frames are appended as they are computed, one HDF5 chunk per frame (or per part of a
large frame), so no run is held whole in memory.
"""

import dataclasses
import math

import equinox as eqx
import numpy as np

from .._version import __version__
from ..models import Dirichlet, Grid, Neumann, Periodic, Robin
from ..solvers import FieldTrajectory, Result
from . import _h5, _models
from ._field_events import field_event_variables, field_events_from, optional_event_variables
from ._models import ModelRecord
from ._netcdf import Empty, Variable, time_attrs, unit_attrs
from ._schema import NAME

AXES = ("x", "y", "z")
COMPONENT = "component"  # a vector field's axis: its components, labelled by the grid's axes
BOUNDARY_KINDS = {Periodic: "periodic", Dirichlet: "dirichlet", Neumann: "neumann", Robin: "robin"}
BLOCK_BYTES = 64 << 20  # a whole trajectory is saved in blocks of frames of about this size
MAX_FIELDS = 1000


# -- the model's record and units --------------------------------------------------------


def _parameter_fields(model) -> dict:
    """``{name: field}`` of the model's declared parameters (``dl.param``)."""
    return {f.name: f for f in dataclasses.fields(model) if "difflab_param" in f.metadata}


def model_record(model) -> ModelRecord:
    """The :class:`ModelRecord` of a field model: a registered model's own record, else its
    class, parameter values and units, and the file it was defined in."""
    if getattr(type(model), "registry_name", None) is not None \
            and _models._is_registered(type(model)):  # not a subclass of a built-in one
        return _models.record_of(model)
    cls, params = type(model), _parameter_fields(model)
    leaves, impls = _models._leaf_entries(model)
    record = ModelRecord(
        key="", origin="builtin" if cls.__module__.startswith("difflab.") else "user",
        name=cls.__name__, class_name=f"{cls.__module__}.{cls.__qualname__}",
        version=str(getattr(cls, "version", None) or __version__),
        parameters={n: float(np.asarray(getattr(model, n))) for n in params
                    if np.ndim(getattr(model, n)) == 0},
        units={n: f.metadata["difflab_param"]["unit"] for n, f in params.items()
               if f.metadata["difflab_param"].get("unit")},
        leaves=leaves, leaf_key_impls=impls)
    if record.origin == "user":
        _models._add_file_source(record, cls, None)
    return record


def _field_unit(model, name: str) -> str | None:
    """A field's declared unit: ``field_units`` (or ``state_units``, as other models name
    it), a dict by field or one unit for all; ``None`` where none is declared."""
    for attr in ("field_units", "state_units"):
        units = getattr(model, attr, None)
        if isinstance(units, dict):
            return units.get(name)
        if isinstance(units, str):
            return units
    return None


def _length_unit(model, grid) -> str | None:
    return getattr(grid, "length_unit", None) or getattr(model, "length_unit", None)


# -- the grid as attributes --------------------------------------------------------------


def _boundary_numbers(side) -> tuple[float, float, float]:
    """``(value, alpha, beta)`` of one side; NaN where it has none, or its value is an
    array or a function of time (those are not stored)."""
    value = getattr(side, "value", None)
    stored = value is not None and not callable(value) and np.ndim(value) == 0
    robin = isinstance(side, Robin)
    return (float(value) if stored else math.nan, float(side.alpha) if robin else math.nan,
            float(side.beta) if robin else math.nan)


def _kind(side) -> str:
    """The kind of boundary ``side`` is (a subclass by the kind it extends)."""
    for cls, kind in BOUNDARY_KINDS.items():
        if isinstance(side, cls):
            return kind
    return type(side).__name__.lower()


def grid_attrs(grid: Grid) -> dict:
    """The grid as attributes, per side ``[x low, x high, y low, ...]`` for boundaries."""
    sides = [side for pair in grid.boundaries for side in pair]
    numbers = np.array([_boundary_numbers(s) for s in sides], dtype=np.float64)
    return {"grid_points": np.array(grid.points, dtype=np.int64),
            "grid_extent": np.array(grid.extent, dtype=np.float64).reshape(-1),
            "grid_boundaries": [_kind(s) for s in sides],
            "grid_boundary_value": numbers[:, 0], "grid_boundary_alpha": numbers[:, 1],
            "grid_boundary_beta": numbers[:, 2]}


def _side(kind: str, value: float, alpha: float, beta: float):
    value = None if math.isnan(value) else value  # an array or f(t): not stored
    if kind == "periodic":
        return Periodic()
    if kind == "robin":
        return Robin(alpha=alpha, beta=beta, value=value)
    if kind in ("dirichlet", "neumann"):
        return {"dirichlet": Dirichlet, "neumann": Neumann}[kind](value=value)
    raise ValueError(f"unknown boundary {kind!r}")


def grid_from_attrs(attrs: dict) -> Grid:
    """The :class:`Grid` the ``grid_*`` attributes describe (``ValueError`` if they do not)."""
    points = [int(n) for n in np.atleast_1d(attrs["grid_points"])]
    ndim = len(points)
    extent = np.asarray(attrs["grid_extent"], dtype=np.float64).reshape(ndim, 2)
    kinds = attrs["grid_boundaries"]
    kinds = [kinds] if isinstance(kinds, str) else list(kinds)
    numbers = [np.atleast_1d(np.asarray(attrs.get(f"grid_boundary_{k}", [math.nan] * 2 * ndim),
                                        dtype=np.float64))
               for k in ("value", "alpha", "beta")]
    if len(kinds) != 2 * ndim or any(len(n) != 2 * ndim for n in numbers):
        raise ValueError(f"the grid has {ndim} axes but its boundaries do not describe "
                         f"{2 * ndim} sides")
    sides = [_side(k, *(n[i] for n in numbers)) for i, k in enumerate(kinds)]
    return Grid(tuple(map(tuple, extent)), tuple(points),
                tuple((sides[2 * i], sides[2 * i + 1]) for i in range(ndim)))


# -- writing -----------------------------------------------------------------------------


def _cf_name(name: str) -> str:
    """An attribute name CF accepts: letters, digits and underscores."""
    return "".join(c if c.isalnum() or c == "_" else "_" for c in name)


def vector_names(model, field_names) -> tuple[str, ...]:
    """The vector fields among ``field_names``: those whose initial field has a component
    axis, ``(ndim, *grid.shape)`` (found from shapes alone, nothing computed)."""
    shapes = model.field_shapes()
    return tuple(n for n in field_names if len(shapes[n].shape) == model.grid.ndim + 1)


def _frame_dims(field_names, vectors, axes) -> dict:
    """``{field: the dimensions of one frame}``."""
    return {n: ((COMPONENT,) if n in vectors else ()) + tuple(axes) for n in field_names}


def _variables(model, grid: Grid, field_names, dtype, vectors=()) -> dict[str, Variable]:
    length = unit_attrs(_length_unit(model, grid))
    variables = {"time": Variable(("time",), np.zeros(0),
                                  time_attrs(getattr(model, "time_unit", None)))}
    for i, axis in enumerate(grid.axis_names):
        variables[axis] = Variable((axis,), grid.axis_coordinates(i),
                                   {"long_name": axis, "axis": axis.upper(), **length})
    if vectors:
        variables[COMPONENT] = Variable((COMPONENT,), np.array(grid.axis_names),
                                        {"long_name": "vector component along the axis"})
    for name in field_names:
        dims = ("time", *((COMPONENT,) if name in vectors else ()), *grid.axis_names)
        shape = (0, *((grid.ndim,) if name in vectors else ()), *grid.shape)
        variables[name] = Variable(dims, Empty(shape, dtype),
                                   {"long_name": name, **unit_attrs(_field_unit(model, name))})
    return variables


class FieldWriter:
    """A field run whose frames are appended as they come (``append``), then ``finish``ed.

    Each append resizes ``time`` and the fields and writes the new frames, then flushes:
    what is in the file is a valid run of the frames written so far.
    """

    def __init__(self, session, group):
        self.session, self.group = session, group
        self.name = group.name.rsplit("/", 1)[-1]
        self.field_names = tuple(_h5.text(v) for v in np.atleast_1d(group.attrs["field_names"]))
        self.shapes = {n: group[n].shape[1:] for n in self.field_names}

    @classmethod
    def create(cls, session, *, model, grid: Grid | None = None, field_names=None,
               settings=None, key=None, name=None, dtype=np.float64,
               compress: bool | None = None, vectors=None, events=None) -> "FieldWriter":
        """Create the run's group in ``session`` (a :class:`SessionWriter`): the grid from
        ``grid`` (default ``model.grid``), the fields ``field_names`` (``model.field_names``),
        the vector fields among them ``vectors`` (default: as the model's initial fields),
        each over ``(time, component, x, ...)``; ``events``: the run's
        :class:`FieldEvents`, stored beside them (``_field_events``)."""
        grid = model.grid if grid is None else grid
        field_names = tuple(field_names or model.field_names)
        vectors = tuple(vector_names(model, field_names) if vectors is None else vectors)
        reserved = ("time", *AXES, *((COMPONENT,) if vectors else ()))
        bad = [n for n in field_names if not NAME.fullmatch(n) or n in reserved]
        if bad or not field_names:
            raise ValueError(f"field names must be valid names other than "
                             f"{', '.join(reserved)}; not {bad or 'none'}")
        attrs = session.result_attrs(model=model_record(model), settings=settings, key=key,
                                     extra={"complete": 0})
        attrs = {_cf_name(k): v for k, v in attrs.items()}  # param.F -> param_F
        attrs.update(field_names=list(field_names), **grid_attrs(grid))
        if vectors:
            attrs["vector_fields"] = list(vectors)
        variables = _variables(model, grid, field_names, dtype, vectors)
        event_vars, event_attrs = field_event_variables(
            events, _frame_dims(field_names, vectors, grid.axis_names))
        attrs.update(event_attrs)
        group = session.write_result(
            "runs", name, attrs, {**variables, **event_vars},
            unlimited=("time",), fillvalues=dict.fromkeys(field_names, np.nan),
            compress=compress)
        return cls(session, group)

    @property
    def n_written(self) -> int:
        """The frames written so far."""
        return self.group["time"].shape[0]

    def append(self, ts, fields: dict) -> None:
        """Add frames at times ``ts`` (a number for one frame, or ``(k,)``): ``fields[name]``
        of shape ``(k, *grid.shape)`` (or the grid's shape for one frame), then flush."""
        ts = np.asarray(ts, dtype=np.float64)
        one = ts.ndim == 0
        ts = ts.reshape(-1)
        if set(fields) != set(self.field_names):
            raise ValueError(f"the run has the fields {', '.join(self.field_names)}, not "
                             f"{', '.join(fields)}")
        blocks = {n: np.asarray(u)[None] if one else np.asarray(u) for n, u in fields.items()}
        for name, block in blocks.items():
            if block.shape != (len(ts), *self.shapes[name]):
                raise ValueError(f"field {name!r}: frames of shape {block.shape} at "
                                 f"{len(ts)} times; expected "
                                 f"{(len(ts), *self.shapes[name])}")
        n, k = self.n_written, len(ts)
        for name, block in blocks.items():  # the fields first: time says what is written
            self.group[name].resize(n + k, axis=0)
            self.group[name][n:] = block
        self.group["time"].resize(n + k, axis=0)
        self.group["time"][n:] = ts
        self.session.flush()

    def finish(self, *, result: int = 0, wall_time=None) -> None:
        """Record how the run ended; the run is then ``complete``."""
        self.session.set_attrs_later(self.group.name, {
            "result": int(result), "result_message": Result(int(result)).message,
            "wall_time": wall_time, "complete": 1})


def add_fields(session, traj, model, *, name=None, settings=None, key=None) -> str:
    """Write a :class:`difflab.solvers.FieldTrajectory` of ``model`` into ``session`` (a
    :class:`SessionWriter`), in blocks of frames; returns the run's name."""
    ts = np.asarray(traj.ts)
    settings = {"solver": traj.solver, "t0": float(ts[0]), "t1": float(ts[-1]),
                "n_save": len(ts), **dict(getattr(traj, "settings", None) or ()),
                **(settings or {})}
    dtype = np.result_type(*(np.asarray(u[:1]).dtype for u in traj.fields.values()))
    vectors = tuple(n for n, u in traj.fields.items() if np.ndim(u) == traj.grid.ndim + 2)
    writer = FieldWriter.create(session, model=model, grid=traj.grid,
                                field_names=tuple(traj.fields), settings=settings, key=key,
                                name=name, dtype=dtype if dtype == np.float32 else np.float64,
                                vectors=vectors, events=getattr(traj, "events", None))
    frame_bytes = dtype.itemsize * sum(int(np.prod(np.shape(u)[1:])) or 1
                                       for u in traj.fields.values())
    step = max(1, BLOCK_BYTES // frame_bytes)
    for start in range(0, len(ts), step):
        stop = min(start + step, len(ts))
        writer.append(ts[start:stop], {n: u[start:stop] for n, u in traj.fields.items()})
    writer.finish(result=int(traj.result))
    return writer.name


# -- reading -----------------------------------------------------------------------------


def is_field_run(attrs: dict) -> bool:
    """True for the attributes of a field run's group."""
    return "field_names" in attrs


def field_spec(attrs: dict, fail) -> tuple:
    """The reader's spec of a field run (coordinates, fields), checked; ``fail(problem)``
    raises."""
    names = attrs["field_names"]
    names = [names] if isinstance(names, str) else names
    if not isinstance(names, list) or not 1 <= len(names) <= MAX_FIELDS or not all(
            isinstance(n, str) and NAME.fullmatch(n) and n not in ("time", *AXES)
            for n in names):
        fail("field_names must name 1 to 1000 fields, none called time, x, y or z")
    try:
        grid = grid_from_attrs(attrs)
    except (KeyError, ValueError, TypeError) as error:
        fail(f"the grid attributes do not describe a grid ({error})")
    axes = grid.axis_names
    vectors = _names(attrs.get("vector_fields", []))
    if not set(vectors) <= set(names):
        fail("vector_fields names a field that field_names does not")
    coords = {"time": "f", **dict.fromkeys(axes, "f"), **({COMPONENT: "s"} if vectors else {})}
    return (coords, {n: (("time", *((COMPONENT,) if n in vectors else ()), *axes), "f")
                     for n in names},
            optional_event_variables(_frame_dims(names, vectors, axes)), ())


def _names(value) -> list:
    return [value] if isinstance(value, str) else [_h5.text(v) for v in np.atleast_1d(value)]


def field_trajectory(stored) -> FieldTrajectory:
    """A stored field run as a :class:`FieldTrajectory`: ``ts`` read, the fields left in
    the file (:class:`LazyArray`, read when indexed), the grid rebuilt."""
    names = stored.attrs["field_names"]
    names = [names] if isinstance(names, str) else names
    grid = grid_from_attrs(stored.attrs)
    sizes = tuple(stored.variables[axis].shape[0] for axis in grid.axis_names)
    if sizes != grid.points:
        raise ValueError(f"the grid has {grid.points} points but the axes hold {sizes}")
    solver = str(stored.attrs.get("solver", ""))
    result = Result(int(stored.attrs.get("result", 0)))
    settings = tuple((k, v) for k, v in stored.settings.items() if k != "solver")
    return FieldTrajectory(np.asarray(stored.variables["time"].data),
                           {n: stored.variables[n].data for n in names}, grid, solver, result,
                           _model_on(stored, grid), settings, field_events_from(stored, names))


def _model_on(stored, grid):
    """The run's model on the run's grid, where DiffLab may build it; else its
    :class:`ModelRecord` (a user model's code is never run from a file)."""
    record = stored.model
    try:
        model = record.build()
    except (ValueError, KeyError, TypeError):
        return record
    if isinstance(getattr(model, "grid", None), Grid):
        model = eqx.tree_at(lambda m: m.grid, model, grid)
    return model


def _sides(pair) -> str:
    low, high = (_kind(s) for s in pair)
    return low if low == high else f"{low}/{high}"


def summary_entry(stored) -> dict:
    """What ``difflab open`` tells of a field run: its fields and its grid."""
    grid = grid_from_attrs(stored.attrs)
    axes = [f"{a} {lo:g}..{hi:g} ({n} points, {_sides(pair)})" for a, (lo, hi), n, pair
            in zip(grid.axis_names, grid.extent, grid.points, grid.boundaries, strict=True)]
    vectors = _names(stored.attrs.get("vector_fields", []))
    return {"fields": _names(stored.attrs["field_names"]), "grid": "; ".join(axes),
            **({"vector_fields": vectors} if vectors else {})}
