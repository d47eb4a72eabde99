"""Long work in a helper thread, so that Ctrl-C reaches the command line at once.

A jitted call runs to its end before Python sees a signal: a long ``difflab run`` would
ignore Ctrl-C until done. Run in a daemon thread and waited for in short joins, the
work lets ``KeyboardInterrupt`` through within a tenth of a second; the abandoned call
runs on unseen until the process exits, which it then does at once.
"""

import threading


def in_background(fn, *args, **kwargs):
    """``fn(*args, **kwargs)``, computed in a daemon thread; its value or its exception."""
    outcome = {}

    def work():
        try:
            outcome["value"] = fn(*args, **kwargs)
        except BaseException as error:  # handed to the waiting thread
            outcome["error"] = error

    thread = threading.Thread(target=work, daemon=True, name="difflab-work")
    thread.start()
    while thread.is_alive():
        thread.join(0.05)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
