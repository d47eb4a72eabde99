"""Field sweeps in session files: observables over the swept parameters, final fields over
``(sweep dims..., x[, y[, z]])``.

A field sweep is a ``/sweeps/<name>`` group with ``field_names`` and the ``grid_*``
attributes of a field run (``_fields``). A sweep over :func:`difflab.grid` has one
dimension per swept parameter, a coordinate variable with its values (as ODE grid
sweeps, ``_sweep_grid``); other spaces have a ``point`` dimension, each swept column a
variable over it that the others list as a coordinate. Each observable and ``result``
are over the sweep's dimensions; each field's final frame over them and the grid's axes,
coordinate variables with CF attributes as in a field run.
"""

import numpy as np

from ..solvers import FieldSweepResult, Space
from ._fields import (
    AXES,
    _cf_name,
    _field_unit,
    _length_unit,
    _model_on,
    grid_attrs,
    grid_from_attrs,
    model_record,
)
from ._netcdf import Variable, unit_attrs
from ._schema import NAME
from ._sweep_grid import axis_name

RESERVED = ("point", "result", "time", *AXES)


def _dims(result: FieldSweepResult) -> tuple[str, ...]:
    space = result.space
    if space.kind == "grid" and len(space.shape) == len(space.names):
        return tuple(axis_name(c) for c in space.names)
    return ("point",)


def _check_names(result: FieldSweepResult) -> None:
    names = [*map(axis_name, result.space.names), *result.observables, *result.final]
    bad = [n for n in names if not NAME.fullmatch(n) or n in RESERVED or names.count(n) > 1]
    if bad:
        raise ValueError(f"a field sweep's parameters, observables and fields need distinct "
                         f"names other than {', '.join(RESERVED)}; not {bad[0]!r}")


def _sweep_coordinates(result: FieldSweepResult, dims) -> tuple[dict, list[str]]:
    """The variables of the sweep's dimensions, and the names listed as ``coordinates``."""
    specs = result.model.parameter_specs() if result.model is not None else {}
    space, out = result.space, {}

    def attrs(column):
        return {"long_name": column, **unit_attrs(getattr(specs.get(column), "unit", None))}

    if dims != ("point",):
        for k, (dim, column) in enumerate(zip(dims, space.names)):
            index = tuple(slice(None) if i == k else 0 for i in range(len(dims)))
            out[dim] = Variable((dim,), space.reshape(space[column])[index].astype(np.float64),
                                attrs(column))
        return out, []
    out["point"] = Variable(("point",), np.arange(len(space), dtype=np.int64),
                            {"long_name": "sweep point"})
    for column in space.names:
        out[axis_name(column)] = Variable(("point",), np.asarray(space[column], np.float64),
                                          attrs(column))
    return out, [axis_name(c) for c in space.names]


def _grid_coordinates(model, grid) -> dict:
    length = unit_attrs(_length_unit(model, grid))
    return {axis: Variable((axis,), grid.axis_coordinates(i),
                           {"long_name": axis, "axis": axis.upper(), **length})
            for i, axis in enumerate(grid.axis_names)}


def variables(result: FieldSweepResult) -> dict[str, Variable]:
    """Every variable of the sweep's group."""
    dims = _dims(result)
    _check_names(result)
    shape = (len(result),) if dims == ("point",) else tuple(result.space.shape)
    grid, model = result.model.grid, result.model
    out, listed = _sweep_coordinates(result, dims)
    coords = {"coordinates": " ".join(listed)} if listed else {}
    out.update(_grid_coordinates(model, grid))
    out["result"] = Variable(dims, np.asarray(result.result, np.int32).reshape(shape),
                             {"long_name": "result code (0: success)", **coords})
    specs = dict(getattr(result, "specs", None) or {})
    for name, values in result.observables.items():
        spec = {"spec": specs[name]} if name in specs else {}
        out[name] = Variable(dims, np.asarray(values, np.float64).reshape(shape),
                             {"long_name": specs.get(name, name), **spec, **coords})
    for name, values in result.final.items():
        out[name] = Variable((*dims, *grid.axis_names),
                             np.asarray(values).reshape(*shape, *grid.shape),
                             {"long_name": f"{name} at t1",
                              **unit_attrs(_field_unit(model, name)), **coords})
    return out


