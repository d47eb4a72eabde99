"""Long work in a helper thread, so that Ctrl-C reaches the command line at once.

A jitted call runs to its end before Python sees a signal: a long ``difflab run`` would
ignore Ctrl-C until done. Run in a helper thread and waited for in short joins, the
work lets ``KeyboardInterrupt`` through within a tenth of a second. The thread is owned
by ``difflab._threads``: an abandoned call runs on unseen, and the command line then
ends the process at once (:func:`difflab.cli.errors.leave`), never leaving the thread
to the interpreter's exit.
"""

from .._threads import start


def in_background(fn, *args, **kwargs):
    """``fn(*args, **kwargs)``, computed in a helper thread; its value or its exception."""
    outcome = {}

    def work():
        try:
            outcome["value"] = fn(*args, **kwargs)
        except BaseException as error:  # handed to the waiting thread
            outcome["error"] = error

    thread = start(work, name="difflab-work")
    while thread.is_alive():
        thread.join(0.05)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
