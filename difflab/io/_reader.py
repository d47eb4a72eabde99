"""Opening a session file: read attributes and shapes, check them against the schema.

Nothing here executes code from the file: no pickle, no eval, JSON only through
``json.loads``. Big datasets are not read; they become :class:`LazyArray`. Every problem
is a :class:`SessionFileError` naming the file and what is wrong.
"""

import json
import os

import numpy as np

from . import _analyses, _field_sweeps, _fields, _h5, _sandbox, _upgrade
from ._errors import SessionFileError
from ._models import ModelRecord, check_static, resolved_source_path
from ._netcdf import Variable, label_name, labels
from ._schema import (
    ANALYSES,
    DATA_SPEC,
    FORMAT,
    KINDS,
    NAME,
    OPTIONAL_COORDS,
    SCHEMA_VERSION,
    SPECS,
)
from ._session import LazyArray, Session, Stored

MAX_MEMBERS = 10_000
MAX_DIM = 2**31
MAX_ELEMENTS = 2**40
MAX_ATTR_ELEMENTS = 10**6
MAX_TEXT = 1 << 20
MAX_STRING_COORD = 10**6
MAX_LEAF_ELEMENTS = 10**8
RESERVED = {"CLASS", "NAME", "DIMENSION_LIST", "REFERENCE_LIST", "_Netcdf4Dimid",
            "_Netcdf4Coordinates", "_NCProperties", "_nc3_strict", "fingerprint"}

