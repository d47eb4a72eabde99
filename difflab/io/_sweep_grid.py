"""A grid sweep's observables on the grid's axes.

A sweep over :func:`difflab.grid` stores each observable over the swept parameters as
dimensions (``x_max(rho, sigma)``), each axis a coordinate variable with its values and
units; its points are still computed, streamed and resumed in chunks of consecutive
points (C order), each chunk written as a few rectangular blocks of the grid
(:func:`blocks`). Other spaces, and files written before, keep a ``point`` dimension.
"""

import re

import numpy as np

from ._netcdf import Variable, unit_attrs

SAME_UNIT = ("max", "min", "mean", "std", "final", "amplitude", "maxima", "minima", "section")
_CALL = re.compile(r"\s*([a-z_]+)\s*\(\s*([A-Za-z_][\w]*)?")


def axis_name(column: str) -> str:
    """The dimension of a swept column: a CF name (``y0.x`` -> ``y0_x``)."""
    return re.sub(r"\W", "_", column)


def axes(record) -> dict[str, Variable] | None:
    """The coordinate variable of each axis of a grid sweep; ``None`` if it is no grid
    (or a shard of one: a run of its points)."""
    attrs = record.attrs
    swept = [str(s) for s in np.atleast_1d(attrs.get("swept", []))]
    shape = tuple(int(n) for n in np.atleast_1d(attrs.get("space_shape", [])))
    if (attrs.get("space_kind") != "grid" or "shard_first_point" in attrs
            or len(swept) != len(shape) or int(np.prod(shape)) != record.n_points):
        return None
    columns = _columns(record)
    names = _names(record, swept, columns)
    if names is None:
        return None
    return {name: Variable((name,), _axis(columns[c][0], shape, k),
                           {"long_name": c, **unit_attrs(columns[c][1])})
            for k, (name, c) in enumerate(zip(names, swept))}


def point_coordinates(record) -> dict[str, Variable]:
    """Each swept column of a sweep that is no grid as a variable over ``point`` (the
    observables list them as coordinates); none where a name would clash."""
    columns = _columns(record)
    swept = [str(s) for s in np.atleast_1d(record.attrs.get("swept", list(columns)))]
    names = _names(record, swept, columns)
    if names is None or axes(record) is not None:
        return {}
    return {name: Variable(("point",), np.asarray(columns[c][0], dtype=np.float64),
                           {"long_name": c, **unit_attrs(columns[c][1])})
            for name, c in zip(names, swept)}


def _names(record, swept, columns) -> list[str] | None:
    """The CF names of the swept columns; ``None`` if one is unknown or would clash."""
    names = [axis_name(c) for c in swept]
    taken = _TAKEN | set(record.observables)
    if (not swept or not all(c in columns for c in swept) or len(set(names)) != len(names)
            or set(names) & taken):
        return None
    return names


_TAKEN = {"point", "time", "state", "parameter", "chunk", "y", "y0", "result", "steps",
          "parameters", "chunk_done"}


def _columns(record) -> dict:
    """Each swept column's values (one per point) and unit."""
    specs = type(record.model).parameter_specs() if hasattr(
        type(record.model), "parameter_specs") else {}
    out = {p: (record.values[:, j], getattr(specs.get(p), "unit", None))
           for j, p in enumerate(record.parameter_names)}
    if record.y0 is not None:
        unit = getattr(record.model, "state_unit", lambda s: None)
        out.update({f"y0.{s}": (np.asarray(record.y0)[:, j], unit(s))
                    for j, s in enumerate(record.state_names)})
    return out


def _axis(values, shape, k: int) -> np.ndarray:
    """The values of grid axis ``k`` from a column holding one value per grid point."""
    index = tuple(slice(None) if i == k else 0 for i in range(len(shape)))
    return np.asarray(values, dtype=np.float64).reshape(shape)[index]


def observable_units(spec: str, model, state_names) -> dict:
    """``units`` of an observable where it follows from its spec: a state's unit for
    ``max(x)``, ``maxima(x, ...)``, ...; the time unit for ``period(x)``."""
    match = _CALL.match(str(spec))
    if match is None or match.group(2) not in tuple(map(str, state_names)):
        return {}
    kind, state = match.groups()
    unit = None
    if kind in SAME_UNIT:
        unit = getattr(model, "state_unit", lambda s: None)(state)
    elif kind == "period":
        unit = getattr(model, "time_unit", None)
    return {"units": unit} if unit else {}


def blocks(shape, start: int, stop: int):
    """Points ``start .. stop - 1`` of a C-ordered grid of ``shape`` as rectangular blocks:
    ``(index, first, last)``, ``index`` a tuple of slices of the grid holding points
    ``first .. last - 1``. At most two blocks per axis."""
    if start >= stop:
        return
    if len(shape) == 1:
        yield (slice(start, stop),), start, stop
        return
    row = int(np.prod(shape[1:]))
    first_row, last_row = start // row, (stop - 1) // row
    head_end = min(stop, (first_row + 1) * row)
    if start % row or head_end - start < row:  # a partial first row
        for index, a, b in blocks(shape[1:], start - first_row * row, head_end - first_row * row):
            yield (first_row, *index), a + first_row * row, b + first_row * row
        first_row += 1
    tail = stop - last_row * row
    full_end = last_row if tail < row and last_row >= first_row else last_row + 1
    if full_end > first_row:
        yield ((slice(first_row, full_end), *[slice(None)] * (len(shape) - 1)),
               first_row * row, full_end * row)
    if full_end == last_row and last_row >= first_row:
        for index, a, b in blocks(shape[1:], 0, tail):
            yield (last_row, *index), a + last_row * row, b + last_row * row


def _grid_shape(dataset, vector: bool) -> tuple:
    return tuple(dataset.shape[: dataset.ndim - int(vector)])


def _shape(index, grid) -> tuple:
    """The shape of ``grid[index]`` (integers drop their axis)."""
    return tuple(len(range(*i.indices(n))) for i, n in zip(index, grid) if isinstance(i, slice))


def write_points(dataset, start: int, values, vector: bool = False) -> None:
    """Write the values of points ``start, start + 1, ...`` into ``dataset``: over
    ``point`` or over a grid's axes (``vector``: a vector per point, on a last axis)."""
    values = np.asarray(values)
    grid = _grid_shape(dataset, vector)
    tail = dataset.shape[len(grid):]
    for index, a, b in blocks(grid, start, start + len(values)):
        dataset[index] = values[a - start:b - start].reshape(*_shape(index, grid), *tail)


def read_points(dataset, start: int, stop: int, vector: bool = False) -> np.ndarray:
    """Points ``start .. stop - 1`` of ``dataset`` (over ``point`` or a grid's axes)."""
    grid = _grid_shape(dataset, vector)
    if len(grid) == 1:
        return dataset[start:stop]
    tail = dataset.shape[len(grid):]
    parts = [np.asarray(dataset[index]).reshape(-1, *tail) for index, _, _ in
             blocks(grid, start, stop)]
    return np.concatenate(parts) if parts else np.zeros((0, *tail), dataset.dtype)


def flat(data, n_points: int, vector: bool) -> np.ndarray:
    """An observable read from a file as ``(points)`` or ``(points, k)``."""
    array = np.asarray(data)
    return array.reshape(n_points, array.shape[-1]) if vector else array.reshape(n_points)
