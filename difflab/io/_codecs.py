"""How one field of an analysis result is stored: a codec per kind of field.

A codec turns a field's value into netCDF variables over named dimensions and group
attributes (``encode``), says which variables and attributes it writes (``specs``,
``attributes``: the reader checks them) and reads the value back (``decode``). A field
stored as variables is named after the field (``states``) or prefixed by it
(``eigenvalues_real``, ``special_value``). ``sizes`` maps the dimensions known while
encoding (``state``, a table's rows) to their lengths, so empty arrays keep their shape.
"""

import copy

import numpy as np

from ._netcdf import Variable

FLAGS = {"flag_values": np.array([0, 1], dtype=np.int8), "flag_meanings": "false true"}


def _words(name: str) -> str:
    return name.replace("_", " ")


def _shaped(data: np.ndarray, dims: tuple, sizes: dict) -> np.ndarray:
    """``data`` over all of ``dims`` when it is empty (dimensions not in ``sizes``: 0)."""
    if data.size == 0 and data.ndim != len(dims):
        return data.reshape([sizes.get(d, 0) for d in dims])
    return data


class Codec:
    """A field stored as variables over ``dims``; ``long_name`` describes it."""

    kind = "f"  # what the reader checks: "f" floats, "i" integers, "s" text

    def __init__(self, *dims: str, long_name: str | None = None):
        self.dims, self.long_name = tuple(dims), long_name

    def within(self, dim: str) -> "Codec":
        """The codec of a table's column: one value per row of ``dim``."""
        column = copy.copy(self)
        column.dims = (dim, *self.dims)
        return column

    def specs(self, name: str) -> dict[str, tuple[tuple[str, ...], str, bool]]:
        """The variables written: ``name -> (dims, kind, required)``."""
        return {name: (self.dims, self.kind, True)}

    def attributes(self, name: str) -> dict[str, tuple[type, ...]]:
        """The group attributes written and their types."""
        return {}

    def _attrs(self, name: str) -> dict:
        return {"long_name": self.long_name or _words(name)}

    def encode(self, name: str, value, sizes: dict) -> tuple[dict, dict]:
        data = _shaped(np.asarray(value, dtype=np.float64), self.dims, sizes)
        return {name: Variable(self.dims, data, self._attrs(name))}, {}

    def decode(self, name: str, variables: dict, attrs: dict):
        return np.asarray(variables[name].data, dtype=np.float64)


class Array(Codec):
    """Floats over ``dims``; with ``optional=True`` the value may be ``None`` (no variable)."""

    def __init__(self, *dims: str, long_name: str | None = None, optional: bool = False):
        super().__init__(*dims, long_name=long_name)
        self.optional = optional

    def specs(self, name):
        return {name: (self.dims, self.kind, not self.optional)}

    def encode(self, name, value, sizes):
        return ({}, {}) if value is None else super().encode(name, value, sizes)

    def decode(self, name, variables, attrs):
        return super().decode(name, variables, attrs) if name in variables else None


class Flags(Codec):
    """Booleans over ``dims``, stored as int8 0/1 with CF flag attributes."""

    kind = "i"

    def encode(self, name, value, sizes):
        data = _shaped(np.asarray(value, dtype=np.int8), self.dims, sizes)
        return {name: Variable(self.dims, data, {**self._attrs(name), **FLAGS})}, {}

    def decode(self, name, variables, attrs):
        return np.asarray(variables[name].data) != 0


class Complex(Codec):
    """Complex numbers over ``dims``: ``<name>_real`` and ``<name>_imag`` (netCDF has
    no complex type); with ``optional=True`` the value may be ``None`` (no variables)."""

    def __init__(self, *dims: str, long_name: str | None = None, optional: bool = False):
        super().__init__(*dims, long_name=long_name)
        self.optional = optional

    def specs(self, name):
        return {f"{name}_{part}": (self.dims, "f", not self.optional)
                for part in ("real", "imag")}

    def encode(self, name, value, sizes):
        if value is None:
            return {}, {}
        value = _shaped(np.asarray(value, dtype=np.complex128), self.dims, sizes)
        long_name = self.long_name or _words(name)
        return {f"{name}_{part}": Variable(self.dims, getattr(value, part),
                                           {"long_name": f"{long_name} ({part} part)"})
                for part in ("real", "imag")}, {}

    def decode(self, name, variables, attrs):
        if f"{name}_real" not in variables:
            return None
        real, imag = (np.asarray(variables[f"{name}_{p}"].data, dtype=np.float64)
                      for p in ("real", "imag"))
        return real + 1j * imag


class Labels(Codec):
    """Text, one label per entry of one dimension (a netCDF char array)."""

    kind = "s"

    def __init__(self, *dims: str, long_name: str | None = None, optional: bool = False):
        super().__init__(*dims, long_name=long_name)
        self.optional = optional  # a file written before the labels reads as none

    def specs(self, name):
        return {name: (self.dims, self.kind, not self.optional)}

    def encode(self, name, value, sizes):
        return {name: Variable(self.dims, [str(v) for v in value], self._attrs(name))}, {}

    def decode(self, name, variables, attrs):
        if self.optional and name not in variables:
            return None
        return tuple(str(v) for v in variables[name].data)


