"""A session opened from a file: models, runs, sweeps, fits, sensitivities; big arrays lazy."""

import dataclasses
import json
import os
from collections.abc import Iterator, Sequence

import numpy as np

from . import _h5
from ._errors import SessionFileError
from ._models import ModelRecord
from ._netcdf import Variable
from ._provenance import key_from_record

SETTING_NAMES = ("solver", "t0", "t1", "dt", "n_save", "rtol", "atol", "max_steps", "y0")


class LazyArray:
    """A dataset of a session file, read when indexed (``a[:10]``) or converted (``np.asarray``)."""

    def __init__(self, path: str, name: str, shape: tuple[int, ...], dtype):
        self.path, self.name, self.shape, self.dtype = path, name, tuple(shape), np.dtype(dtype)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, index):
        with _h5.open_for_reading(self.path) as f:
            try:
                dataset = f[self.name]
            except KeyError:
                raise SessionFileError(self.path, f"{self.name} is gone from the file") from None
            if dataset.shape == ():
                return dataset[()]
            try:
                return dataset[index]
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


@dataclasses.dataclass(repr=False)
class Result:
    """One result group: its attributes, netCDF variables and sub-groups, as read."""

    session: "Session"
    kind: str
    name: str
    attrs: dict
    variables: dict[str, Variable]
    groups: dict[str, dict[str, Variable]] = dataclasses.field(default_factory=dict)

    def __repr__(self) -> str:
        dims = {d: n for v in self.variables.values() for d, n in zip(v.dims, v.shape)}
        return f"<{type(self).__name__} {self.name!r} model={self.attrs.get('model')!r} {dims}>"

    def _data(self, name):
        var = self.variables.get(name)
        return None if var is None else var.data

    @property
    def model(self) -> ModelRecord:
        """The :class:`ModelRecord` this result was computed with."""
        return self.session.models[self.attrs["model"]]

    @property
    def settings(self) -> dict:
        """The solver settings stored with the result (``simulate``'s keyword arguments)."""
        return {k: self.attrs[k] for k in SETTING_NAMES if k in self.attrs}

    @property
    def key(self):
        """The ``jax.random`` key the result used, or ``None``."""
        if "key_data" not in self.attrs:
            return None
        return key_from_record(self.attrs["key_data"], self.attrs.get("key_impl", "threefry2x32"))

    @property
    def provenance(self) -> dict:
        return self.session.provenance.get(self.attrs.get("provenance"), {})

    @property
    def complete(self) -> bool:
        return bool(self.attrs.get("complete", 1))

    @property
    def state_names(self) -> tuple[str, ...]:
        return tuple(self.variables["state"].data) if "state" in self.variables else ()

    @property
    def time(self):
        return self._data("time")

    @property
    def y(self):
        return self._data("y")

    def to_csv(self, path) -> None:
        """Write this result as CSV (see :func:`difflab.io.export_csv`)."""
        from ._export import export_csv

        export_csv(self, path)

    def to_npz(self, path) -> None:
        """Write this result's arrays to a NumPy ``.npz`` (no pickled objects)."""
        from ._export import export_npz

        export_npz(self, path)

    def _simulate(self, model, settings: dict, key):
        from ..solvers import simulate  # noqa: PLC0415 (io reaches the engine only to rerun)

        settings = dict(settings)
        t1 = settings.pop("t1")
        if isinstance(settings.get("y0"), np.ndarray):
            settings["y0"] = np.asarray(settings["y0"], dtype=np.float64)
        return simulate(model, t1, key=key, throw=False, **settings)


class Run(Result):
    """A stored trajectory: ``time``, ``y`` (time, state), its settings and result."""

    @property
    def result(self) -> int:
        return int(self.attrs.get("result", 0))

    @property
    def message(self) -> str:
        return str(self.attrs.get("result_message", ""))

    def trajectory(self):
        """The stored run as a :class:`difflab.Trajectory`."""
        import jax.numpy as jnp

        from ..solvers import Trajectory

        return Trajectory(jnp.asarray(np.asarray(self.time)), jnp.asarray(np.asarray(self.y)),
                          jnp.asarray(self.result, dtype=jnp.int32),
                          jnp.asarray(self.attrs.get("steps", 0)), self.state_names,
                          self.attrs.get("wall_time"))

    def rerun(self, model=None, **overrides):
        """Simulate again with the stored model, parameters, settings and key.

        ``model``: needed for a user model (DiffLab never runs a file's code); its arrays
        are replaced by the stored ones. ``overrides`` change settings (``t1=...``).
        """
        built = self.model.build(model)
        return self._simulate(built, {**self.settings, **overrides}, self.key)


