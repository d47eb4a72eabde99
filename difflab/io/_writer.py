"""Writing session files: ``write_session`` (atomic) and ``stream_session`` (in place, SWMR).

Both yield a :class:`SessionWriter`, the one place results are put into a file, so the
CLI, the app and scripts write the same schema (``docs/hdf5-schema.md``).
"""

import contextlib
import dataclasses
import os
import re
import shutil
import time

import numpy as np

from .._version import __version__
from ..solvers import Result, SolveSettings, default_solver, key_from_record
from . import _analyses, _h5, _netcdf, _provenance
from ._errors import SessionFileError
from ._lock import real_path, writing
from ._models import ModelRecord, record_of, resolved_source_path, stored_source_path
from ._netcdf import Variable, run_variables, time_state
from ._reader import open_session
from ._run_events import event_variables
from ._schema import ALL_KINDS, FORMAT, KINDS, NAME, SCHEMA_VERSION, SETTINGS
from ._streams import FitWriter, RunWriter, SweepWriter


def check_name(name: str) -> str:
    """``name`` if it is a valid result or model name, else ``ValueError``."""
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise ValueError(f"invalid name {name!r}: use letters, digits, '_', '.', '-' "
                         "(at most 64, not starting with a digit)")
    return name


def settings_attrs(settings: dict | None, model=None) -> dict:
    """Solver settings as attributes: known keys typed, a solver object by its name."""
    out = {}
    for key, value in (settings or {}).items():
        if value is None or key == "key":
            continue
        if key == "solver":
            value = value if isinstance(value, str) else type(value).__name__.lower()
        elif key == "y0":
            value = np.asarray(value, dtype=np.float64).reshape(-1)
        elif key == "optimize":  # written only where it is off
            if value:
                continue
            value = 0
        elif key in ("n_save", "max_steps", "seed"):
            value = int(value)
        elif key == "atol" and np.ndim(value):  # one per state
            value = np.asarray(value, dtype=np.float64).reshape(-1)
        elif key in SETTINGS:
            value = float(np.asarray(value))
        elif not isinstance(value, (str, int, float, bool, np.number)):
            continue
        out[key] = value
    if "solver" not in out and model is not None:
        out["solver"] = default_solver(model)
    return out


def run_name(owner: str) -> str:
    """The name of the run that the fit or sensitivity ``owner`` brings: ``<owner>_run``."""
    return f"{owner}_run"


def _step_counts(traj) -> dict:
    """A run's accepted and rejected steps, when it knows them."""
    counts = {k: getattr(traj, k, None) for k in ("accepted_steps", "rejected_steps")}
    return {k: int(np.max(np.asarray(v))) for k, v in counts.items() if v is not None}


