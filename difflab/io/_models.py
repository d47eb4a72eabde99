"""Models in a session file: a record of what a model is, and rebuilding a built-in one."""

import dataclasses
import hashlib
import inspect
import json
import math
import os

import numpy as np

from .._version import __version__

_SIMPLE = (bool, int, float, str)
MAX_SOURCE_BYTES = 5_000_000  # as a model file may be
MAX_STATIC_COUNT = 100_000  # the largest count (grid points, bodies) a stored model may have


@dataclasses.dataclass
class ModelRecord:
    """A model as a session file stores it: identity, parameter values and every array leaf.

    ``origin`` is ``"builtin"``, ``"equations"`` (``source`` holds the equations, parsed
    again on open) or ``"user"`` (``source`` is the model file's text, kept for the record
    and never executed on open); ``leaves`` maps ``keystr`` paths to arrays.
    """

    key: str
    origin: str
    name: str
    class_name: str
    version: str
    parameters: dict[str, float]
    units: dict[str, str] = dataclasses.field(default_factory=dict)
    static: dict = dataclasses.field(default_factory=dict)
    leaves: dict = dataclasses.field(default_factory=dict)
    leaf_key_impls: dict[str, str] = dataclasses.field(default_factory=dict)
    path: str | None = None
    sha256: str | None = None
    source: str | None = None

    def fingerprint(self) -> str:
        """A hash of everything but the key: equal records share one entry in a file."""
        h = hashlib.sha256()
        head = [self.origin, self.name, self.class_name, self.version, self.path, self.sha256,
                sorted(self.parameters.items()), sorted(self.static.items()),
                sorted(self.leaf_key_impls.items())]
        h.update(json.dumps(head, default=str).encode())
        for path, leaf in self.leaves.items():
            leaf = np.asarray(leaf)
            h.update(f"{path}|{leaf.dtype.str}|{leaf.shape}".encode())
            h.update(np.ascontiguousarray(leaf).tobytes())
        h.update((self.source or "").encode())
        return h.hexdigest()

    def build(self, model=None, *, trust=False):
        """The model this record describes, with its stored parameter values and leaves.

        A built-in model is rebuilt from the registry and an equation model from its
        stored text (parsed, never executed). A user model file runs only when ``trust``
        allows it (see :func:`difflab.models.from_source`); otherwise pass an instance of
        its class (``model=``) and its arrays are replaced by the stored ones.
        """
        if model is None:
            if self.origin == "user" and not trust:
                raise ValueError(
                    f"model {self.key!r} is a user model ({self.path}); DiffLab never runs "
                    "code from a session file unless you trust it: pass trust=True or "
                    "load the model yourself and pass model="
                )
            model = _instantiate(self, trust)
        return _with_leaves(model, self)


PATH_NOTE = ("the model file was outside the session file's folder; only its name is kept, "
             "and it is looked for next to the session file")


def stored_source_path(path: str | None, session_path) -> tuple[str | None, str | None]:
    """``(path, note)`` as a session file stores a model file's ``path``: relative to the
    session file's folder (``/``-separated) when the model file lies under it, else its
    name alone with the note :data:`PATH_NOTE`; never an absolute path."""
    if not path:
        return path, None
    folder = os.path.dirname(os.path.abspath(os.fspath(session_path)))
    full = os.path.abspath(path)
    try:
        inside = os.path.commonpath([folder, full]) == folder
    except ValueError:  # another drive
        inside = False
    if inside:
        return os.path.relpath(full, folder).replace(os.sep, "/"), None
    return os.path.basename(full), PATH_NOTE


def resolved_source_path(stored: str | None, session_path) -> str | None:
    """The model file a stored ``path`` names, found from the session file's folder (an
    absolute path, as older files hold, is kept)."""
    if not stored:
        return stored
    folder = os.path.dirname(os.path.abspath(os.fspath(session_path)))
    return os.path.normpath(os.path.join(folder, stored))


def check_static(record: ModelRecord) -> None:
    """``ValueError`` naming the field unless every stored ``static_*`` value fits the
    model's class: a setting it has, of its type, with its sign, and a count (an integer
    whose default is positive: grid points, bodies, oscillators) at most
    :data:`MAX_STATIC_COUNT`. A class DiffLab cannot look up without running code (a
    user's file) gets the checks that need no class: numbers finite, counts bounded."""
    cls = _known_class(record)
    fields = {f.name: f for f in dataclasses.fields(cls)} if cls is not None else None
    for name, value in record.static.items():
        where = f"static_{name} = {value!r}"
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"{where} is not a finite number")
        if fields is None:
            _check_bounded(where, value)
            continue
        field = fields.get(name)
        if field is None or not field.metadata.get("static"):
            _check_bounded(where, value)  # a setting of an earlier version: never used
            continue
        _check_like(where, value, field.default)


def _check_bounded(where: str, value) -> None:
    if isinstance(value, int) and abs(value) > MAX_STATIC_COUNT:
        raise ValueError(f"{where} is out of range (at most {MAX_STATIC_COUNT:,})")


def _check_like(where: str, value, default) -> None:
    """``value`` read from a file checked against the field's ``default``."""
    if default is dataclasses.MISSING or default is None:
        return
    if isinstance(default, bool):
        ok = isinstance(value, int) and value in (0, 1)
    elif isinstance(default, int):
        ok = isinstance(value, int) and not isinstance(value, bool)
        if ok and default > 0 and not 1 <= value <= MAX_STATIC_COUNT:
            raise ValueError(f"{where} is out of range (a count from 1 to {MAX_STATIC_COUNT:,})")
        ok = ok and (default < 0 or value >= 0)
    elif isinstance(default, float):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and (
            default <= 0 or value > 0)
    else:
        ok = isinstance(value, type(default))
    if not ok:
        raise ValueError(f"{where} does not fit the model (its default is {default!r})")


