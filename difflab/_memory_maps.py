"""Compiled programs against the kernel's limit on a process's memory maps.

On Linux every program XLA compiles for the CPU maps three to five regions of memory (its
code and its data), and JAX keeps every program it has compiled. A process that compiles
tens of thousands of them (a long session in the app, a worker of the test suite) reaches
the kernel's limit (``vm.max_map_count``, 65,530 by default): the next program cannot be
mapped (``LLVM compilation error: Cannot allocate memory``) and XLA dies of a segmentation
fault loading it. :func:`relieve` drops JAX's compiled programs well before that; those
needed again are compiled again.
"""

import threading
import time

SHARE = 0.6  # of the limit, the maps in use past which the programs are dropped
EVERY_S = 10.0  # the least time between two counts (a count reads up to a few MB)
LIMIT_FILE = "/proc/sys/vm/max_map_count"
MAPS_FILE = "/proc/self/maps"

_counted = -float("inf")
_lock = threading.Lock()


def maps_in_use() -> tuple[int, int] | None:
    """``(maps of this process, the kernel's limit)``, or ``None`` where the system does
    not say (not Linux)."""
    try:
        with open(LIMIT_FILE) as f:
            limit = int(f.read())
        with open(MAPS_FILE, "rb") as f:
            used = sum(1 for _ in f)
    except (OSError, ValueError):
        return None
    return used, limit


def relieve(share: float = SHARE, every_s: float = EVERY_S) -> bool:
    """Drop JAX's compiled programs (``jax.clear_caches()``) if this process uses more than
    ``share`` of the maps it may have; counted at most once every ``every_s`` seconds,
    whichever thread asks. Whether they were dropped. Safe beside running computations:
    a program running or being compiled is kept by its caller until it returns."""
    global _counted
    with _lock:
        now = time.monotonic()
        if now - _counted < every_s:
            return False
        _counted = now
    counts = maps_in_use()
    if counts is None or counts[0] <= share * counts[1]:
        return False
    import jax

    jax.clear_caches()
    return True
