"""The window stays in control of its tasks, whatever a computation does.

A sweep, fit or run whose computation never comes back (a solver wedged inside XLA, a
model that waits for ever) must not take the window with it:

- Stop asks every task to end at its next check and, if one has not ended after
  :data:`STOP_GRACE_MS`, lets go of it: its owner gets control back at once (the panel can
  run again) and the thread is kept, unwaited, until it ends in the background;
- a task, or the live solve, that has reported nothing for :data:`STUCK_AFTER_S` is named
  in the log and the status bar ("sweep of lorenz: no result for 60 s; ...");
- a new live request finds a fresh live solver when the one it had is stuck on a solve,
  so the live view never queues behind a computation that does not come back.

Nothing here waits on a worker: every decision is taken from a timer on the GUI thread.
"""

import contextlib
import time

from PySide6.QtCore import QObject, QTimer

from .workers import LiveSolver, TaskWorker

STOP_GRACE_MS = 500  # Stop lets go of a task that has not ended by then
#: threads let go of, held here (not by a window, which may be deleted first) until they
#: end: a running QThread that is deleted aborts the process; the exit joins them
_let_go_of: list = []
STUCK_AFTER_S = 60.0  # a task silent this long is named as stuck
CHECK_MS = 1000


class TaskWatch(QObject):
    """Stops, lets go of and names the stuck tasks of ``window`` (its ``workers`` by
    name, its ``live_solver``, its ``lab`` for the log and ``status`` label)."""

    def __init__(self, window):
        super().__init__(window)
        self.window = window
        self._told: set[int] = set()
        self.timer = QTimer(self)
        self.timer.timeout.connect(self.check)
        self.timer.start(CHECK_MS)

    # -- stopping ----------------------------------------------------------------------

    def stop(self, names=None) -> None:
        """Ask the tasks ``names`` (all by default) to end; let go of those still running
        after :data:`STOP_GRACE_MS`. Returns at once."""
        workers = [(n, w) for n, w in self.window.workers.items() if names is None or n in names]
        for _, worker in workers:
            worker.stop()
        if workers:
            QTimer.singleShot(STOP_GRACE_MS, lambda: self._let_go(workers))

    def stop_now(self, worker: TaskWorker, wait_ms: int = STOP_GRACE_MS) -> None:
        """Stop ``worker``, waiting at most ``wait_ms`` for it before letting go of it."""
        worker.stop()
        if worker.isRunning() and not worker.wait(wait_ms):
            self._let_go([("", worker)])

    def _let_go(self, workers) -> None:
        for _, worker in workers:
            with contextlib.suppress(RuntimeError):  # a deleted worker has ended
                if worker.isRunning() and worker.abandon():
                    self.window.lab.log(f"{worker.label}: stopped; its computation has not "
                                        "come back and goes on in the background", "warning")

    @staticmethod
    def keep(thread) -> None:
        """Hold a thread let go of until it ends, whether or not its window still exists
        (a running QThread must not be deleted)."""
        if thread in _let_go_of:
            return
        _let_go_of.append(thread)
        thread.setParent(None)
        thread.finished.connect(lambda: _ended(thread))
        if not thread.isRunning():
            _ended(thread)

    @property
    def abandoned(self) -> list:
        """The threads let go of that are still running (of every window)."""
        return list(_let_go_of)

    # -- the live solver -----------------------------------------------------------------

    def live_solver(self) -> LiveSolver:
        """The window's live solver, replaced by a fresh one if it is stuck on a solve."""
        solver = self.window.live_solver
        solving = solver.solving
        if solving is None or time.monotonic() - solving[1] < STUCK_AFTER_S:
            return solver
        for signal in (solver.solved, solver.failed, solver.busy):
            with contextlib.suppress(RuntimeError):
                signal.disconnect()
        solver.stop()  # it ends once its solve comes back, if it ever does
        self.keep(solver)
        self.window.lab.log(f"live solve of {solving[0].model_name} left running in the "
                            "background; the next ones go to a fresh solver", "warning")
        self.window.live_solver = self.window.new_live_solver()
        return self.window.live_solver

    # -- naming what is stuck ----------------------------------------------------------------

    def check(self) -> None:
        """Name each task (and the live solve) silent for :data:`STUCK_AFTER_S`, once."""
        for worker in list(self.window.workers.values()):
            idle = worker.idle_seconds()
            if worker.isRunning() and idle >= STUCK_AFTER_S:
                self._tell(worker, worker.label, idle)
        solving = self.window.live_solver.solving
        if solving is not None and time.monotonic() - solving[1] >= STUCK_AFTER_S:
            self._tell(solving[0], f"live solve of {solving[0].model_name}",
                       time.monotonic() - solving[1])

    def _tell(self, key, label: str, idle: float) -> None:
        if id(key) in self._told:
            return
        self._told.add(id(key))
        text = f"{label}: no result for {idle:.0f} s; it is still running in the background"
        self.window.lab.log(text, "warning")
        self.window.status.setText(text)


def _ended(thread) -> None:
    if thread in _let_go_of:
        _let_go_of.remove(thread)
        thread.deleteLater()
