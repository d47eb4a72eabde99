"""The owner of every thread DiffLab starts: each is ended before the interpreter exits.

A thread still running when Python finalizes is killed by a forced unwind as soon as it
next needs the interpreter; through JAX's C++ frames that unwind aborts the process
(``FATAL: exception not rethrown``, exit status 134), turning finished work into a
crash. So DiffLab starts no daemon threads. Its threads are started here (:func:`start`)
or registered here (:func:`own`, the app's Qt threads), and at exit, before the
interpreter waits for non-daemon threads, :func:`_at_exit` joins them:

- normally, and after an error or ``sys.exit``, for up to :data:`GRACE` seconds (saying
  so on stderr after :data:`NOTE_AFTER`): work left running finishes, and the process
  then ends as Python ends it, with its own status;
- after Ctrl-C (an uncaught ``KeyboardInterrupt``, or Ctrl-C while waiting) for up to
  :data:`GRACE_INTERRUPTED` seconds, so that Ctrl-C still ends a program at once.

Threads that wait for work are first asked to end (the ``stop`` of :func:`own`). A thread
still running after the wait (a computation that never returns) is left behind: output
is flushed and the process ends at once (``os._exit``), by SIGINT after Ctrl-C (as Python
ends on it), else with status 1 (:data:`exit_status`): the exit never hangs for good.
"""

import os
import signal
import sys
import threading
import time
import weakref
from collections.abc import Callable

GRACE = 60.0  # seconds the exit waits for work left running
GRACE_INTERRUPTED = 0.5  # the same after Ctrl-C
NOTE_AFTER = 2.0  # a wait longer than this is announced on stderr

#: the status to end with when a thread cannot be ended and Python has not said one (after
#: ``sys.exit(n)`` or the program's end Python keeps its status to itself): a failure, since
#: work was left unfinished
exit_status = 1

_owned: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # thread -> its calls
_lock = threading.Lock()


def start(target: Callable, *args, name: str, stop: Callable | None = None
          ) -> threading.Thread:
    """``target(*args)`` on a new thread called ``name``, owned: joined before exit, after
    ``stop()`` (if given) has asked it to end. ``stop`` must not refer to the thread."""
    thread = threading.Thread(target=target, args=args, name=name, daemon=False)
    own(thread, threading.Thread.is_alive, threading.Thread.join,
        stop and (lambda _: stop()))
    thread.start()
    return thread


def own(thread, alive: Callable[[object], bool], join: Callable[[object, float], object],
        stop: Callable[[object], object] | None = None) -> None:
    """Join ``thread`` before exit: ``alive(thread)`` says whether it runs, ``stop(thread)``
    asks it to end (a thread waiting for work), ``join(thread, seconds)`` waits for it.
    Kept by a weak reference (the calls are given the thread, so that they need not keep
    it): a thread object deleted is done."""
    with _lock:
        _owned[thread] = (alive, join, stop)


def running() -> list[str]:
    """The names of the owned threads still running (the calling one aside)."""
    return [_name(t) for t, alive, _, _ in _entries() if _alive(t, alive)]


def stop() -> None:
    """Ask every owned thread that can be asked to end."""
    for thread, alive, _, ask in _entries():
        if ask is not None and _alive(thread, alive):
            ask(thread)


def join(timeout: float) -> bool:
    """Wait up to ``timeout`` seconds for every owned thread; whether all have ended."""
    deadline = time.monotonic() + timeout
    for thread, alive, wait, _ in _entries():
        while _alive(thread, alive) and (left := deadline - time.monotonic()) > 0:
            wait(thread, min(left, 0.1))
    return not running()


def _entries() -> list:
    with _lock:
        items = list(_owned.items())
    here = threading.current_thread()
    return [(t, *entry) for t, entry in items if t is not here]


def _alive(thread, alive) -> bool:
    try:
        return bool(alive(thread))
    except RuntimeError:  # a Qt thread whose C++ object is already deleted has ended
        return False


def _name(thread) -> str:
    name = getattr(thread, "name", None)
    if callable(getattr(thread, "objectName", None)):
        name = thread.objectName()
    return str(name or type(thread).__name__)


def _last_error() -> BaseException | None:
    """The exception that ended the main program, where Python recorded one."""
    return getattr(sys, "last_exc", None) or getattr(sys, "last_value", None)


def _at_exit() -> None:
    """Join every owned thread (bounded), or end the process at once; see the module."""
    interrupted = isinstance(_last_error(), KeyboardInterrupt)
    try:
        grace = GRACE_INTERRUPTED if interrupted else GRACE
        stop()
        if join(min(grace, NOTE_AFTER)):
            return
        if not interrupted:
            print(f"difflab: waiting up to {grace:.0f} s for {', '.join(running())} to end "
                  "(Ctrl-C: leave now)", file=sys.stderr, flush=True)
        if join(grace - NOTE_AFTER):
            return
    except KeyboardInterrupt:
        interrupted = True
    if not interrupted:
        print(f"difflab: {', '.join(running())} did not end; leaving at once",
              file=sys.stderr)
    _leave(interrupted)


def _leave(interrupted: bool) -> None:
    """End the process now, output flushed: by SIGINT after Ctrl-C, else with a status."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass
    if interrupted:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    os._exit(130 if interrupted else exit_status)


threading._register_atexit(_at_exit)  # run before the interpreter joins non-daemon threads
