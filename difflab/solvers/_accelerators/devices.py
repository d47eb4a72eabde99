"""What JAX computes on: the platform, every device with its memory, processes, precision."""

import os

import jax

from ... import _config
from .._resources import available_memory


def _device_memory(device) -> dict | None:
    """A device's own memory in bytes (GPUs and TPUs report it; CPUs do not)."""
    try:
        stats = device.memory_stats()
    except Exception:  # a backend without memory statistics
        return None
    if not stats or "bytes_limit" not in stats:
        return None
    return {"limit": int(stats["bytes_limit"]), "in_use": int(stats.get("bytes_in_use", 0)),
            "peak": int(stats.get("peak_bytes_in_use", 0))}


def _host_memory() -> dict:
    try:
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        total = None
    return {"total": total, "available": available_memory()}


def describe_devices() -> dict:
    """The devices JAX uses, as a plain dict (what ``difflab devices --json`` prints).

    ``platform`` (``cpu``, ``gpu``, ``tpu``), ``precision``, ``process_index`` and
    ``process_count``, ``device_count`` (all processes) and ``devices``: this process's
    devices, each with ``id``, ``platform``, ``kind`` and ``memory`` (``limit``,
    ``in_use`` and ``peak`` bytes; ``None`` where the device does not report it, as a
    CPU's does not: ``host_memory`` gives the machine's ``total`` and ``available``).
    """
    devices = [{"id": d.id, "platform": d.platform, "kind": d.device_kind,
                "memory": _device_memory(d)} for d in jax.local_devices()]
    return {
        "platform": jax.default_backend(),
        "precision": _config.precision(),
        "process_index": jax.process_index(),
        "process_count": jax.process_count(),
        "device_count": jax.device_count(),
        "devices": devices,
        "host_memory": _host_memory(),
    }
