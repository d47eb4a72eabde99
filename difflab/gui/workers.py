"""Worker threads: every simulation, sweep and fit runs off the GUI thread.

Workers call the Qt-free functions of ``difflab.app`` and report through signals, which
Qt delivers to the GUI thread (napari's ``_qt/qthreading.py`` pattern). They never touch
widgets or the lab; the GUI thread applies what they report.

- :class:`LiveSolver`: one long-lived thread re-solving on every parameter change. Only
  the newest request is kept, so dragging a slider never queues stale work.
- :class:`TaskWorker`: runs a task (a streamed run, a sweep, a fit) that emits progress
  items; ``stop()`` takes effect at the task's next check.
"""

import os
import sys
import threading
import traceback
from collections.abc import Callable, Iterator

from PySide6.QtCore import QThread, Signal

from ..app.runs import SolveRequest, solve

BACKGROUND_NICE = 10


def yield_cpu_to_gui() -> None:
    """Lower the OS priority of XLA's compute threads below the GUI thread's (Linux).

    A sweep or a fit runs in XLA's thread pool on every core; at equal priority those
    threads take the CPU from the GUI thread and the event loop stutters. At nice 10 they
    still use every idle cycle, but the GUI thread runs first when it has work.

    Threads that run Python keep their priority: the GUI thread and the workers
    (registered with :func:`keep_priority`). A worker holds the GIL while JAX traces and
    lowers (MLIR calls hold it for tens of milliseconds); demoted, it would be starved by
    a busy machine while holding it, and the GUI thread would wait for it (a priority
    inversion). Done once, when the first background task starts; unprivileged processes
    cannot raise a priority again.
    """
    global _reniced
    if _reniced or not sys.platform.startswith("linux") or not hasattr(os, "setpriority"):
        return
    _reniced = True
    keep = {threading.main_thread().native_id, *_python_threads}
    try:
        tids = [int(t) for t in os.listdir("/proc/self/task")]
    except OSError:
        return
    for tid in tids:
        if tid not in keep:
            try:
                os.setpriority(os.PRIO_PROCESS, tid, max(os.getpriority(os.PRIO_PROCESS, tid),
                                                         BACKGROUND_NICE))
            except OSError:
                pass


def keep_priority() -> None:
    """Register the calling thread as one that runs Python: it keeps its OS priority."""
    _python_threads.add(threading.get_native_id())


_reniced = False
_python_threads: set[int] = set()


def error_text(error: BaseException) -> str:
    """An exception in words: its message, or its type where the message is empty."""
    text = str(error).strip()
    return text if text else type(error).__name__


class LiveSolver(QThread):
    """Solves the newest :class:`SolveRequest` with :func:`difflab.app.runs.solve`.

    Signals: ``solved(request, run)``, ``failed(request, message)``, ``busy(bool)``.
    """

    solved = Signal(object, object)
    failed = Signal(object, str)
    busy = Signal(bool)

    def __init__(self, parent=None, solve_fn: Callable = solve):
        super().__init__(parent)
        self.setObjectName("LiveSolver")
        self._solve = solve_fn
        self._cond = threading.Condition()
        self._pending: SolveRequest | None = None
        self._quit = False

    def submit(self, request: SolveRequest) -> None:
        """Solve ``request`` next, replacing any request not started yet."""
        with self._cond:
            self._pending = request
            self._cond.notify()
        if not self.isRunning():
            self.start()

    def run(self) -> None:
        keep_priority()
        while True:
            with self._cond:
                while self._pending is None and not self._quit:
                    self._cond.wait()
                if self._quit:
                    return
                request, self._pending = self._pending, None
            self.busy.emit(True)
            try:
                run = self._solve(request)
            except Exception as error:  # noqa: BLE001 (reported to the user, in words)
                self.failed.emit(request, error_text(error))
            else:
                self.solved.emit(request, run)
            finally:
                with self._cond:
                    idle = self._pending is None
                if idle:
                    self.busy.emit(False)

    def shutdown(self, timeout_ms: int = 10_000) -> None:
        with self._cond:
            self._quit = True
            self._cond.notify()
        self.wait(timeout_ms)


class TaskWorker(QThread):
    """Runs ``task(emit, stop)`` on its own thread: a streamed run, a sweep, a fit.

    The task calls ``emit(item)`` for each piece of progress (delivered as the ``item``
    signal) and polls ``stop()`` between pieces. Signals: ``item(object)``,
    ``failed(str)`` with the error in words (the traceback is kept in ``traceback``),
    ``done(bool, object)`` at the end: whether the task ran to its end (not stopped, not
    failed) and what it returned.
    """

    item = Signal(object)
    failed = Signal(str)
    done = Signal(bool, object)

    def __init__(self, task: Callable[[Callable, Callable[[], bool]], object],
                 name: str = "worker", parent=None):
        super().__init__(parent)
        self.setObjectName(name)
        self._task = task
        self._stop = threading.Event()
        self.traceback = ""

    def stop(self) -> None:
        """Ask the task to end at its next ``stop()`` check."""
        self._stop.set()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def run(self) -> None:
        value, ok = None, False
        keep_priority()
        yield_cpu_to_gui()
        try:
            value = self._task(self.item.emit, self._stop.is_set)
            ok = not self._stop.is_set()
        except Exception as error:  # noqa: BLE001 (reported to the user, in words)
            self.traceback = traceback.format_exc()
            self.failed.emit(error_text(error))
        self.done.emit(ok, value)


def iterate(items: Iterator, emit: Callable, stop: Callable[[], bool]):
    """Emit every item of an iterator until ``stop()``; returns the last item."""
    last = None
    try:
        for last in items:
            emit(last)
            if stop():
                break
    finally:
        close = getattr(items, "close", None)
        if close is not None:
            close()
    return last
