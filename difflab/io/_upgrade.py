"""Older schema versions, read into the current one in memory (saving writes the current one).

Each older version gets a reader here; ``docs/hdf5-schema.md`` lists what changed.

Version 0 is the single-run file of DiffLab 0.1's ``write_run_h5``: root attribute
``difflab_version``, ``/runs/run0`` with ``time``, ``state`` (fixed-length bytes), ``y`` and
attributes ``model``, ``param.<p>``, the settings and ``result``; no models group.
"""

from . import _h5
from ._models import ModelRecord
from ._schema import SPECS
from ._session import Session, Stored

_RESULT_WORDS = {0: "success", 1: "max_steps reached", 2: "diverged",
                 3: "step size too small", 4: "solver failed"}


def is_version_0(f, attrs: dict) -> bool:
    """True for a file written by DiffLab 0.1's single-run writer."""
    return "difflab_version" in attrs and "runs" in f and "models" not in f


def _model_key(models: dict, record: ModelRecord) -> str:
    for key, other in models.items():
        if (other.name, other.parameters) == (record.name, record.parameters):
            return key
    key, i = record.name, 1
    while key in models:
        key, i = f"{record.name}_{i}", i + 1
    return key


def _is_builtin(name: str) -> bool:
    from ..models import available

    return name in available()


def read_version_0(reader, f) -> Session:
    """A version-0 file as a current :class:`Session`: a model record made for each run."""
    root = reader.attrs(f, "")
    version = reader.typed(root, "difflab_version", str, "root")
    session = Session(reader.path, attrs={"difflab_version": version}, schema_version=0,
                      provenance={"p0": {"difflab_version": version}}, models={}, app={})
    runs = []
    for name, group in reader.members(reader.group(f, "runs", ""), "/runs").items():
        where = f"/runs/{name}"
        attrs = reader.attrs(group, where)
        model = reader.typed(attrs, "model", str, where)
        params = {p: float(reader.typed(attrs, k, (int, float), where))
                  for p, k in _h5.prefixed(attrs, "param").items()}
        record = ModelRecord(key="", origin="builtin" if _is_builtin(model) else "user",
                             name=model, class_name="", version=version, parameters=params)
        record.key = _model_key(session.models, record)
        session.models.setdefault(record.key, record)
        result = attrs.get("result", 0)
        attrs.update(model=record.key, provenance="p0", complete=1, Conventions="CF-1.10",
                     result_message=_RESULT_WORDS.get(result, f"result code {result}"))
        variables = reader.netcdf(group, SPECS["runs"], where)
        runs.append(Stored(session, "runs", name, attrs, variables))
    session._set_results({"runs": runs})
    return session