class Numbers(Codec):
    """Entries that may be missing (``None``) along the first of ``dims`` (a table's
    rows): numbers, or arrays over the other dims; a missing one is NaN in the file.
    Read back as a list of ``float`` (or arrays) and ``None``; with ``optional=True`` a
    file without the variable (one written before it) reads as all ``None``."""

    def __init__(self, *dims: str, long_name: str | None = None, optional: bool = False):
        super().__init__(*dims, long_name=long_name)
        self.optional = optional

    def specs(self, name):
        return {name: (self.dims, self.kind, not self.optional)}

    def encode(self, name, value, sizes):
        present = [np.asarray(v, dtype=np.float64) for v in value if v is not None]
        tail = present[0].shape if present else tuple(sizes.get(d, 0) for d in self.dims[1:])
        data = np.array([np.full(tail, np.nan) if v is None else np.asarray(v, dtype=np.float64)
                         for v in value], dtype=np.float64).reshape(len(value), *tail)
        return {name: Variable(self.dims, data, self._attrs(name))}, {}

    def decode(self, name, variables, attrs):
        if name not in variables:
            return None
        data = np.asarray(variables[name].data, dtype=np.float64)
        if data.ndim == 1:
            return [None if np.isnan(v) else float(v) for v in data]
        return [None if not row.size or np.all(np.isnan(row)) else row for row in data]


class Ranges(Codec):
    """``(lo, hi)`` for each entry of one dimension, or ``None``: ``<name>_lo`` and
    ``<name>_hi``, both absent for ``None``."""

    def specs(self, name):
        return {f"{name}_{end}": (self.dims, "f", False) for end in ("lo", "hi")}

    def encode(self, name, value, sizes):
        if value is None:
            return {}, {}
        ends = np.asarray(value, dtype=np.float64).reshape(-1, 2)
        long_name = self.long_name or _words(name)
        return {f"{name}_{end}": Variable(self.dims, ends[:, i],
                                          {"long_name": f"{long_name} ({end} end)"})
                for i, end in enumerate(("lo", "hi"))}, {}

    def decode(self, name, variables, attrs):
        if f"{name}_lo" not in variables or f"{name}_hi" not in variables:
            return None
        lo, hi = (np.asarray(variables[f"{name}_{e}"].data, dtype=np.float64) for e in ("lo", "hi"))
        return tuple((float(a), float(b)) for a, b in zip(lo, hi))


class Attribute(Codec):
    """One value, an attribute of the group: a ``float``, an ``int``, a ``str`` or a
    ``tuple`` of floats or of texts (an array attribute). ``stored``: the attribute's
    name where it is not the field's (a field named like a CF attribute, ``bounds``);
    ``formerly``: the name older files gave it."""

    def __init__(self, type_: type = float, *, stored: str | None = None,
                 formerly: str | None = None):
        super().__init__()
        self.type, self.stored, self.formerly = type_, stored, formerly

    def specs(self, name):
        return {}

    def attributes(self, name):
        numbers = (int, float, np.integer, np.floating)
        types = {str: (str,), tuple: (np.ndarray, list, *numbers)}.get(self.type, numbers)
        return {self.stored or name: types}

    def renamed(self, name) -> dict[str, str]:
        """``{name in older files: name now}``."""
        return {self.formerly: self.stored or name} if self.formerly else {}

    def encode(self, name, value, sizes):
        name = self.stored or name
        if self.type is not tuple:
            return {}, {name: self.type(value)}
        if value and all(isinstance(v, str) for v in value):
            return {}, {name: list(value)}
        return {}, {name: np.asarray(value, dtype=np.float64).reshape(-1)}

    def decode(self, name, variables, attrs):
        value = attrs[self.stored or name]
        if self.type is not tuple:
            return self.type(value)
        if isinstance(value, list):
            return tuple(str(v) for v in value)
        return tuple(float(v) for v in np.atleast_1d(value))


class Table(Codec):
    """A tuple of Equinox modules of class ``cls``, one row each along ``dim``: each
    field ``f`` by its codec in ``fields``, as the variable ``<name>_<f>``."""

    def __init__(self, cls: type, dim: str, **fields: Codec):
        super().__init__(dim)
        self.cls, self.dim = cls, dim
        self.fields = {f: codec.within(dim) for f, codec in fields.items()}

    def specs(self, name):
        return {k: v for f, codec in self.fields.items()
                for k, v in codec.specs(f"{name}_{f}").items()}

    def encode(self, name, value, sizes):
        rows, variables = tuple(value), {}
        sizes = {**sizes, self.dim: len(rows)}
        for f, codec in self.fields.items():
            column = [getattr(row, f) for row in rows]
            variables.update(codec.encode(f"{name}_{f}", column, sizes)[0])
        return variables, {}

    def decode(self, name, variables, attrs):
        columns = {f: codec.decode(f"{name}_{f}", variables, attrs)
                   for f, codec in self.fields.items()}
        n = max((len(c) for c in columns.values() if c is not None), default=0)
        return tuple(self.cls(**{f: None if column is None else column[i]
                                 for f, column in columns.items()}) for i in range(n))


class Single(Table):
    """One Equinox module of class ``cls``, or ``None``: a table of at most one row."""

    def encode(self, name, value, sizes):
        return super().encode(name, () if value is None else (value,), sizes)

    def decode(self, name, variables, attrs):
        rows = super().decode(name, variables, attrs)
        return rows[0] if rows else None
