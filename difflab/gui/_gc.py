"""Python's cycle collector, run on the GUI thread only while a window is open.

A Qt object caught in a reference cycle is freed by whichever thread the collector
happens to run in. Freed on a worker thread (which allocates plenty while JAX traces),
its C++ destructor runs there: with PySide6 6.11 the worker then waits for the GIL
inside ``~QObject`` while the GUI thread, holding the GIL, waits for that object's
lock, and the app hangs. So while a window is open, automatic collection is off and a
timer on the GUI thread collects, with the automatic collector's own thresholds. The
objects alive when the first window opens (JAX, Qt, the modules: about 170,000) are
frozen out of collection, or every full collection would stall the GUI for ~100 ms.
"""

import gc

from PySide6.QtCore import QCoreApplication, QTimer

INTERVAL_MS = 250
_holders: set[int] = set()
_timer: QTimer | None = None


def hold(owner) -> None:
    """Collect on the GUI thread until every holder has called :func:`release`."""
    global _timer
    if not _holders:
        _timer = QTimer(QCoreApplication.instance())
        _timer.timeout.connect(collect)
        _timer.start(INTERVAL_MS)
        gc.disable()
        gc.collect()
        gc.freeze()
    _holders.add(id(owner))


def release(owner) -> None:
    """Give automatic collection back once the last holder lets go."""
    global _timer
    if id(owner) not in _holders:
        return
    _holders.discard(id(owner))
    if not _holders:
        _timer.stop()
        _timer.deleteLater()
        _timer = None
        gc.unfreeze()
        gc.enable()


def collect() -> None:
    """Collect the generations whose counts passed their thresholds (as ``gc`` would)."""
    counts, thresholds = gc.get_count(), gc.get_threshold()
    generation = -1
    for g in range(3):
        if counts[g] <= thresholds[g]:
            break
        generation = g
    if generation >= 0:
        gc.collect(generation)