class _Reader:
    """Reads and checks one open file; ``beat`` reports progress, ``deep`` also walks
    every dataset's chunk index (done once, in the sandboxed child)."""

    def __init__(self, path, file, beat=lambda: None, deep=False):
        self.path, self.file, self.beat, self.deep = os.fspath(path), file, beat, deep

    def fail(self, where: str, problem: str):
        raise SessionFileError(self.path, f"{where}: {problem}" if where else problem)

    # -- attributes --------------------------------------------------------------------

    def attrs(self, obj, where: str) -> dict:
        self.beat()
        names = list(obj.attrs)
        if len(names) > MAX_MEMBERS:
            self.fail(where, f"{len(names)} attributes (at most {MAX_MEMBERS})")
        out = {n: self.attr(obj, n, where) for n in names if n not in RESERVED}
        out.update(self.long_texts(obj, where))
        return _h5.with_cf_names(out)

    def long_texts(self, obj, where: str) -> dict:
        """The long text attributes a group keeps as datasets ``text.<name>``."""
        import h5py

        if not isinstance(obj, h5py.Group) or len(obj) > MAX_MEMBERS:
            return {}
        out = {}
        for key in obj:
            name = self._long_text_name(obj, key)
            if name is not None:
                ds = self.dataset(obj, key, where, "s", ndim=0)
                if ds.dtype.itemsize > _h5.MAX_LONG_TEXT:
                    self.fail(where, f"{key!r} is too long ({ds.dtype.itemsize} bytes)")
                out[name] = self._text(ds[()], f"{where}/{key}", _h5.MAX_LONG_TEXT)
        return out

    def _long_text_name(self, group, key: str) -> str | None:
        """The attribute a long-text dataset ``text_<name>`` (``text.<name>`` in older
        files) holds; ``None`` for other members (a variable whose name starts so)."""
        if key.startswith(_h5.OLD_LONG_TEXT_PREFIX):
            return key[len(_h5.OLD_LONG_TEXT_PREFIX):]
        if not key.startswith(_h5.LONG_TEXT_PREFIX):
            return None
        ds = self._get(group, key)
        scalar_text = getattr(ds, "ndim", None) == 0 and ds.dtype.kind == "S"
        return key[len(_h5.LONG_TEXT_PREFIX):] if scalar_text else None

    def attr(self, obj, name: str, where: str):
        meta = obj.attrs.get_id(name)
        if meta.shape is None:
            self.fail(where, f"attribute {name!r} has no value")
        shape = meta.shape
        if len(shape) > 1 or int(np.prod(shape, dtype=np.float64)) > MAX_ATTR_ELEMENTS:
            self.fail(where, f"attribute {name!r} has {shape} entries (too many)")
        kind = self._kind(meta.dtype)
        if kind is None:
            self.fail(where, f"attribute {name!r} has unsupported type {meta.dtype}")
        if meta.dtype.kind == "O":  # variable-length text (other writers): h5py decodes it
            value = obj.attrs[name]
        else:  # numbers and fixed-length text, read straight into an array
            value = np.empty(shape, dtype=meta.dtype)
            meta.read(value)
        if kind == "s":
            return self._text(value, f"{where} attribute {name!r}")
        value = np.asarray(value)
        if value.ndim > 1:
            self.fail(where, f"attribute {name!r} has {value.ndim} dimensions")
        return value.item() if value.ndim == 0 else value

    def _kind(self, dtype):
        import h5py

        if h5py.check_string_dtype(dtype) is not None:
            return "s"
        if dtype.kind in "fiub" and dtype.fields is None and dtype.shape == ():
            return dtype.kind
        return None

    def _text(self, value, where, limit=MAX_TEXT):
        if isinstance(value, np.ndarray) and value.ndim == 0:
            value = value.item()
        if isinstance(value, np.ndarray):
            if value.ndim > 1:
                self.fail(where, "has more than one dimension")
            return [self._text(v, where) for v in value.tolist()]
        if isinstance(value, bytes):
            try:
                value = value.decode("utf-8")
            except UnicodeDecodeError:
                self.fail(where, "is not UTF-8 text")
        if len(value) > limit:
            self.fail(where, f"is {len(value)} characters long (at most {limit})")
        return str(value)

    def typed(self, attrs, name, types, where, required=True):
        if name not in attrs:
            if required:
                self.fail(where, f"missing attribute {name!r}")
            return None
        value = attrs[name]
        if not isinstance(value, types) or isinstance(value, bool):
            self.fail(where, f"attribute {name!r} has the wrong type ({type(value).__name__})")
        return value

    # -- groups and datasets -------------------------------------------------------------

    def members(self, group, where: str, dataset=False):
        """The groups (or datasets) in ``group`` reached by hard links; others are ignored."""
        import h5py

        if len(group) > MAX_MEMBERS:
            self.fail(where, f"{len(group)} members (at most {MAX_MEMBERS})")
        wanted = h5py.Dataset if dataset else h5py.Group
        out = {}
        for name in group:
            item = self._get(group, name)
            if isinstance(item, wanted):
                out[name] = item
        return out

    def _get(self, group, name):
        """A member reached by a hard link (soft and external links are not followed)."""
        import h5py

        if not isinstance(group.get(name, getlink=True), h5py.HardLink):
            return None
        return group[name]

    def group(self, parent, name: str, where: str, required=True):
        import h5py

        item = self._get(parent, name)
        if item is None:
            if required:
                self.fail(where, f"missing group {name!r}")
            return None
        if not isinstance(item, h5py.Group):
            self.fail(where, f"{name!r} is not a group")
        return item

    def dataset(self, group, name, where, kind, ndim=None):
        import h5py

        self.beat()
        item = self._get(group, name)
        if not isinstance(item, h5py.Dataset):
            self.fail(where, f"{name!r} is missing or not a dataset")
        if item.is_virtual or item.external:
            self.fail(where, f"{name!r} keeps its data in other files, which DiffLab does not read")
        shape = item.shape or ()
        if ndim is not None and len(shape) != ndim:
            self.fail(where, f"{name!r} has {len(shape)} dimensions, expected {ndim}")
        if any(n > MAX_DIM for n in shape) or np.prod(shape, dtype=np.float64) > MAX_ELEMENTS:
            self.fail(where, f"{name!r} has an absurd shape {shape}")
        if self.deep and item.chunks is not None:
            item.id.get_num_chunks()  # walks the chunk index: damage shows here, not later
        found = self._kind(item.dtype)
        if found is None or (kind == "f" and found not in "fiu") or (
                kind == "i" and found not in "iub") or (kind == "s") != (found == "s"):
            self.fail(where, f"{name!r} has dtype {item.dtype}, expected "
                             f"{ {'f': 'floats', 'i': 'integers', 's': 'strings'}[kind]}")
        return item

    def strings(self, dataset, where):
        """Names: a char array (name, length), or strings (name,) as older files hold them."""
        name = dataset.name.rsplit("/", 1)[-1]
        chars = dataset.ndim == 2 and dataset.dtype.itemsize == 1
        if dataset.ndim != 1 and not chars:
            self.fail(where, f"{name!r} has {dataset.ndim} dimensions, expected 1 "
                             "(or 2 for characters)")
        if dataset.shape[0] > MAX_STRING_COORD or (chars and dataset.shape[1] > MAX_TEXT):
            self.fail(where, f"{dataset.name} has {dataset.shape} names (too many or too long)")
        return self._text(labels(dataset[...]), f"{where} {name!r}")

    def lazy(self, dataset):
        return LazyArray(self.path, dataset.name, dataset.shape, dataset.dtype)

    def netcdf(self, group, spec, where, optional_coords=None) -> dict[str, Variable]:
        coords, required, optional, _ = spec
        variables, sizes = {}, {}
        all_coords = {**coords, **(optional_coords or {})}
        for name, kind in all_coords.items():
            if name not in coords and self._get(group, name) is None:
                continue
            if kind == "s" and self._get(group, label_name(name)) is not None:
                name_ds = self.dataset(group, label_name(name), where, "s")
                ds = self.dataset(group, name, where, "i", ndim=1)
                data = self.strings(name_ds, where)  # labels beside an index (schema 3)
                attrs = self.attrs(name_ds, f"{where}/{label_name(name)}")
            else:
                ds = self.dataset(group, name, where, kind, ndim=None if kind == "s" else 1)
                data = self.strings(ds, where) if kind == "s" else self.lazy(ds)
                attrs = self.attrs(ds, f"{where}/{name}")
            if len(data) != ds.shape[0]:
                self.fail(where, f"{name!r} has {ds.shape[0]} entries and {len(data)} labels")
            variables[name] = Variable((name,), data, attrs)
            sizes[name] = ds.shape[0]
        for name, (dims, kind) in {**required, **optional}.items():
            if name not in required and self._get(group, name) is None:
                continue
            missing = [d for d in dims if d not in sizes]
            if missing:
                self.fail(where, f"{name!r} needs dimension {missing[0]!r}, which is missing")
            ds = self.dataset(group, name, where, kind, ndim=None if kind == "s" else len(dims))
            data = self.strings(ds, where) if kind == "s" else self.lazy(ds)
            expected = tuple(sizes[d] for d in dims)
            if np.shape(data) != expected:
                self.fail(where, f"{name!r} has shape {np.shape(data)}, expected {expected} "
                                 f"from its dimensions {dims}")
            variables[name] = Variable(dims, data, self.attrs(ds, f"{where}/{name}"))
        self._extra_variables(group, variables, sizes, where)
        return variables

    def _extra_coordinates(self, group, variables, sizes, where):
        """Other coordinates (a vector observable's ``<name>_index``, a grid sweep's axes):
        1-D numeric dimension scales named like themselves."""
        for name, ds in self.members(group, where, dataset=True).items():
            if name not in variables and ds.ndim == 1 and ds.is_scale and _h5.text(
                    ds.attrs.get("NAME")) == name and self._kind(ds.dtype) in ("i", "u", "f"):
                ds = self.dataset(group, name, where, "f", ndim=1)
                variables[name] = Variable((name,), self.lazy(ds), self.attrs(ds, f"{where}/{name}"))
                sizes[name] = ds.shape[0]

    def _extra_variables(self, group, variables, sizes, where):
        """Keep other variables whose dimensions are known (they survive a save)."""
        self._extra_coordinates(group, variables, sizes, where)
        for name, ds in self.members(group, where, dataset=True).items():
            if name in variables:
                continue
            try:
                dims = tuple(next(iter(ds.dims[i].keys()), "") for i in range(ds.ndim))
            except Exception:  # unreadable dimension references: leave the variable out
                continue
            dims = tuple(d.rsplit("/", 1)[-1] for d in dims)
            if dims and all(d in sizes for d in dims) and ds.shape == tuple(
                    sizes[d] for d in dims) and self._kind(ds.dtype) in ("f", "i", "u"):
                ds = self.dataset(group, name, where, "f", ndim=len(dims))  # the usual checks
                variables[name] = Variable(dims, self.lazy(ds), self.attrs(ds, f"{where}/{name}"))


