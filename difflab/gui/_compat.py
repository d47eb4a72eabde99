"""Work-arounds for bugs of the Qt bindings DiffLab runs on.

PySide6 6.12.0's stable-ABI wheels, on Python 3.10 and 3.11, drop one reference to
``None`` on every call of a C++ method that returns ``void`` (``label.setText(...)``,
``widget.update()``, ...), and to ``True`` when one returns ``true``: they behave as if
built for Python 3.12+, where these singletons are immortal and their reference counts
are never touched. ``None``'s count falls by about 280 per slider move, and at zero
Python aborts with "Fatal Python error: none_dealloc" (here: after about 200 slider
moves). PySide6 6.11 does not do this.

:func:`guard_none_refcount` measures the leak once at start-up and, where there is one,
raises the reference counts of ``None``, ``True`` and ``False`` by 2**40, which no
session can use up; on Python 3.12 and later it does nothing. The real fix is
PySide6 != 6.12.0 on Python < 3.12.
"""

import ctypes
import sys

HEADROOM = 1 << 40
applied = False


def _leaks_none() -> bool:
    from PySide6.QtCore import QObject

    probe = QObject()
    before = sys.getrefcount(None)
    for _ in range(64):
        probe.setObjectName("probe")
    return before - sys.getrefcount(None) >= 32


def guard_none_refcount() -> bool:
    """Compensate PySide6's lost references to ``None`` where it loses them; True if it did."""
    global applied
    if applied or sys.version_info >= (3, 12) or not _leaks_none():
        return applied
    fields = [(ctypes.c_ssize_t.from_address(id(obj)), obj) for obj in (None, True, False)]
    # ob_refcnt is the first field of a PyObject; check that before writing to it
    if any(field.value != sys.getrefcount(obj) - 1 for field, obj in fields):
        return False
    for field, _ in fields:
        field.value += HEADROOM
    applied = True
    return True
