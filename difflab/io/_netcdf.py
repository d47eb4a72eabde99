"""netCDF-4 groups in h5py: variables over named dimensions, each dimension a scale.

A group is written coordinates first (a variable named like its only dimension becomes
that dimension's scale), then the other variables with the scales attached, so
xarray/h5netcdf, netCDF-C and h5dump read it as it is.
"""

import dataclasses
from typing import Any

import numpy as np

from . import _h5

COPY_BYTES = 64 << 20  # lazily-read variables are copied in blocks of about this size


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
    if hasattr(data, "shape") and not isinstance(data, np.ndarray) and hasattr(data, "__getitem__"):
        return data  # lazy: copied block by block
    array = np.asarray(data)
    if array.dtype.kind in "US":
        array = array.astype(object)
    return array


def write_variable(group, name, var: Variable, *, compress=False, unlimited=False,
                   fillvalue=None, along=None):
    """Create and fill one variable (scales are attached by :func:`attach`).

    Text variables (``state``, ``parameter``) are fixed-length UTF-8 with the CF
    ``_Encoding`` attribute, which xarray decodes to ``str``.
    """
    data = _prepared(var.data)
    dtype, attrs = numeric_dtype(data), dict(var.attrs)
    if dtype is None:
        data, text = _h5.fixed_strings([str(v) for v in np.asarray(data, dtype=object).ravel()])
        data = data.astype(text)  # carries h5py's UTF-8 marker, so no charset conversion
        dtype, attrs["_Encoding"] = text.itemsize, "utf-8"
    dataset = create(group, name, data.shape, dtype, compress=compress,
                     unlimited=unlimited, fillvalue=fillvalue, along=along)
    _copy(dataset, data)
    _h5.set_attrs(dataset, attrs)
    return dataset


def attach(group, name: str, var: Variable) -> None:
    """Attach the dimension scales of ``var``'s dims, found in ``group`` or its parents."""
    dataset = group[name]
    for axis, dim in enumerate(var.dims):
        dataset.dims[axis].attach_scale(_find_scale(group, dim))


def _find_scale(group, dim: str):
    while True:
        if dim in group:
            return group[dim]
        if group.name == "/":
            raise ValueError(f"no dimension {dim!r} above {group.name}")
        group = group.parent


def write_group(group, variables: dict[str, Variable], *, compress=False, unlimited=(),
                fillvalues=None, along=None) -> None:
    """Write ``variables`` into ``group``: coordinates (scales) first, then the rest.

    ``unlimited`` names dimensions that may grow; ``fillvalues`` maps variable names to
    HDF5 fill values; ``along`` is the block size a streamed writer uses on axis 0.
    """
    fillvalues = fillvalues or {}
    order = sorted(variables, key=lambda n: not is_coordinate(n, variables[n]))
    for name in order:
        var = variables[name]
        grows = bool(var.dims) and var.dims[0] in unlimited
        dataset = write_variable(group, name, var, compress=compress, unlimited=grows,
                                 fillvalue=fillvalues.get(name), along=along)
        if is_coordinate(name, var):
            dataset.make_scale(name)
    for name in order:
        if not is_coordinate(name, variables[name]):
            attach(group, name, variables[name])


def time_attrs(units: str = "s") -> dict:
    """CF attributes of a time coordinate."""
    return {"units": units, "long_name": "time", "standard_name": "time", "axis": "T"}


RESULT_FLAGS = {
    "flag_values": np.array([-1, 0, 1, 2, 3, 4], dtype=np.int8),
    "flag_meanings": "not_run success max_steps_reached diverged step_size_too_small "
                     "solver_failed",
    "long_name": "result code",
}