def _root_version(reader: _Reader, f) -> int:
    attrs = reader.attrs(f, "")
    if "difflab_schema_version" not in attrs:
        if _upgrade.is_version_0(f, attrs):
            return 0
        reader.fail("", "not a DiffLab session (no difflab_schema_version attribute)")
    version = reader.typed(attrs, "difflab_schema_version", (int, np.integer), "root")
    if attrs.get("difflab_format", FORMAT) != FORMAT:
        reader.fail("root", f"difflab_format is {attrs.get('difflab_format')!r}")
    if version > SCHEMA_VERSION:
        reader.fail("", f"schema version {version} is newer than this DiffLab reads "
                        f"({SCHEMA_VERSION}); upgrade DiffLab to open it")
    if version < 1:
        reader.fail("root", f"invalid schema version {version}")
    return int(version)


def _model(reader: _Reader, key: str, group) -> ModelRecord:
    where = f"/models/{key}"
    attrs = reader.attrs(group, where)
    text = lambda name, required=True: reader.typed(attrs, name, str, where, required)  # noqa: E731
    origin = text("origin")
    if origin not in ("builtin", "equations", "user"):
        reader.fail(where, f"origin must be 'builtin', 'equations' or 'user', not {origin!r}")
    record = ModelRecord(
        key=key, origin=origin, name=text("name"), class_name=text("class_name", False) or "",
        version=text("version", False) or "",
        path=resolved_source_path(text("path", False), reader.path),
        sha256=text("sha256", False),
        parameters={p: float(reader.typed(attrs, k, (int, float), where))
                    for p, k in _h5.prefixed(attrs, "param").items()},
        units={p: attrs[k] for p, k in _h5.prefixed(attrs, "unit").items()
               if isinstance(attrs[k], str)},
        static={p: attrs[k] for p, k in _h5.prefixed(attrs, "static").items()
                if isinstance(attrs[k], (int, float, str))},
    )
    try:
        check_static(record)
    except ValueError as error:
        reader.fail(where, str(error))
    if reader._get(group, "source") is not None:
        source = reader.dataset(group, "source", where, "s", ndim=0)
        record.source = reader._text(source[()], f"{where}/source")
    _leaves(reader, group, record, where)
    return record