def _known_class(record: ModelRecord):
    """The class of a built-in model record (``None`` for other origins or unknown names)."""
    if record.origin != "builtin":
        return None
    try:
        return _registered_class(record.name)
    except ValueError:
        return None


def _registered_class(name: str):
    from ..models import get

    return get(name)


def _instantiate(record: ModelRecord, trust=False):
    from ..models import from_source

    if record.origin == "builtin":
        cls = _registered_class(record.name)
    else:
        kind = "equations" if record.origin == "equations" else "file"
        cls = from_source(dict(kind=kind, name=record.name, path=record.path,
                               sha256=record.sha256, text=record.source), trust=trust)
    accepted = inspect.signature(cls).parameters
    unknown = sorted(set(record.static) - set(accepted))
    if record.origin == "builtin" and unknown:
        raise ValueError(f"model {record.key!r}: {record.name} has no setting {unknown[0]!r} "
                         "any more (the file was written by an earlier DiffLab); its results "
                         "open, but this model cannot be built again")
    return cls(**{k: v for k, v in record.static.items() if k in accepted})


def _flat(model):
    import equinox as eqx
    import jax

    dynamic, static = eqx.partition(model, eqx.is_array)
    pairs, treedef = jax.tree_util.tree_flatten_with_path(dynamic)
    return [(jax.tree_util.keystr(p), leaf) for p, leaf in pairs], treedef, static


def _with_leaves(model, record: ModelRecord):
    import equinox as eqx
    import jax
    import jax.numpy as jnp

    if not record.leaves:  # version-0 files: scalar parameters only
        return model.replace(**record.parameters)
    pairs, treedef, static = _flat(model)
    stored = [path for path in record.leaves]
    if [p for p, _ in pairs] != stored:
        raise ValueError(
            f"model {record.key!r}: the stored arrays {stored[:4]} do not match those "
            f"of {type(model).__name__} {[p for p, _ in pairs][:4]}"
        )
    leaves = []
    for path, leaf in pairs:
        value = np.asarray(record.leaves[path])
        if path in record.leaf_key_impls:
            leaves.append(jax.random.wrap_key_data(value, impl=record.leaf_key_impls[path]))
            continue
        if value.shape != leaf.shape:
            raise ValueError(f"model {record.key!r}: {path} has shape {value.shape}, "
                             f"{type(model).__name__} expects {leaf.shape}")
        leaves.append(jnp.asarray(value, dtype=leaf.dtype))
    return eqx.combine(jax.tree_util.tree_unflatten(treedef, leaves), static)


def _static_fields(model) -> dict:
    out = {}
    for f in dataclasses.fields(model):
        if f.metadata.get("static") and isinstance(getattr(model, f.name, None), _SIMPLE):
            out[f.name] = getattr(model, f.name)
    return out


def _leaf_entries(model):
    import jax

    leaves, impls = {}, {}
    for path, leaf in _flat(model)[0]:
        if jax.dtypes.issubdtype(leaf.dtype, jax.dtypes.prng_key):
            impls[path] = str(jax.random.key_impl(leaf))
            leaf = jax.random.key_data(leaf)
        leaves[path] = np.asarray(leaf)
    return leaves, impls


def record_of(model, *, key: str = "", source_path: str | os.PathLike | None = None) -> ModelRecord:
    """The :class:`ModelRecord` of a model instance.

    A model whose class is in the registry is ``"builtin"``; any other is ``"user"``, and
    ``source_path`` (default: the file its class was defined in) is hashed and its text kept.
    """
    cls = type(model)
    name = cls.registry_name or cls.__name__
    builtin = cls.registry_name is not None and _is_registered(cls)
    specs = cls.parameter_specs()
    leaves, impls = _leaf_entries(model)
    record = ModelRecord(
        key=key, origin="builtin" if builtin else "user", name=name,
        class_name=f"{cls.__module__}.{cls.__qualname__}",
        version=str(getattr(cls, "version", None) or __version__),
        parameters={n: float(np.asarray(v)) for n, v in model.parameters().items()
                    if np.ndim(v) == 0},
        units={n: s.unit for n, s in specs.items() if s.unit},
        static=_static_fields(model), leaves=leaves, leaf_key_impls=impls,
    )
    if not builtin:
        _add_source(record, cls, source_path)
    return record


def _add_source(record: ModelRecord, cls, source_path) -> None:
    """Where a non-registry model comes from: its equations, or the file that ran."""
    from ..models import source_of

    source = source_of(cls)
    if source.kind == "equations":
        record.origin = "equations"
    if source.kind in ("equations", "file") and source_path is None:
        record.path, record.sha256, record.source = source.path, source.sha256, source.text
    else:
        _add_file_source(record, cls, source_path)


def _is_registered(cls) -> bool:
    try:
        return _registered_class(cls.registry_name) is cls
    except ValueError:
        return False


def _add_file_source(record: ModelRecord, cls, source_path) -> None:
    if source_path is None:
        try:
            source_path = inspect.getsourcefile(cls)
        except TypeError:
            source_path = None
    if source_path is None or not os.path.isfile(source_path):
        return
    from ..models import FileReadError, read_bounded

    try:
        data = read_bounded(source_path, MAX_SOURCE_BYTES)
    except FileReadError:
        return
    record.path = os.path.abspath(source_path)
    record.sha256 = hashlib.sha256(data).hexdigest()
    record.source = data.decode("utf-8", errors="replace")
