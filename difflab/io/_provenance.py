"""Provenance: what produced a result (versions, devices, precision, time, command line)."""

import datetime
import functools
import importlib.metadata
import os
import platform
import shlex
import sys

import numpy as np

from .._version import __version__
from ..solvers import key_to_record

PACKAGES = ("jax", "jaxlib", "diffrax", "equinox", "optimistix", "optax", "h5py", "numpy")


@functools.lru_cache(maxsize=None)
def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def now() -> str:
    """The current UTC time, ISO 8601 to the second."""
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def typed_command(argv) -> str:
    """A command line as its user typed it: the program by its name, not by the path it
    was found at (``difflab run ...``, ``python -m difflab run ...``), so no folder of
    the machine that ran it is kept in the file."""
    program = os.path.basename(argv[0]) if argv and argv[0] else "python"
    if program == "__main__.py":
        program = f"python -m {os.path.basename(os.path.dirname(argv[0]))}"
    return " ".join([program, shlex.join(argv[1:])]) if len(argv) > 1 else program


def collect(command_line: str | None = None) -> dict:
    """The provenance of results written by this process, as attributes.

    ``command_line`` defaults to this process's ``sys.argv``, as typed
    (:func:`typed_command`).
    """
    import jax

    from ._h5 import h5py

    devices = jax.devices()
    record = {
        "time": now(),
        "command_line": command_line if command_line is not None else typed_command(sys.argv),
        "difflab_version": __version__,
        **{f"{name}_version": _version(name) for name in PACKAGES},
        "hdf5_version": h5py().version.hdf5_version,
        "python_version": platform.python_version(),
        "platform": platform.platform(),
        "backend": jax.default_backend(),
        "device_count": len(devices),
        "devices": [f"{d.platform}:{d.id} {d.device_kind}" for d in devices],
        "precision": "float64" if jax.config.jax_enable_x64 else "float32",
        "process_count": jax.process_count(),
    }
    return record


def key_record(key) -> dict:
    """A ``jax.random`` key as attributes: ``key_data`` (uint32) and ``key_impl``.

    Accepts new-style typed keys and legacy ``uint32`` keys; ``None`` gives ``{}``.
    """
    if key is None:
        return {}
    impl, data = key_to_record(key)
    return {"key_data": np.asarray(data, dtype=np.uint32), "key_impl": impl}