def _leaves(reader: _Reader, group, record: ModelRecord, where: str) -> None:
    leaves = reader.group(group, "leaves", where, required=False)
    if leaves is None:
        return
    members = reader.members(leaves, where, dataset=True)
    total = 0
    for i in range(len(members)):
        name = next((n for n in (f"leaf_{i}", str(i)) if n in members), None)  # str(i): older files
        if name is None:
            reader.fail(f"{where}/leaves", f"leaf {i} is missing")
        ds = reader.dataset(leaves, name, f"{where}/leaves", "f")
        total += ds.size
        if total > MAX_LEAF_ELEMENTS:
            reader.fail(where, "the model's arrays are absurdly large")
        attrs = reader.attrs(ds, f"{where}/leaves/{name}")
        path = reader.typed(attrs, "path", str, f"{where}/leaves/{name}")
        record.leaves[path] = ds[()]
        if isinstance(attrs.get("key_impl"), str):
            record.leaf_key_impls[path] = attrs["key_impl"]


def _result(reader: _Reader, session: Session, kind: str, name: str, group,
            spec=None, optional_coords=None, renamed=None):
    where = f"/{kind}/{name}"
    if not NAME.fullmatch(name):
        reader.fail(where, "invalid result name")
    attrs = _renamed(reader.attrs(group, where), renamed or {})
    spec = spec or SPECS[kind]
    model = reader.typed(attrs, "model", str, where)
    if model not in session.models:
        reader.fail(where, f"refers to model {model!r}, which the file does not hold")
    for name_ in spec[3]:
        if reader.typed(attrs, name_, (int, np.integer), where) < 1:
            reader.fail(where, f"attribute {name_!r} must be at least 1")
    variables = reader.netcdf(group, spec, where, optional_coords or OPTIONAL_COORDS.get(kind))
    groups = {}
    if kind == "fits" and reader._get(group, "data") is not None:
        groups["data"] = reader.netcdf(reader.group(group, "data", where), DATA_SPEC,
                                       f"{where}/data")
    _check_result(reader, kind, attrs, variables, where)
    return Stored(session, kind, name, attrs, variables, groups)


def _field_spec(reader: _Reader, kind: str, name: str, group):
    """A field run's or field sweep's spec (its fields over the grid's axes); ``None``
    otherwise."""
    where = f"/{kind}/{name}"
    attrs = reader.attrs(group, where) if kind in ("runs", "sweeps") else {}
    if not _fields.is_field_run(attrs):
        return None
    spec = _field_sweeps.sweep_spec if kind == "sweeps" else _fields.field_spec
    return spec(attrs, lambda problem: reader.fail(where, problem))


def _analysis(reader: _Reader, session: Session, name: str, group) -> Stored | None:
    """An ``/analyses`` group, checked against its registered format; ``None`` for an
    analysis this DiffLab does not know (written by a newer one: ignored)."""
    where = f"/{ANALYSES}/{name}"
    attrs = reader.attrs(group, where)
    fmt = _analyses.FORMATS.get(reader.typed(attrs, "analysis", str, where))
    if fmt is None:
        return None
    attrs = _renamed(attrs, fmt.renamed())
    for attr, types in fmt.attributes().items():
        reader.typed(attrs, attr, types, where)
    spec, optional_coords = fmt.spec()
    return _result(reader, session, ANALYSES, name, group, spec, optional_coords,
                   fmt.renamed())


