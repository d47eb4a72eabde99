"""``--distributed``: joining JAX's multi-process runtime, with a time limit and a message.

Left to itself, a process whose coordinator never answers waits without a word, and
when JAX's own deadline passes it aborts the process with a C++ stack trace. Here the
process says what it waits for, checks first that the coordinator's port answers (a
process other than 0), and gives up after ``--coordinator-timeout`` seconds with one line.
"""

import os
import socket
import sys
import threading
import time

from .errors import EXIT_BAD_INPUT, UsageError

DEFAULT_TIMEOUT = 120.0  # under JAX's own 300 s, after which it aborts the process
_PROBE_EVERY = 0.5


def _setting(given, *names):
    return given if given is not None else next(
        (os.environ[n] for n in names if os.environ.get(n)), None)


def _split(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise UsageError(f"--coordinator must be HOST:PORT, not {address!r}")
    return host.strip("[]"), int(port)


def wait_for_coordinator(address: str, timeout: float) -> None:
    """Return once ``address`` accepts a connection; ``UsageError`` after ``timeout`` s."""
    host, port = _split(address)
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection((host, port), timeout=min(5.0, timeout)):
                return
        except OSError as error:
            if time.monotonic() + _PROBE_EVERY > deadline:
                raise UsageError(f"--distributed: no coordinator answered at {address} within "
                                 f"{timeout:g} s ({error.strerror or error}); start process 0 "
                                 "first, or check --coordinator") from None
            time.sleep(_PROBE_EVERY)


def _give_up(what: str, timeout: float) -> None:
    print(f"difflab: error: --distributed: {what} did not complete within {timeout:g} s "
          "(--coordinator-timeout); are all the processes started?", file=sys.stderr,
          flush=True)
    os._exit(EXIT_BAD_INPUT)  # JAX's connect cannot be interrupted from Python


def join(args) -> None:
    """Join the multi-process runtime as ``args`` (and the environment) say, or say why not."""
    import difflab as dl

    timeout = float(_setting(getattr(args, "coordinator_timeout", None),
                             "DIFFLAB_COORDINATOR_TIMEOUT") or DEFAULT_TIMEOUT)
    if not timeout > 0:
        raise UsageError(f"--coordinator-timeout must be positive, got {timeout:g}")
    address = _setting(args.coordinator, "DIFFLAB_COORDINATOR", "JAX_COORDINATOR_ADDRESS")
    rank = _setting(args.process_id, "DIFFLAB_PROCESS_ID", "JAX_PROCESS_ID")
    what = f"joining the coordinator at {address}" if address else "joining the cluster"
    print(f"difflab: {what} (process {rank if rank is not None else '?'}; waiting up to "
          f"{timeout:g} s)", file=sys.stderr, flush=True)
    if address and rank is not None and int(rank) != 0:
        wait_for_coordinator(address, timeout)
    watchdog = threading.Timer(timeout, _give_up, (what, timeout))
    watchdog.start()
    try:
        dl.solvers.initialize_distributed(args.coordinator, args.num_processes, args.process_id)
    except (ValueError, RuntimeError) as error:
        raise UsageError(f"--distributed: {' '.join(str(error).split())}") from None
    finally:
        watchdog.cancel()
        watchdog.join()
