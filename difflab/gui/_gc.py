"""Python's cycle collector, run on the GUI thread only, for as long as the application lives.

A Qt object caught in a reference cycle is freed by whichever thread the collector
happens to run in. Freed on a worker thread (which allocates plenty while JAX traces),
its C++ destructor runs there: with PySide6 6.11 the worker may wait for the GIL inside
``~QObject`` while the GUI thread, holding the GIL, waits for that object's lock (the app
hangs), or the process dies of a segmentation fault. Such cycles outlive the windows
that made them (a closed window waits in one for the collector), so from the first
window on, automatic collection is off and a timer on the GUI thread collects, with the
automatic collector's own thresholds, until the application is destroyed. The objects
alive when the first window opens (JAX, Qt, the modules: about 170,000) are frozen out
of collection, or every full collection would stall the GUI for ~100 ms. Later ones are
scanned by a full collection only once they have grown by a quarter since the last, as
the automatic collector does: JAX's caches grow by a million objects as a session
compiles a few dozen models, and a full collection of a million objects takes 60 ms on an
idle machine, more on a busy one.

A script that goes on computing after its windows closed, without Qt's event loop,
collects its cycles itself (``gc.collect()`` on the main thread).
"""

import gc

from PySide6.QtCore import QCoreApplication, QTimer

INTERVAL_MS = 250
_timer: QTimer | None = None
#: the objects that survived the last full collection (frozen ones aside), and (at most)
#: those moved into the oldest generation since: CPython's ``long_lived_total`` and
#: ``long_lived_pending``
_long_lived = {"total": 0, "pending": 0}


def take_over() -> None:
    """Collect on the GUI thread from now on, until the application is destroyed (once
    per application: later calls do nothing)."""
    global _timer
    app = QCoreApplication.instance()
    if _timer is not None or app is None:
        return
    _timer = QTimer(app)
    _timer.timeout.connect(collect)
    _timer.start(INTERVAL_MS)
    automatic = gc.isenabled()
    gc.disable()
    gc.collect()
    gc.freeze()
    _long_lived.update(total=0, pending=0)
    app.destroyed.connect(lambda: _give_back(automatic))


def _give_back(automatic: bool) -> None:
    """The application is gone (and its timer with it): collection is as it was before."""
    global _timer
    _timer = None
    gc.unfreeze()
    if automatic:
        gc.enable()


def collect() -> None:
    """Collect the generations whose counts passed their thresholds, as ``gc`` would: the
    oldest one only once the objects moved into it since it was last collected are a
    quarter of those it kept then (the rest of the time, the middle one)."""
    counts, thresholds = gc.get_count(), gc.get_threshold()
    generation = -1
    for g in range(3):
        if counts[g] <= thresholds[g]:
            break
        generation = g
    if generation == 2 and _long_lived["pending"] < _long_lived["total"] / 4:
        generation = 1
    if generation == 1:  # the survivors of the two younger generations move up
        _long_lived["pending"] += len(gc.get_objects(0)) + len(gc.get_objects(1))
    if generation >= 0:
        gc.collect(generation)
    if generation == 2:
        _long_lived.update(total=len(gc.get_objects(2)), pending=0)