class SessionWriter:
    """Adds models and results to an open session file.

    Get one from :func:`write_session` or :func:`stream_session`; every ``add_*`` returns
    the name it stored under. ``compress`` (default off) applies gzip + shuffle.
    """

    def __init__(self, file, *, compress: bool = False, command_line: str | None = None,
                 overwrite: bool = False, path=None):
        self.file = file
        self.path = os.fspath(path or file.filename)  # the file the user named
        self.compress = compress
        self.overwrite = overwrite
        self._command_line = command_line
        self._provenance = None
        self._fingerprints = {}
        self._deferred = []
        self._swmr = False
        if "difflab_schema_version" not in file.attrs:
            created, source = _provenance.now(), f"difflab {__version__}"
            _h5.set_attrs(file, {"difflab_format": FORMAT, "difflab_version": __version__,
                                 "created": created, "Conventions": "CF-1.10",
                                 "title": "DiffLab session", "source": source,
                                 "history": f"{created}: {command_line or 'created by ' + source}"})
        if int(file.attrs.get("difflab_schema_version", 0)) < SCHEMA_VERSION:
            file.attrs["difflab_schema_version"] = np.int64(SCHEMA_VERSION)  # labels of v2
        for group in ("provenance", "models", *KINDS, "app"):
            if group not in file:
                file.create_group(group, track_order=True)  # results list in creation order
        self._read_fingerprints()

    def _read_fingerprints(self) -> None:
        for key, group in self.file["models"].items():
            fingerprint = _h5.text(group.attrs.get("fingerprint"))
            if fingerprint is not None:
                self._fingerprints[fingerprint] = key

    # -- provenance and models -------------------------------------------------------

    @property
    def provenance(self) -> str:
        """The provenance id of results written through this writer (made on first use)."""
        if self._provenance is None:
            self._provenance = self.write_provenance(None, _provenance.collect(self._command_line))
        return self._provenance

    def write_provenance(self, pid: str | None, attrs: dict) -> str:
        group = self.file["provenance"]
        pid = pid or _next_name(group, "p")
        _h5.set_attrs(group.create_group(pid), attrs)
        return pid

    def add_model(self, model, *, source_path=None) -> str:
        """Store a model instance (once per distinct value); returns its key in ``/models``."""
        if isinstance(model, ModelRecord):
            return self.add_model_record(model)
        return self.add_model_record(record_of(model, source_path=source_path))

    def add_model_record(self, record: ModelRecord, *, key: str | None = None) -> str:
        path, path_note = stored_source_path(record.path, self.path)
        record = dataclasses.replace(record, path=path)  # relative to this file's folder
        fingerprint = record.fingerprint()
        if key is None and fingerprint in self._fingerprints:
            return self._fingerprints[fingerprint]
        models = self.file["models"]
        key = check_name(key or _free_name(models, record.name))
        group = models.create_group(key)
        _h5.set_attrs(group, {
            "origin": record.origin, "name": record.name, "class_name": record.class_name,
            "version": record.version, "path": record.path, "path_note": path_note,
            "sha256": record.sha256, "fingerprint": fingerprint,
            **{f"param_{k}": float(v) for k, v in record.parameters.items()},
            **{f"unit_{k}": v for k, v in record.units.items()},
            **{f"static_{k}": v for k, v in record.static.items()},
        })
        if record.source is not None:
            data, dtype = _h5.fixed_strings(record.source)
            group.create_dataset("source", data=data, dtype=dtype)
        leaves = group.create_group("leaves")
        for i, (path, leaf) in enumerate(record.leaves.items()):
            dataset = leaves.create_dataset(f"leaf_{i}", data=np.asarray(leaf))
            _h5.set_attrs(dataset, {"path": path, "key_impl": record.leaf_key_impls.get(path)})
        self._fingerprints[fingerprint] = key
        return key

    # -- results ---------------------------------------------------------------------

    def result_attrs(self, *, model, settings=None, key=None, extra=None) -> dict:
        """The attributes every result carries: model, settings, provenance, PRNG key."""
        record = model if isinstance(model, ModelRecord) else record_of(model)
        attrs = {"model": self.add_model_record(record), "provenance": self.provenance,
                 "Conventions": "CF-1.10",
                 **{f"param_{k}": v for k, v in record.parameters.items()},
                 **settings_attrs(settings, None if isinstance(model, ModelRecord) else model),
                 **_provenance.key_record(key)}
        attrs.update({k: v for k, v in (extra or {}).items() if v is not None})
        return attrs

    def write_result(self, kind: str, name: str | None, attrs: dict,
                     variables: dict[str, Variable], *, subgroups=None, unlimited=(),
                     fillvalues=None, along=None, compress=None):
        """Low level: a result group of ``kind`` (``"runs"``, ...) from attributes and variables."""
        if kind not in self.file:  # "analyses": made with the first one
            self.file.create_group(kind, track_order=True)
        parent = self.file[kind]
        name = check_name(name) if name else _next_name(parent, ALL_KINDS[kind])
        if name in parent:
            if not self.overwrite:
                raise SessionFileError(self.path, f"{ALL_KINDS[kind]} {name!r} is already "
                                       "in the file; choose another name or overwrite it")
            del parent[name]
        need = sum(getattr(v.data, "nbytes", 0) for v in variables.values())
        if need > 2**20 and not self._swmr:
            _h5.check_free_space(self.path, need, f"{ALL_KINDS[kind]} {name!r}")
        group = parent.create_group(name)
        _h5.set_attrs(group, attrs)
        compress = self.compress if compress is None else compress
        _netcdf.write_group(group, variables, compress=compress, unlimited=unlimited,
                            fillvalues=fillvalues, along=along)
        for sub, sub_vars in (subgroups or {}).items():
            _netcdf.write_group(group.create_group(sub), sub_vars, compress=compress)
        return group

    def add_run(self, traj, *, model=None, settings=None, key=None, name=None) -> str:
        """Store a :class:`difflab.Trajectory`; returns its name.

        The model and settings default to those the trajectory remembers (a run of
        ``simulate`` knows them); ``settings`` (``simulate``'s keyword arguments, ``t1``
        included) and ``key`` override them. ``y0`` defaults to the first state.
        """
        model = traj.model if model is None else model
        if model is None:
            raise ValueError("this trajectory does not know its model: pass model=")
        settings_known = isinstance(getattr(traj, "settings", None), SolveSettings)
        known = traj.settings.as_dict() if settings_known else {}
        if key is None and known.get("key") is not None:
            key = key_from_record(*known["key"])
        ts, ys = np.asarray(traj.ts), np.asarray(traj.ys)
        settings = {"t1": float(ts[-1]), "n_save": len(ts), "y0": ys[0], **known,
                    **(settings or {})}
        result = int(np.max(np.asarray(traj.result)))
        events, event_attrs = event_variables(getattr(traj, "events", None))
        attrs = self.result_attrs(model=model, settings=settings, key=key, extra={
            "result": result, "result_message": Result(result).message,
            "steps": int(np.max(np.asarray(traj.steps))), **_step_counts(traj),
            "wall_time": traj.wall_time, **event_attrs,
            "complete": 1})
        group = self.write_result("runs", name, attrs,
                                  {**run_variables(ts, ys, traj.state_names, model), **events})
        return group.name.rsplit("/", 1)[-1]

    def add_run_of(self, kind: str, owner: str, traj, **kwargs) -> str:
        """Store the run a fit or a sensitivity brings, as ``<owner>_run`` (``fit0_run``,
        ``sensitivity0_run``): the one naming rule of Python's ``save`` and the CLI's
        ``--out``. The owner (``/<kind>/<owner>``, if already stored) names it in its ``run``
        attribute; returns the run's name."""
        name = self.add_run(traj, name=run_name(owner), **kwargs)
        if owner in self.file.get(kind, {}):
            _h5.set_attrs(self.file[kind][owner], {"run": name})
        return name

    def add_sensitivity(self, *, model, parameter_names, gradient=None, dy_dp=None,
                        time=None, state_names=None, method=None, objective=None,
                        value=None, run=None, settings=None, key=None, name=None) -> str:
        """Store derivatives by ``parameter_names``: ``gradient`` (P,) and/or ``dy_dp`` (T, S, P)."""
        if gradient is None and dy_dp is None:
            raise ValueError("a sensitivity needs gradient= or dy_dp=")
        variables = {"parameter": Variable(("parameter",), list(parameter_names),
                                           {"long_name": "parameter"})}
        if gradient is not None:
            variables["gradient"] = Variable(("parameter",), np.asarray(gradient, dtype=np.float64),
                                             {"long_name": f"d {objective or 'objective'} / d parameter"})
        if dy_dp is not None:
            if time is None or state_names is None:
                raise ValueError("dy_dp needs time= and state_names=")
            variables.update(time_state(np.asarray(time), state_names, model))
            variables["dy_dp"] = Variable(("time", "state", "parameter"),
                                          np.asarray(dy_dp, dtype=np.float64),
                                          _netcdf.derivative_attrs(
                                              model, state_names, parameter_names,
                                              "d state / d parameter"))
        attrs = self.result_attrs(model=model, settings=settings, key=key, extra={
            "method": method, "objective": objective,
            "value": None if value is None else float(value), "run": run, "complete": 1})
        group = self.write_result("sensitivities", name, attrs, variables)
        return group.name.rsplit("/", 1)[-1]

    def add_analysis(self, result, *, name=None) -> str:
        """Store an analysis result (a :class:`difflab.Equilibria`,
        :class:`difflab.Continuation`, :class:`difflab.LyapunovSpectrum`, ...) under
        ``/analyses``, with its model; returns its name."""
        if _analyses.format_of(result) is None:
            raise TypeError(f"{type(result).__name__} is not an analysis result DiffLab stores")
        return _analyses.write(self, result, name)

    def remove(self, kind: str, name: str) -> None:
        """Delete the result ``name`` of ``kind`` (``"runs"``, ...); ``KeyError`` if absent."""
        del self.file[kind][name]

    def set_app(self, *, plot_layout=None, settings=None) -> None:
        """Store the app's plot layout and settings (JSON-serialisable values)."""
        import json

        app = self.file.require_group("app")
        for attr, value in (("plot_layout", plot_layout), ("settings", settings)):
            if value is not None:
                _h5.set_attrs(app, {attr: value if isinstance(value, str) else json.dumps(value)})

    # -- streamed results -----------------------------------------------------------

    def new_run(self, **kwargs):
        """A :class:`RunWriter` appending a streamed run chunk by chunk."""
        return RunWriter.create(self, **kwargs)

    def new_sweep(self, **kwargs):
        """A :class:`SweepWriter`: a sweep's datasets created full size, written per chunk."""
        return SweepWriter.create(self, **kwargs)

    def sweep_writer(self, name: str):
        """The :class:`SweepWriter` of an existing sweep, to resume it."""
        return SweepWriter.reopen(self, name)

    def new_fit(self, **kwargs):
        """A :class:`FitWriter` appending optimizer steps as they come."""
        return FitWriter.create(self, **kwargs)

    def add_fit(self, *, loss, parameters, fitted_model=None, info=None, **kwargs) -> str:
        """Store a whole fit: ``loss`` (N,), ``parameters`` (N, P) after each step."""
        writer = self.new_fit(**kwargs)
        writer.append(loss, parameters)
        writer.finish(fitted_model=fitted_model, **(info or {}))
        return writer.name

    def start_swmr(self) -> None:
        """From here on, readers may open the file while it is written (no new groups)."""
        self.file.flush()
        self.file.swmr_mode = True
        self._swmr = True
        _h5.mark_closed_on_disk(self.file.filename)

    def later(self, path: str, attrs_of) -> None:
        """Set ``attrs_of(writer, group)`` on the group at ``path`` now, or at close under SWMR.

        SWMR allows no new attributes or groups while writing, so end-of-result records
        (``complete``, a fitted model) wait until the writer closes.
        """
        if self._swmr:
            self._deferred.append((path, attrs_of))
        else:
            _h5.set_attrs(self.file[path], attrs_of(self, self.file[path]))

    def set_attrs_later(self, path: str, attrs: dict) -> None:
        """Attributes to set on ``path`` (when the writer closes, under SWMR)."""
        self.later(path, lambda writer, group: attrs)

    def flush(self) -> None:
        """Flush; under SWMR, leave the file on disk openable as it is (``mark_closed_on_disk``)."""
        self.file.flush()
        if self._swmr:
            _h5.mark_closed_on_disk(self.file.filename)

    def close(self) -> None:
        """Close the file, then reopen it to make the records SWMR held back."""
        filename = self.file.filename
        self.file.close()
        if not self._deferred:
            return
        self.file, self._swmr = _h5.create_file(filename, "r+"), False
        try:
            for path, attrs_of in self._deferred:
                _h5.set_attrs(self.file[path], attrs_of(self, self.file[path]))
        finally:
            self._deferred = []
            self.file.close()