def _renamed(attrs: dict, renamed: dict[str, str]) -> dict:
    """Attributes with the names older files gave them made today's (``bounds`` of
    periodic orbits is ``parameter_range``); a name already there is kept."""
    out = {k: v for k, v in attrs.items() if k not in renamed}
    for old, new in renamed.items():
        if old in attrs:
            out.setdefault(new, attrs[old])
    return out


def _check_result(reader, kind, attrs, variables, where) -> None:
    if kind == "sweeps" and not _fields.is_field_run(attrs):
        n, cs = int(attrs["n_points"]), int(attrs["chunk_size"])
        if variables["point"].shape[0] != n:
            reader.fail(where, f"n_points is {n} but the point dimension has "
                               f"{variables['point'].shape[0]}")
        if variables["chunk"].shape[0] != -(-n // cs):
            reader.fail(where, f"{variables['chunk'].shape[0]} chunks do not cover "
                               f"{n} points of {cs}")
    if kind == "sensitivities" and not ({"gradient", "dy_dp"} & set(variables)):
        reader.fail(where, "neither gradient nor dy_dp")
    if "y0" in attrs and not isinstance(attrs["y0"], (np.ndarray, float, int)):
        reader.fail(where, "attribute 'y0' is not numbers")


def _app(reader: _Reader, f) -> dict:
    group = reader.group(f, "app", "", required=False)
    if group is None:
        return {}
    attrs = reader.attrs(group, "/app")
    app = {}
    for name in ("plot_layout", "settings"):
        if name in attrs:
            text = reader.typed(attrs, name, str, "/app")
            try:
                json.loads(text)
            except (ValueError, RecursionError):
                reader.fail("/app", f"{name} is not valid JSON")
            app[name] = text
    return app


def _read(reader: _Reader, f) -> Session:
    version = _root_version(reader, f)
    if version == 0:
        return _upgrade.read_version_0(reader, f)
    provenance = {pid: reader.attrs(g, f"/provenance/{pid}") for pid, g in
                  reader.members(reader.group(f, "provenance", ""), "/provenance").items()}
    models = {key: _model(reader, key, g) for key, g in
              reader.members(reader.group(f, "models", ""), "/models").items()}
    root = reader.attrs(f, "")
    session = Session(reader.path, attrs=root, schema_version=version, provenance=provenance,
                      models=models, app=_app(reader, f))
    stored = {}
    for kind in KINDS:
        parent = reader.group(f, kind, "")
        stored[kind] = [_result(reader, session, kind, name, g, _field_spec(reader, kind, name, g))
                        for name, g in reader.members(parent, f"/{kind}").items()]
    parent = reader.group(f, ANALYSES, "", required=False)
    found = reader.members(parent, f"/{ANALYSES}") if parent is not None else {}
    stored[ANALYSES] = [s for s in (_analysis(reader, session, name, g)
                                    for name, g in found.items()) if s is not None]
    session._set_results(stored)
    return session


def _validate(path, beat) -> None:
    f = _h5.open_for_reading(path)
    try:
        _read(_Reader(path, f, beat, deep=True), f)
    finally:
        f.close()


def open_session(path, *, stall_s: float = _sandbox.STALL_S) -> Session:
    """Open a DiffLab session file: validate it and return a :class:`Session`.

    Big results stay in the file and are read when used. Raises
    :class:`SessionFileError` (naming the file and the problem) for anything that is not
    a valid session: another program's file, a damaged or truncated one, wrong shapes or
    dtypes, missing groups, a newer schema version. The file is read first in a forked
    child process (where the platform allows), so damage that would hang or crash the
    HDF5 library only costs that child; ``stall_s`` is how long it may make no progress.
    """
    path = os.fspath(path)
    _sandbox.check(path, _guarded(_validate), stall_s=stall_s)
    return _guarded(lambda p: _read_file(p))(path)


def _read_file(path) -> Session:
    f = _h5.open_for_reading(path)
    try:
        return _read(_Reader(path, f), f)
    finally:
        try:
            f.close()
        except Exception:  # closing a damaged file can fail too; the error above matters
            pass


def _guarded(function):
    """``function(path, ...)`` with every failure turned into a :class:`SessionFileError`."""

    def call(path, *args):
        try:
            return function(path, *args)
        except SessionFileError:
            raise
        except RecursionError:
            raise SessionFileError(path, "structure nested too deeply") from None
        except Exception as error:  # h5py reports damaged metadata with many exception types
            raise SessionFileError(path, f"damaged or unreadable ({_h5._short(error)})") from None

    return call