class Sweep(Result):
    """A stored sweep: ``parameters`` (point, parameter), ``y`` (point, time, state), ``result``."""

    @property
    def parameter_names(self) -> tuple[str, ...]:
        return tuple(self.variables["parameter"].data)

    @property
    def parameters(self):
        return self._data("parameters")

    @property
    def result(self):
        return self._data("result")

    @property
    def steps(self):
        return self._data("steps")

    @property
    def n_points(self) -> int:
        return int(self.attrs["n_points"])

    @property
    def chunk_size(self) -> int:
        return int(self.attrs["chunk_size"])

    @property
    def complete(self) -> bool:
        """True when every chunk of points has been written."""
        return bool(np.all(np.asarray(self.variables["chunk_done"].data) == 1))

    def to_xarray(self):
        """The sweep as an ``xarray.Dataset``, read into memory: over its grid's axes
        (dims such as ``rho``, ``sigma``, ``time``, ``state``) when ``dl.sweep`` swept a
        :func:`difflab.grid`, else over ``point`` (see ``xarray.open_dataset`` for lazy)."""
        from ._xarray import stored_dataset

        return stored_dataset(self)

    def point(self, i: int) -> dict[str, float]:
        """The swept parameter values of point ``i``."""
        return dict(zip(self.parameter_names, map(float, self.parameters[i])))

    def rerun(self, i: int, model=None, key=None, **overrides):
        """Simulate point ``i`` alone, with the stored settings.

        A stochastic sweep derives each point's key from the stored one (``key_scheme``
        says how); pass that point's ``key`` to reproduce its noise.
        """
        built = self.model.build(model).replace(**self.point(i))
        settings = {**self.settings, **overrides}
        if "y0" in self.variables:
            settings["y0"] = np.asarray(self.variables["y0"].data[i])
        return self._simulate(built, settings, self.key if key is None else key)


class Fit(Result):
    """A stored optimisation: ``loss`` (step,), ``parameters`` (step, parameter), ``data``."""

    @property
    def parameter_names(self) -> tuple[str, ...]:
        return tuple(self.variables["parameter"].data)

    @property
    def loss(self):
        return self._data("loss")

    @property
    def parameters(self):
        return self._data("parameters")

    @property
    def fitted_model(self) -> ModelRecord | None:
        key = self.attrs.get("fitted_model")
        return None if key is None else self.session.models[key]

    @property
    def data(self) -> dict[str, Variable] | None:
        return self.groups.get("data")


class Sensitivity(Result):
    """Stored derivatives: ``gradient`` (parameter,) and/or ``dy_dp`` (time, state, parameter)."""

    @property
    def parameter_names(self) -> tuple[str, ...]:
        return tuple(self.variables["parameter"].data)

    @property
    def gradient(self):
        return self._data("gradient")

    @property
    def dy_dp(self):
        return self._data("dy_dp")


RESULT_CLASSES = {"runs": Run, "sweeps": Sweep, "fits": Fit, "sensitivities": Sensitivity}


class Results(Sequence):
    """Results of one kind, by position (``session.runs[0]``) or name (``session.runs["run0"]``)."""

    def __init__(self, items: list[Result]):
        self._items = list(items)

    def __getitem__(self, index):
        if isinstance(index, str):
            for item in self._items:
                if item.name == index:
                    return item
            raise KeyError(f"no result named {index!r}; there are {self.names() or 'none'}")
        return self._items[index]

    def __len__(self) -> int:
        return len(self._items)

    def names(self) -> list[str]:
        return [item.name for item in self._items]

    def __repr__(self) -> str:
        return f"Results({self.names()})"


class Session:
    """Everything a session file holds. Get one with :func:`difflab.open`.

    ``models`` maps keys to :class:`ModelRecord`; ``runs``, ``sweeps``, ``fits`` and
    ``sensitivities`` are :class:`Results`; big arrays are :class:`LazyArray` and read
    from the file when used. ``plot_layout`` and ``app_settings`` are the app's (JSON).
    """

    def __init__(self, path, *, attrs: dict, schema_version: int, provenance: dict,
                 models: dict[str, ModelRecord], app: dict):
        self.path = os.fspath(path)
        self.attrs = attrs
        self.schema_version = schema_version
        self.provenance = provenance
        self.models = models
        self.app = app
        self.runs = self.sweeps = self.fits = self.sensitivities = Results([])

    def _set_results(self, kind: str, items: list[Result]) -> None:
        setattr(self, kind, Results(items))

    @property
    def plot_layout(self):
        return _json(self.app.get("plot_layout"))

    @property
    def app_settings(self):
        return _json(self.app.get("settings"))

    def results(self) -> Iterator[Result]:
        for kind in RESULT_CLASSES:
            yield from getattr(self, kind)

    def __repr__(self) -> str:
        counts = ", ".join(f"{k}={len(getattr(self, k))}" for k in RESULT_CLASSES)
        return f"<Session {self.path!r} models={len(self.models)} {counts}>"

    def summary(self) -> dict:
        """What the file holds, as plain JSON-ready data (``difflab open --json``)."""
        from ._summary import summary

        return summary(self)

    def save(self, path=None, *, compress: bool = False) -> None:
        """Write the session to ``path`` (default: where it came from), atomically."""
        from ._save import save_session

        save_session(self, self.path if path is None else path, compress=compress)


def _json(text):
    return None if text is None else json.loads(text)