def _next_name(group, prefix: str) -> str:
    i = len(group)
    while f"{prefix}{i}" in group:
        i += 1
    return f"{prefix}{i}"


def _free_name(group, base: str) -> str:
    base = re.sub(r"[^A-Za-z0-9_.\-]", "_", base)[:56] or "model"
    if not base[0].isalpha() and base[0] != "_":
        base = "m_" + base
    if base not in group:
        return base
    i = 1
    while f"{base}_{i}" in group:
        i += 1
    return f"{base}_{i}"


@contextlib.contextmanager
def write_session(path, *, overwrite: bool = False, compress: bool = False,
                  command_line: str | None = None, base=None):
    """Add to a session file atomically: yields a :class:`SessionWriter` on a copy of it.

    Everything already in ``path`` is kept, bit for bit; the writer adds results and
    models (a name already there is an error unless ``overwrite=True``) and removes only
    what it is told to. On success the copy is fsynced and replaces ``path``; if the
    block raises (or the process dies) ``path`` is left as it was. A file that is not a
    DiffLab session is replaced only with ``overwrite=True``. ``base`` (Save As): start
    from a copy of that session file instead, replacing whatever ``path`` held. The
    one-writer lock (:func:`writing`) is held throughout.
    """
    kept = f"{os.fspath(path)} is as it was"
    with out_of_space(path, kept, hold_stderr=True), writing(path), \
            _h5.atomic_file(real_path(path)) as tmp:  # through a link: the file it names
        start = real_path(path) if base is None else base
        keep = os.path.exists(start) and _is_session(start, overwrite and base is None)
        if keep:
            _h5.check_free_space(path, os.path.getsize(start) + 2**20,
                                 f"adding to {os.fspath(start)} (it is copied first)")
            shutil.copyfile(start, tmp)
        with _h5.create_file(tmp, "a" if keep else "w") as f:
            if keep and base is not None:
                _rebase_model_paths(f, base, path)
            yield SessionWriter(f, compress=compress, command_line=command_line,
                                overwrite=overwrite, path=path)


