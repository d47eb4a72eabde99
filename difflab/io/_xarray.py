"""``to_xarray()`` of every result: its group as a session file stores it, read by xarray.

The result is written by the session writer into an HDF5 file in memory and read back
with xarray's ``h5netcdf`` engine, so ``result.to_xarray()`` equals
``xarray.open_dataset(path, group=...)`` of the saved file (variables, coordinates,
attributes) by construction. xarray and h5netcdf are imported on use.
"""

import io

from . import _h5
from ._results import add
from ._writer import SessionWriter


def _xarray():
    try:
        import h5netcdf  # noqa: F401  (the engine xarray reads the group with)
        import xarray
    except ImportError:
        raise ImportError("to_xarray() needs xarray and h5netcdf "
                          "(pip install xarray h5netcdf)") from None
    return xarray


def to_dataset(result):
    """``result`` (a Trajectory, SweepResult, FitResult, Sensitivity or analysis) as the
    ``xarray.Dataset`` of its session-file group, loaded into memory."""
    xarray = _xarray()
    buffer = io.BytesIO()
    with _h5.create_file(buffer, "w") as f:
        writer = SessionWriter(f, path="memory.h5")
        name = add(writer, result)
        kind = next(k for k in ("runs", "sweeps", "fits", "sensitivities", "analyses")
                    if k in f and name in f[k] and _owns(f[k][name], result, k))
    buffer.seek(0)
    with xarray.open_dataset(buffer, group=f"{kind}/{name}", engine="h5netcdf",
                             decode_timedelta=False) as ds:
        return ds.load()


def _owns(group, result, kind: str) -> bool:
    """Whether ``group`` is the result's own (a fit or sensitivity also stores its run)."""
    return kind != "runs" or type(result).__name__ == "Trajectory"
