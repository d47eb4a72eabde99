"""A session opened from a file: models, runs, sweeps, fits, sensitivities, analyses;
big arrays lazy."""

import dataclasses
import json
import os
from collections.abc import Iterator, Sequence

import numpy as np

from . import _analyses, _fields, _h5, _objects
from ._errors import SessionFileError
from ._models import ModelRecord
from ._netcdf import Variable
from ._schema import SETTING_NAMES
from ._summary import summary


class LazyArray:
    """A dataset of a session file, read when indexed (``a[:10]``) or converted (``np.asarray``)."""

    def __init__(self, path: str, name: str, shape: tuple[int, ...], dtype):
        self.path, self.name, self.shape, self.dtype = path, name, tuple(shape), np.dtype(dtype)
        self._kept = None  # the whole array, once kept in memory

    def keep(self) -> None:
        """Read the whole array now and serve it from memory from then on (before its
        dataset leaves the file)."""
        if self._kept is None:
            self._kept = self.read()

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, index):
        if self._kept is not None:
            return self._kept[index]
        with _h5.open_for_reading(self.path) as f:
            try:
                dataset = f[self.name]
            except KeyError:
                raise SessionFileError(self.path, f"{self.name} is gone from the file") from None
            if dataset.shape == ():
                return dataset[()]
            try:
                try:
                    return dataset[index]
                except (TypeError, ValueError):  # indexing h5py lacks (None, ...): NumPy's
                    return dataset[()][index]
            except (OSError, RuntimeError) as error:  # damaged chunks, failed filters
                raise SessionFileError(self.path, f"{self.name}: cannot read "
                                                  f"({_h5._short(error)})") from None

    def read(self) -> np.ndarray:
        """The whole array."""
        return np.asarray(self[()] if self.shape == () else self[...])

    def __array__(self, dtype=None, copy=None):
        array = self.read()
        return array if dtype is None else array.astype(dtype)

    def __repr__(self) -> str:
        return f"LazyArray({self.name!r}, shape={self.shape}, dtype={self.dtype})"


def keep_in_memory(result) -> None:
    """Keep every :class:`LazyArray` that ``result`` holds (in its fields, dicts, lists
    and tuples, at any depth) in memory, so that it outlives the groups it was read from."""
    seen = set()

    def visit(value) -> None:
        if id(value) in seen or isinstance(value, (str, bytes, np.ndarray, type)):
            return
        seen.add(id(value))
        if isinstance(value, LazyArray):
            value.keep()
        elif isinstance(value, dict):
            for item in value.values():
                visit(item)
        elif isinstance(value, (list, tuple)):
            for item in value:
                visit(item)
        elif dataclasses.is_dataclass(value):
            for field in dataclasses.fields(value):
                visit(getattr(value, field.name, None))

    visit(result)


@dataclasses.dataclass(repr=False)
class Stored:
    """One result group as the file holds it: attributes, netCDF variables, sub-groups.

    What :meth:`Session.stored` gives: the file's view of a run, sweep, fit or
    sensitivity (``session.runs`` and the others give the objects themselves).
    """

    session: "Session"
    kind: str
    name: str
    attrs: dict
    variables: dict[str, Variable]
    groups: dict[str, dict[str, Variable]] = dataclasses.field(default_factory=dict)

    def __repr__(self) -> str:
        dims = {d: n for v in self.variables.values() for d, n in zip(v.dims, v.shape)}
        return f"<Stored {self.kind}/{self.name} model={self.attrs.get('model')!r} {dims}>"

    @property
    def model(self) -> ModelRecord:
        """The :class:`ModelRecord` this result was computed with."""
        return self.session.models[self.attrs["model"]]

    @property
    def fitted_model(self) -> ModelRecord | None:
        key = self.attrs.get("fitted_model")
        if key is None:
            return None
        if not isinstance(key, str) or key not in self.session.models:  # the reader checks "model"
            raise SessionFileError(self.session.path, f"/{self.kind}/{self.name}: refers to "
                                   f"fitted model {key!r}, which the file does not hold")
        return self.session.models[key]

    @property
    def settings(self) -> dict:
        """The solver settings stored with the result (``simulate``'s keyword arguments)."""
        return {k: self.attrs[k] for k in SETTING_NAMES if k in self.attrs}

    @property
    def provenance(self) -> dict:
        return self.session.provenance.get(self.attrs.get("provenance"), {})

    @property
    def complete(self) -> bool:
        if "chunk_done" in self.variables:
            return bool(np.all(np.asarray(self.variables["chunk_done"].data) == 1))
        return bool(self.attrs.get("complete", 1))

    @property
    def state_names(self) -> tuple[str, ...]:
        return tuple(self.variables["state"].data) if "state" in self.variables else ()

    @property
    def parameter_names(self) -> tuple[str, ...]:
        return tuple(self.variables["parameter"].data) if "parameter" in self.variables else ()

    @property
    def data(self) -> dict[str, Variable] | None:
        """A fit's data group."""
        return self.groups.get("data")