def _rebase_model_paths(file, old_session, new_session) -> None:
    """Model files' ``path`` of a session copied from ``old_session`` made relative to
    ``new_session``'s folder, so they name the same files."""
    for group in file.get("models", {}).values():
        stored = _h5.text(group.attrs.get("path"))
        full = resolved_source_path(stored, old_session)
        path, note = stored_source_path(full, new_session)
        if path == stored:
            continue
        _h5.set_attrs(group, {"path": path, "path_note": note})
        if note is None and "path_note" in group.attrs:
            del group.attrs["path_note"]


@contextlib.contextmanager
def out_of_space(path, kept: str, hold_stderr: bool = False):
    """A full disk (HDF5 says so in many ways) as one :class:`OSError` (``ENOSPC``)
    saying what became of ``path`` (``kept``)."""
    failed = False
    with _h5.quiet_failed_closes(hold_stderr):
        try:
            yield
        except _h5.DiskFull:
            raise
        except Exception as error:
            if not _h5.disk_full(error):
                raise
            failed = True  # raised below, once HDF5's objects of the failed write are gone
        if failed:
            _h5.collect_failed_write()
    if failed:
        raise _h5.no_space(path, kept)


def _is_session(path, overwrite: bool) -> bool:
    """True for a session file; ``False`` for another file to overwrite, else an error."""
    try:
        open_session(path)
        return True
    except SessionFileError as error:
        if overwrite:
            return False
        if _made_by_difflab(path):  # earlier work: never offer to delete it
            raise SessionFileError(path, f"{error.problem}; it is left as it is: write to "
                                         "another file") from None
        raise SessionFileError(path, f"{error.problem}; it is not overwritten unless you "
                                     "ask to (overwrite=True, --overwrite)") from None