def add_field_sweep(session, result: FieldSweepResult, *, name=None) -> str:
    """Write ``result`` into ``session`` (a :class:`SessionWriter`); returns its name."""
    if result.model is None:
        raise ValueError("this field sweep does not know its model")
    space = result.space
    attrs = session.result_attrs(model=model_record(result.model),
                                 settings=dict(getattr(result, "settings", None) or {}))
    attrs = {_cf_name(k): v for k, v in attrs.items()}
    attrs.update(field_names=list(result.final), swept=list(space.names),
                 space_kind=space.kind, space_shape=np.asarray(space.shape, np.int64),
                 n_points=len(result), observables=list(result.observables),
                 complete=int(result.complete), **grid_attrs(result.model.grid))
    group = session.write_result("sweeps", name, attrs, variables(result))
    return group.name.rsplit("/", 1)[-1]


def sweep_spec(attrs: dict, fail) -> tuple:
    """The reader's spec of a field sweep: its dimensions, observables and fields."""
    from ._fields import field_spec

    coords, fields, _, _ = field_spec(attrs, fail)
    axes = [a for a in coords if a != "time"]
    swept = [axis_name(str(s)) for s in np.atleast_1d(attrs.get("swept", []))]
    shape = np.atleast_1d(attrs.get("space_shape", []))
    dims = (tuple(swept) if attrs.get("space_kind") == "grid" and len(shape) == len(swept)
            else ("point",))
    observables = [str(o) for o in np.atleast_1d(attrs.get("observables", []))]
    sweep_coords = {d: "i" if d == "point" else "f" for d in dims}
    required = {"result": (dims, "i"), **{o: (dims, "f") for o in observables},
                **{f: ((*dims, *axes), "f") for f in fields}}
    if dims == ("point",):
        required.update({s: (dims, "f") for s in swept})
    return ({**sweep_coords, **dict.fromkeys(axes, "f")}, required, {}, ())


def field_sweep_result(stored) -> FieldSweepResult:
    """A stored field sweep read back whole: its space (the swept columns, a grid's shape),
    observables with their specs, final fields, result codes, settings, its model on the
    sweep's grid where DiffLab may build it."""
    attrs, v = stored.attrs, stored.variables
    grid = grid_from_attrs(attrs)
    n = int(attrs["n_points"])
    swept = [str(s) for s in np.atleast_1d(attrs.get("swept", []))]
    dims = _stored_dims(attrs, swept)
    if dims == ("point",):
        columns = {c: np.asarray(v[axis_name(c)].data, np.float64) for c in swept}
    else:
        axes = [np.asarray(v[d].data, np.float64) for d in dims]
        mesh = np.meshgrid(*axes, indexing="ij")
        columns = {c: m.ravel() for c, m in zip(swept, mesh, strict=True)}
    shape = tuple(int(s) for s in np.atleast_1d(attrs.get("space_shape", (n,))))
    space = Space(columns, shape, str(attrs.get("space_kind", "points")))
    names = [str(o) for o in np.atleast_1d(attrs.get("observables", []))]
    fields = [str(f) for f in np.atleast_1d(attrs["field_names"])]
    observables = {o: np.asarray(v[o].data, np.float64).reshape(n) for o in names}
    specs = {o: str(v[o].attrs["spec"]) for o in names if "spec" in v[o].attrs}
    final = {f: np.asarray(v[f].data).reshape(n, *grid.shape) for f in fields}
    result = np.asarray(v["result"].data, np.int32).reshape(n)
    return FieldSweepResult(space, observables, final, result, _model_on(stored, grid),
                            dict(stored.settings), specs)


def _stored_dims(attrs: dict, swept: list[str]) -> tuple[str, ...]:
    shape = np.atleast_1d(attrs.get("space_shape", []))
    if attrs.get("space_kind") == "grid" and len(shape) == len(swept):
        return tuple(axis_name(c) for c in swept)
    return ("point",)
