"""netCDF-4 groups in h5py: variables over named dimensions, each dimension a scale.

A group is written coordinates first (a variable named like its only dimension becomes
that dimension's scale), then the other variables with the scales attached, so
xarray (h5netcdf and netCDF4 engines), netCDF-C and h5dump read it as it is. Text is a
netCDF char array, as netCDF-C writes one: UTF-8 bytes over a trailing string-length
dimension, with dimension ids (``_Netcdf4Dimid``) netCDF-C needs to find both dimensions.
"""

import dataclasses
import re
from typing import Any

import numpy as np

from . import _h5

COPY_BYTES = 64 << 20  # lazily-read variables are copied in blocks of about this size
NOT_A_VARIABLE = "This is a netCDF dimension but not a netCDF variable."
_NEXT_DIMID = {}  # HDF5 file number of an open file -> the next free netCDF dimension id


@dataclasses.dataclass
class Variable:
    """An array over named dimensions, with attributes; ``data`` may be read lazily."""

    dims: tuple[str, ...]
    data: Any
    attrs: dict = dataclasses.field(default_factory=dict)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(np.shape(self.data) if isinstance(self.data, list) else self.data.shape)


@dataclasses.dataclass(frozen=True)
class Empty:
    """The shape and dtype of a variable created now and written later (fill values)."""

    shape: tuple[int, ...]
    dtype: Any

    def __getitem__(self, index):
        raise TypeError("an Empty variable has no data to read")


def is_coordinate(name: str, var: Variable) -> bool:
    return var.dims == (name,)


def numeric_dtype(data) -> np.dtype | None:
    """The dtype of numeric data, ``None`` for strings."""
    dtype = getattr(data, "dtype", None)
    dtype = np.dtype(dtype) if dtype is not None else np.asarray(data).dtype
    return None if dtype.kind in "OUSV" else dtype


def create(group, name: str, shape, dtype, *, compress=False, unlimited=False,
           fillvalue=None, along=None):
    """A chunked dataset; ``unlimited`` makes axis 0 resizable, ``along`` aligns chunks."""
    shape = tuple(int(n) for n in shape)
    strings = dtype is None or isinstance(dtype, int)
    dtype = _h5.string_dtype(dtype) if strings else np.dtype(dtype)
    itemsize = dtype.itemsize
    maxshape = tuple(None if (unlimited and i == 0) or n == 0 else n for i, n in enumerate(shape))
    options = dict(chunks=_h5.chunk_shape(shape, itemsize, along) if shape else None,
                   maxshape=maxshape if shape else None)
    if compress and not strings and shape:
        options.update(compression="gzip", compression_opts=4, shuffle=True)
    if fillvalue is not None:
        options["fillvalue"] = fillvalue
    return group.create_dataset(name, shape=shape, dtype=dtype, **options)