def _made_by_difflab(path) -> bool:
    """True for an HDF5 file with DiffLab's format attribute (read without validating)."""
    try:
        with contextlib.closing(_h5.open_for_reading(path)) as f:
            return "difflab_schema_version" in f.attrs or "difflab_format" in f.attrs
    except Exception:  # damaged beyond reading its root: not known to be a session
        return False


@contextlib.contextmanager
def stream_session(path, *, overwrite: bool = False, compress: bool = False,
                   command_line: str | None = None, recover: bool = False):
    """Write into ``path`` in place, for results streamed chunk by chunk.

    Creates the file if absent; an existing file must be a session (see
    :func:`write_session` for ``overwrite``). ``recover=True`` first clears the "open
    for writing" flags a crashed writer left (to resume its sweep). Call
    ``start_swmr()`` on the writer once its groups exist, to let readers follow.
    """
    kept = "what was written before is kept (free some space, then write again or resume)"
    with out_of_space(path, kept), writing(path):
        exists = os.path.exists(path)
        if exists and recover:
            _h5.recover(path)
        keep = exists and _is_session(path, overwrite)
        if path_key(path) in _streaming:
            raise SessionFileError(path, "is being written by another writer of this process")
        f = _open_in_place(path, "a" if keep else "w")
        _streaming.add(path_key(path))
        writer = SessionWriter(f, compress=compress, command_line=command_line,
                               overwrite=overwrite)
        try:
            yield writer
        finally:
            _streaming.discard(path_key(path))
            writer.close()


_streaming: set[str] = set()  # files this process writes in place


def path_key(path) -> str:
    return os.path.realpath(os.fspath(path))


def _open_in_place(path, mode: str, patience: float = 10.0):
    """Open ``path`` to write in place, waiting out readers that hold HDF5's file lock."""
    deadline = time.monotonic() + patience
    while True:
        try:
            return _h5.create_file(path, mode)
        except BlockingIOError:  # a reader has it open (not in SWMR mode) for a moment
            if time.monotonic() > deadline:
                raise SessionFileError(path, "is held open by another program") from None
            time.sleep(0.05)
        except OSError as error:
            if "already open" not in str(error):
                raise
            raise SessionFileError(path, "left open for writing by a writer that stopped: "
                                         "pass recover=True to resume it") from None
