"""Worker threads: every simulation, sweep and fit runs off the GUI thread.

Workers call the Qt-free functions of ``difflab.app`` and report through signals, which
Qt delivers to the GUI thread (napari's ``_qt/qthreading.py`` pattern). They never touch
widgets or the lab; the GUI thread applies what they report.

- :class:`LiveSolver`: one long-lived thread re-solving on every parameter change. Only
  the newest request is kept, so dragging a slider never queues stale work.
- :class:`TaskWorker`: runs a task (a streamed run, a sweep, a fit) that emits progress
  items; ``stop()`` takes effect at the task's next check.
"""

import contextlib
import os
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator

import shiboken6
from PySide6.QtCore import QThread, Signal

from .. import _memory_maps
from .._threads import own
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
_running: set = set()  # task workers started and not yet ended (see TaskWorker.start)
_python_threads: set[int] = set()


def owned(thread: QThread) -> None:
    """Have ``thread`` (with a ``stop()``) stopped and joined before the interpreter exits,
    should the window not have ended it (``difflab._threads``): a Qt thread left running
    Python then would abort the exit."""
    own(thread, QThread.isRunning, lambda t, seconds: t.wait(max(1, int(seconds * 1000))),
        lambda t: t.stop())


def while_alive(owner, slot: Callable) -> Callable:
    """``slot``, called only while the Qt object ``owner`` exists: a task's signals may
    arrive after its window was closed and deleted, and a lambda is not disconnected then."""
    return lambda *args: slot(*args) if shiboken6.isValid(owner) else None


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
        owned(self)
        self._solve = solve_fn
        self._cond = threading.Condition()
        self._pending: SolveRequest | None = None
        self._quit = False
        self.solving: tuple[SolveRequest, float] | None = None  # the request, since when

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
            self.solving = (request, time.monotonic())
            try:
                run = self._solve(request)
            except Exception as error:  # noqa: BLE001 (reported to the user, in words)
                self.failed.emit(request, error_text(error))
            else:
                self.solved.emit(request, run)
            finally:
                self.solving = None
                with self._cond:
                    idle = self._pending is None
                if idle:
                    self.busy.emit(False)

    def stop(self) -> None:
        """Let the thread end once the solve under way, if any, is done."""
        with self._cond:
            self._quit = True
            self._cond.notify()

    def shutdown(self, timeout_ms: int = 10_000) -> None:
        self.stop()
        self.wait(timeout_ms)


class TaskWorker(QThread):
    """Runs ``task(emit, stop)`` on its own thread: a streamed run, a sweep, a fit.

    The task calls ``emit(item)`` for each piece of progress (delivered as the ``item``
    signal) and polls ``stop()`` between pieces. Signals: ``item(object)``,
    ``failed(str)`` with the error in words (the traceback is kept in ``traceback``),
    ``done(bool, object)`` at the end: whether the task ran to its end (not stopped, not
    failed) and what it returned.

    A task whose computation does not come back is never waited for: :meth:`abandon`
    ends it for its owners at once (``done(False, None)`` with ``abandoned`` set) and
    whatever it reports later is dropped; ``idle_seconds()`` says how long it has been
    silent, ``label`` what it is in words ("sweep of lorenz").
    """

    item = Signal(object)
    failed = Signal(str)
    done = Signal(bool, object)

    def __init__(self, task: Callable[[Callable, Callable[[], bool]], object],
                 name: str = "worker", parent=None):
        super().__init__(parent)
        self.setObjectName(name)
        owned(self)
        self._task = task
        self._stop = threading.Event()
        self.traceback = ""
        self.error: Exception | None = None  # what the task raised
        self.label = name
        self.abandoned = False
        self._ended = False
        self._end_lock = threading.Lock()
        self._beat = time.monotonic()
        self.item.connect(self._heard)

    def start(self) -> None:
        """Run the task. From now until it ends the thread has no Qt parent and is held
        here: a running QThread deleted with its owner (a window closed during a slow
        compile) would abort the process."""
        self.setParent(None)
        _running.add(self)
        self.finished.connect(self._release)  # queued to the GUI thread, never released in the thread
        super().start()

    def _release(self) -> None:
        _running.discard(self)

    def stop(self) -> None:
        """Ask the task to end at its next ``stop()`` check."""
        self._stop.set()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def idle_seconds(self) -> float:
        """Seconds since the task started or last reported progress."""
        return time.monotonic() - self._beat

    def _heard(self, _item) -> None:
        self._beat = time.monotonic()

    def abandon(self) -> bool:
        """Stop waiting for a task that has not ended: its owners get ``done(False, None)``
        now (``abandoned`` is then true) and nothing it reports afterwards. False if the
        task had already ended."""
        self._stop.set()
        with self._end_lock:
            if self._ended:
                return False
            self.abandoned = True
        for signal in (self.item, self.failed):
            with contextlib.suppress(RuntimeError):
                signal.disconnect()
        self.done.emit(False, None)
        return True

    def run(self) -> None:
        value, ok = None, False
        keep_priority()
        yield_cpu_to_gui()
        _memory_maps.relieve()  # a long session's programs, before the kernel's limit
        self._beat = time.monotonic()
        try:
            value = self._task(self._emit, self._stop.is_set)
            ok = not self._stop.is_set()
        except Exception as error:  # noqa: BLE001 (reported to the user, in words)
            self.traceback, self.error = traceback.format_exc(), error
            if not self.abandoned:
                self.failed.emit(error_text(error))
        with self._end_lock:
            self._ended = True
            if self.abandoned:
                return
        self.done.emit(ok, value)

    def _emit(self, item) -> None:
        if not self.abandoned:
            self.item.emit(item)


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
