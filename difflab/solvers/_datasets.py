"""``to_xarray()``: a result as the ``xarray.Dataset`` its group in a session file reads as.

The layout is the session file's (``docs/hdf5-schema.md``), written by ``difflab.io`` (a
layer above), which registers its maker here when imported, as the first use of any of
``difflab``'s names does. So ``result.to_xarray()`` has the variables, coordinates and
attributes ``xarray.open_dataset(path, group=...)`` reads from the saved file, and
``result.to_xarray().to_netcdf(path)`` writes a self-describing file.
"""

_maker = None


def set_dataset_maker(maker) -> None:
    """Make ``to_xarray()`` build its Dataset with ``maker(result)``."""
    global _maker
    _maker = maker


def to_dataset(result):
    """``result`` as an ``xarray.Dataset`` (the layout of its session-file group)."""
    if _maker is None:
        raise ImportError("to_xarray() needs difflab.io: import difflab")
    return _maker(result)

