"""What a session holds, as plain data: ``difflab open`` prints it, ``--json`` dumps it."""

import numpy as np

from . import _fields


def _plain(value):
    """JSON-ready: arrays as lists, NaN and infinities as ``None``."""
    if isinstance(value, np.ndarray):
        return [_plain(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


def _result(result) -> dict:
    dims = {}
    for var in result.variables.values():
        dims.update(zip(var.dims, var.shape))
    entry = {"name": result.name, "model": result.attrs.get("model"),
             "dims": dims, "complete": result.complete,
             "settings": {k: _plain(v) for k, v in result.settings.items()}}
    for key in ("analysis", "result", "result_message", "steps", "n_points", "chunk_size",
                "method", "objective", "value", "optimizer", "fitted_model", "seed", "param",
                "start", "stop", "status", "transient"):
        if key in result.attrs:
            entry[key] = _plain(result.attrs[key])
    if "parameter" in result.variables:
        entry["parameters"] = list(result.variables["parameter"].data)
    if _fields.is_field_run(result.attrs):
        entry.update(_fields.summary_entry(result))  # "fields" and "grid"
    if result.kind == "sweeps" and "chunk_done" in result.variables:
        done = np.asarray(result.variables["chunk_done"].data)
        entry["chunks_done"] = int(np.sum(done == 1))
        entry["chunks"] = int(done.size)
    elif result.kind == "sweeps" and "result" in result.variables:  # a field sweep's points
        codes = np.asarray(result.variables["result"].data)
        entry.update(points=int(codes.size), failed=int(np.sum(codes > 0)),
                     not_run=int(np.sum(codes < 0)))
    return entry


def summary(session) -> dict:
    """A JSON-ready description of ``session``: models, results, provenance, app state."""
    return {
        "path": session.path,
        "schema_version": session.schema_version,
        "difflab_version": session.attrs.get("difflab_version"),
        "created": session.attrs.get("created"),
        "models": {key: {"origin": m.origin, "name": m.name, "version": m.version,
                         "parameters": {k: _plain(v) for k, v in m.parameters.items()},
                         "path": m.path, "sha256": m.sha256}
                   for key, m in session.models.items()},
        **{kind: [_result(r) for r in session.stored(kind)]
           for kind in ("runs", "sweeps", "fits", "sensitivities", "analyses")},
        "provenance": {pid: {k: _plain(v) for k, v in p.items()}
                       for pid, p in session.provenance.items()},
        "app": sorted(session.app),
    }