def _copy(dataset, data) -> None:
    if isinstance(data, Empty):
        return
    if dataset.shape == () or dataset.size == 0:
        if dataset.shape == ():
            dataset[()] = data[()]
        return
    if isinstance(data, np.ndarray):
        dataset[...] = data
        return
    row = max(1, dataset.size // dataset.shape[0]) * dataset.dtype.itemsize
    step = max(1, COPY_BYTES // row)
    for start in range(0, dataset.shape[0], step):
        stop = min(start + step, dataset.shape[0])
        dataset[start:stop] = data[start:stop]


def _prepared(data):
    if isinstance(data, Empty):
        return data
    if isinstance(data, (list, tuple)) and not data:
        return np.zeros(0, dtype=object)  # no names (a sweep of initial states only)
    if hasattr(data, "shape") and not isinstance(data, np.ndarray) and hasattr(data, "__getitem__"):
        return data  # lazy: copied block by block
    array = np.asarray(data)
    if array.dtype.kind in "US":
        array = array.astype(object)
    return array


def char_dim(name: str) -> str:
    """The string-length dimension of text variable ``name``."""
    return f"{name}_strlen"


def chars(values) -> np.ndarray:
    """Text as a netCDF char array: each value's UTF-8 bytes along a trailing axis."""
    values = np.asarray(values, dtype=object)
    data, _ = _h5.fixed_strings([str(v) for v in values.ravel()])
    return data.view("S1").reshape(*values.shape, data.dtype.itemsize)


def labels(array) -> np.ndarray:
    """Names read from a file as bytes: a char array ``(n, length)`` joined into ``(n,)``;
    strings (``(n,)``, as files written before char arrays hold them) as they are."""
    array = np.asarray(array)
    if array.ndim != 2 or array.dtype != np.dtype("S1") or array.shape[1] == 0:
        return array
    return np.ascontiguousarray(array).view(f"S{array.shape[1]}")[:, 0]


def _dimension(group, name: str, size: int):
    """A dimension with no variable, written as netCDF-C writes one."""
    dataset = group.create_dataset(name, shape=(size,), dtype=">f4")
    dataset.make_scale(f"{NOT_A_VARIABLE}{size:10d}")
    return dataset


def write_variable(group, name, var: Variable, *, compress=False, unlimited=False,
                   fillvalue=None, along=None):
    """Create and fill one variable (scales are attached by :func:`attach`).

    Text variables (``state``, ``parameter``) are char arrays (fixed length: no text in
    HDF5's global heap) over ``var.dims`` and :func:`char_dim`, with the CF
    ``_Encoding`` attribute; xarray (either engine) and netCDF-C decode them to ``str``.
    """
    data = _prepared(var.data)
    dtype, attrs = numeric_dtype(data), dict(var.attrs)
    if dtype is None:
        data = chars(data)
        dtype, attrs["_Encoding"] = data.dtype, "utf-8"
        _dimension(group, char_dim(name), data.shape[-1])
    dataset = create(group, name, data.shape, dtype, compress=compress,
                     unlimited=unlimited, fillvalue=fillvalue, along=along)
    _copy(dataset, data)
    _h5.set_attrs(dataset, attrs)
    return dataset


def attach(group, name: str, var: Variable) -> None:
    """Attach the dimension scales of ``var``'s dims (and of a text variable's string
    length), found in ``group`` or its parents."""
    dataset, dims = group[name], var.dims
    if dataset.ndim > len(dims):
        dims += (char_dim(name),)
    for axis, dim in enumerate(dims):
        dataset.dims[axis].attach_scale(_find_scale(group, dim))


def dimension_ids(group, count: int) -> list[int]:
    """``count`` netCDF dimension ids that no dimension of ``group``'s file has or gets.

    netCDF-C numbers the dimensions of a whole file together, a scale by its
    ``_Netcdf4Dimid`` or, lacking one (older DiffLab files, other programs), by counting
    on from the largest id read so far; two dimensions with one id mix them up. So new
    ids start above the largest id plus the number of scales without one. The next free
    id is remembered for each open file (HDF5 never reuses a file number).
    """
    if not count:
        return []
    fileno = group.id.fileno
    first = _NEXT_DIMID.get(fileno)
    if first is None:
        first = _first_free_dimid(group.file)
    _NEXT_DIMID[fileno] = first + count
    return list(range(first, first + count))


def _first_free_dimid(file) -> int:
    h5py = _h5.h5py()
    top, unnumbered = -1, 0

    def visit(name, info):
        nonlocal top, unnumbered
        if info.type != h5py.h5o.TYPE_DATASET or not h5py.h5a.exists(file.id, b"CLASS",
                                                                      obj_name=name):
            return
        try:
            top = max(top, int(np.max(file[name.decode()].attrs["_Netcdf4Dimid"])))
        except (KeyError, TypeError, ValueError):
            unnumbered += 1

    h5py.h5o.visit(file.id, visit, info=True)
    return top + 1 + unnumbered


def _number_dimensions(group, variables: dict[str, Variable]) -> None:
    """Give the dimensions made in ``group`` ids, and each text coordinate the ids of its
    two dimensions (``_Netcdf4Coordinates``: a scale has no scales attached)."""
    dims = []
    for name in sorted(variables):
        var = variables[name]
        dims += [name] if is_coordinate(name, var) else []
        dims += [char_dim(name)] if group[name].ndim > len(var.dims) else []
    ids = dict(zip(dims, dimension_ids(group, len(dims))))
    for dim, dimid in ids.items():
        group[dim].attrs["_Netcdf4Dimid"] = np.int32(dimid)
        if char_dim(dim) in ids:  # a text coordinate
            group[dim].attrs["_Netcdf4Coordinates"] = np.array([dimid, ids[char_dim(dim)]],
                                                               dtype=np.int32)


def add_coordinate(group, name: str, values, attrs=None):
    """A coordinate variable (a new dimension with its values) added to a group already
    written, numbered as :func:`write_group` numbers its dimensions."""
    var = Variable((name,), np.asarray(values), dict(attrs or {}))
    if numeric_dtype(var.data).kind in "iu" and "units" not in var.attrs:
        var.attrs["units"] = "1"  # an index: a pure number
    dataset = write_variable(group, name, var)
    dataset.make_scale(name)
    dataset.attrs["_Netcdf4Dimid"] = np.int32(dimension_ids(group, 1)[0])
    return dataset


def _find_scale(group, dim: str):
    while True:
        if dim in group:
            return group[dim]
        if group.name == "/":
            raise ValueError(f"no dimension {dim!r} above {group.name}")
        group = group.parent


SAME_QUANTITY = {"event_time": "time", "event_y": "y", "y0": "y", "sigma": "y",  # variable ->
                 "start_loss": "loss", "start_parameters": "parameters"}  # measured like


def _share_units(variables: dict[str, Variable]) -> None:
    """A variable of the same quantity as another (an event's time, an initial state) takes
    its units, or its word that they are not declared."""
    for name, like in SAME_QUANTITY.items():
        if name in variables and like in variables and "units" not in variables[name].attrs:
            known = {k: v for k, v in variables[like].attrs.items() if k in ("units", "comment")}
            variables[name].attrs = {**variables[name].attrs, **known}


def label_name(dim: str) -> str:
    """The variable holding the text labels of dimension ``dim`` (``state`` -> ``state_name``)."""
    return f"{dim}_name"


def _with_coordinates(attrs: dict, names: list[str]) -> dict:
    """``attrs`` with ``names`` added to its CF ``coordinates`` list (once each)."""
    listed = str(attrs.get("coordinates", "")).split()
    listed += [n for n in names if n not in listed]
    return {**attrs, "coordinates": " ".join(listed)}


def index_labels(variables: dict[str, Variable], labelled=()) -> dict[str, Variable]:
    """Text coordinates as a numeric index and a label variable.

    A text coordinate ``state`` becomes ``state`` = 0, 1, ... (numeric, so plotting along it
    works) and ``state_name`` (state) holding the names, listed in the CF ``coordinates``
    attribute of every variable over ``state`` (xarray makes it a coordinate).
    ``labelled``: dimensions already written so (variables added to a written group).
    """
    text = [n for n, v in variables.items() if is_coordinate(n, v) and not isinstance(
        v.data, Empty) and numeric_dtype(_prepared(v.data)) is None]
    text += [d for d in labelled if d not in text]
    out = {}
    for name, var in variables.items():
        if name in text:
            out[name] = Variable((name,), np.arange(len(var.data), dtype=np.int64),
                                 {"long_name": f"{var.attrs.get('long_name', name)} index"})
            out[label_name(name)] = Variable((name,), var.data, dict(var.attrs))
            continue
        over = [label_name(d) for d in var.dims if d in text]
        out[name] = Variable(var.dims, var.data, _with_coordinates(var.attrs, over)
                             if over else var.attrs)
    return out


def _counted(variables: dict[str, Variable]) -> dict[str, Variable]:
    """Integer coordinates (indices, counts: ``point``, ``state``, ``step``) are pure
    numbers: CF ``units = "1"`` where none is given."""
    for name, var in variables.items():
        dtype = numeric_dtype(_prepared(var.data))
        if is_coordinate(name, var) and dtype is not None and dtype.kind in "iu" and (
                "units" not in var.attrs):
            var.attrs = {**var.attrs, "units": "1"}
    return variables


def write_group(group, variables: dict[str, Variable], *, compress=False, unlimited=(),
                fillvalues=None, along=None) -> None:
    """Write ``variables`` into ``group``: coordinates (scales) first, then the rest.

    ``unlimited`` names dimensions that may grow; ``fillvalues`` maps variable names to
    HDF5 fill values; ``along`` is the block size a streamed writer uses on axis 0.
    Text coordinates are written as an index and labels (:func:`index_labels`).
    """
    fillvalues = fillvalues or {}
    _share_units(variables)
    variables = _counted(index_labels(variables, [d for d in ("state", "parameter")
                                                  if label_name(d) in group]))
    order = sorted(variables, key=lambda n: not is_coordinate(n, variables[n]))
    for name in order:
        var = variables[name]
        grows = bool(var.dims) and var.dims[0] in unlimited
        dataset = write_variable(group, name, var, compress=compress, unlimited=grows,
                                 fillvalue=fillvalues.get(name), along=along)
        if is_coordinate(name, var):
            dataset.make_scale(name)
    _number_dimensions(group, variables)
    for name in order:
        if not is_coordinate(name, variables[name]):
            attach(group, name, variables[name])


UNDECLARED = "units not declared by the model"


def unit_attrs(unit: str | None) -> dict:
    """``units`` where the unit is known; else a ``comment`` saying it is not (never a guess)."""
    return {"units": unit} if unit else {"comment": UNDECLARED}


def time_attrs(units: str | None = None) -> dict:
    """CF attributes of simulation time: not calendar time, so no ``standard_name`` time nor
    ``axis`` T (CF would then ask for ``UNITS since EPOCH``); the model's unit, if declared."""
    return {"long_name": "simulation time", **unit_attrs(units)}


def state_units(model, state_names) -> list:
    """The declared unit of each state (None where the model declares none)."""
    unit = getattr(model, "state_unit", None)
    return [unit(str(s)) if unit is not None else None for s in state_names]


def state_attrs(model, state_names, long_name: str) -> dict:
    """Attributes of a variable over ``state``: one unit for all, or say which is which."""
    units = state_units(model, state_names)
    if len(set(units)) == 1:
        return {"long_name": long_name, **unit_attrs(units[0])}
    listed = ", ".join(f"{s} {u or '(not declared)'}" for s, u in zip(state_names, units))
    return {"long_name": long_name, "comment": f"units differ by state: {listed}"}


def parameter_units(model, names) -> list:
    """The declared unit of each parameter (None where the model declares none)."""
    specs = type(model).parameter_specs() if hasattr(type(model), "parameter_specs") else {}
    units = getattr(model, "units", None) if not specs else None  # a stored model record
    return [(units or {}).get(p) or getattr(specs.get(p), "unit", "") or None for p in names]


def quotient_unit(numerator: str | None, denominator: str | None) -> str | None:
    """``numerator / denominator`` as a UDUNITS string (``m/(1/s)``); None if either is."""
    if not numerator or not denominator:
        return None
    if denominator == "1":
        return numerator
    if numerator == denominator:
        return "1"
    simple = re.fullmatch(r"[A-Za-z_]+", denominator)
    return f"{numerator}/{denominator}" if simple else f"{numerator}/({denominator})"


def derivative_attrs(model, state_names, parameter_names, long_name: str) -> dict:
    """Attributes of ``d state / d parameter``: the unit of the state over that of the
    parameter where one unit fits all, else each pair's, never a guess."""
    pairs = {(s, p): quotient_unit(su, pu)
             for s, su in zip(state_names, state_units(model, state_names))
             for p, pu in zip(parameter_names, parameter_units(model, parameter_names))}
    units = set(pairs.values())
    if len(units) == 1:
        return {"long_name": long_name, **unit_attrs(units.pop())}
    listed = ", ".join(f"d {s} / d {p} {u or '(not declared)'}" for (s, p), u in pairs.items())
    return {"long_name": long_name, "comment": f"units differ: {listed}"}


RESULT_FLAGS = {
    "flag_values": np.array([-1, 0, 1, 2, 3, 4, 5], dtype=np.int8),
    "flag_meanings": "not_run success max_steps_reached diverged step_size_too_small "
                     "solver_failed unstable",
    "long_name": "result code",
}


def time_state(ts, state_names, model=None) -> dict[str, Variable]:
    units = getattr(model, "time_unit", None)
    return {
        "time": Variable(("time",), np.asarray(ts, dtype=np.float64), time_attrs(units)),
        "state": Variable(("state",), [str(s) for s in state_names],
                          {"long_name": "state variable"}),
    }


def run_variables(ts, ys, state_names, model=None) -> dict[str, Variable]:
    """The variables of a run group: ``time``, ``state``, ``y(time, state)``."""
    return {**time_state(ts, state_names, model),
            "y": Variable(("time", "state"), ys, state_attrs(model, state_names, "state"))}