class Results(Sequence):
    """Results of one kind, by position (``session.runs[0]``) or name (``session.runs["run0"]``).

    Each is read into its own class (a :class:`difflab.Trajectory`, ...) when first used.
    """

    def __init__(self, stored: list[Stored], read):
        self._stored, self._read, self._cache = list(stored), read, {}

    def __getitem__(self, index):
        if isinstance(index, str):
            names = self.names()
            if index not in names:
                raise KeyError(f"no result named {index!r}; there are {names or 'none'}")
            index = names.index(index)
        if isinstance(index, slice):
            return [self[i] for i in range(len(self))[index]]
        stored = self._stored[index]
        if stored.name not in self._cache:
            try:
                self._cache[stored.name] = self._read(stored)
            except SessionFileError:
                raise
            except Exception as error:  # values the schema lets through but the class refuses
                raise SessionFileError(stored.session.path, f"/{stored.kind}/{stored.name}: "
                                       f"cannot be read ({_h5._short(error)})") from error
        return self._cache[stored.name]

    def __len__(self) -> int:
        return len(self._stored)

    def names(self) -> list[str]:
        return [item.name for item in self._stored]

    def keys(self) -> list[str]:
        """The names, in file order (as :meth:`names`): with :meth:`items`, :meth:`get`
        and ``name in results`` the results read like a mapping by name."""
        return self.names()

    def values(self) -> list:
        return [self[i] for i in range(len(self))]

    def items(self) -> list[tuple[str, object]]:
        return list(zip(self.names(), self.values()))

    def get(self, name: str, default=None):
        return self[name] if name in self.names() else default

    def __contains__(self, item) -> bool:
        """``name in results`` for a name; ``result in results`` for a result object."""
        if isinstance(item, str):
            return item in self.names()
        return any(item is value for value in self.values())

    def __repr__(self) -> str:
        return f"Results({self.names()})"


KINDS = ("runs", "sweeps", "fits", "sensitivities", "analyses")


class Session:
    """Everything a session file holds. Get one with :func:`difflab.open`.

    ``models`` maps keys to :class:`ModelRecord`. ``runs``, ``sweeps``, ``fits`` and
    ``sensitivities`` give each result as the class the solvers return (a
    :class:`difflab.Trajectory`, :class:`difflab.SweepResult`, :class:`difflab.FitResult`,
    :class:`difflab.Sensitivity`), big arrays read from the file when used;
    ``analyses`` the analysis results (:class:`difflab.Equilibria`,
    :class:`difflab.Continuation`, :class:`difflab.LyapunovSpectrum`, ...) by name;
    :meth:`stored` gives a result's group as the file holds it (attributes, provenance).
    ``plot_layout`` and ``app_settings`` are the app's (JSON).
    """

    def __init__(self, path, *, attrs: dict, schema_version: int, provenance: dict,
                 models: dict[str, ModelRecord], app: dict):
        self.path = os.fspath(path)
        self.attrs = attrs
        self.schema_version = schema_version
        self.provenance = provenance
        self.models = models
        self.app = app
        self._stored = {kind: [] for kind in KINDS}
        self._set_results({kind: [] for kind in KINDS})

    def _set_results(self, stored: dict[str, list[Stored]]) -> None:
        self._stored = {kind: list(stored.get(kind, [])) for kind in KINDS}
        runs = {s.name: s for s in self._stored["runs"]}
        self.runs = Results(self._stored["runs"], _run)
        self.sweeps = Results(self._stored["sweeps"], _objects.sweep_result)
        self.fits = Results(self._stored["fits"], lambda s: _objects.fit_result(s, runs))
        self.sensitivities = Results(self._stored["sensitivities"],
                                     lambda s: _objects.sensitivity(s, runs))
        self.analyses = Results(self._stored["analyses"], _analyses.read)

    def stored(self, kind: str, name: str | None = None):
        """The file's group of result ``name`` of ``kind`` (``"runs"``, ...): a
        :class:`Stored`; without ``name``, every group of ``kind``."""
        groups = self._stored[kind]
        if name is None:
            return list(groups)
        for group in groups:
            if group.name == name:
                return group
        raise KeyError(f"no {kind} result named {name!r}")

    @property
    def plot_layout(self):
        return _json(self.app.get("plot_layout"))

    @property
    def app_settings(self):
        return _json(self.app.get("settings"))

    def groups(self) -> Iterator[Stored]:
        """Every result group, runs first."""
        for kind in KINDS:
            yield from self._stored[kind]

    def __repr__(self) -> str:
        counts = ", ".join(f"{k}={len(self._stored[k])}" for k in KINDS)
        return f"<Session {self.path!r} models={len(self.models)} {counts}>"

    def summary(self) -> dict:
        """What the file holds, as plain JSON-ready data (``difflab open --json``)."""
        return summary(self)


def _run(stored):
    """A stored run as a :class:`difflab.Trajectory`, or a field run as a
    :class:`difflab.solvers.FieldTrajectory`."""
    if _fields.is_field_run(stored.attrs):
        return _fields.field_trajectory(stored)
    return _objects.trajectory(stored)


def _json(text):
    return None if text is None else json.loads(text)
