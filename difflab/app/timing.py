"""How much of a run's wall time was compiling: the app's status line says the two apart.

JAX reports the seconds it spends tracing, lowering and compiling each program through
``jax.monitoring``, on the thread that does it. :func:`compile_spans` collects those spans
on the calling thread while its block runs; :func:`overlap` gives how much of a time
window they cover. A run's compile time is kept beside the run (:func:`note`,
:func:`compile_time`), since a run is immutable and its file knows nothing of it.
"""

import contextlib
import threading
import time
import weakref
from collections.abc import Iterator

import jax

COMPILE_EVENTS = frozenset({
    "/jax/core/compile/jaxpr_trace_duration",
    "/jax/core/compile/jaxpr_to_mlir_module_duration",
    "/jax/core/compile/backend_compile_duration",
    "/jax/compilation_cache/cache_retrieval_time_sec",  # a program read back from disk
})

_here = threading.local()


def _heard(event: str, seconds: float, **_) -> None:
    spans = getattr(_here, "spans", None)
    if spans is not None and event in COMPILE_EVENTS:
        end = time.perf_counter()
        spans.append((end - seconds, end))


jax.monitoring.register_event_duration_secs_listener(_heard)


@contextlib.contextmanager
def compile_spans():
    """The ``(start, end)`` of every compilation on this thread while the block runs."""
    outer = getattr(_here, "spans", None)
    _here.spans = spans = []
    try:
        yield spans
    finally:
        _here.spans = outer
        if outer is not None:  # an enclosing block sees them too
            outer.extend(spans)


def timed(items: Iterator, spans: list) -> Iterator:
    """``items``, adding to ``spans`` the compilations made while each is computed (not
    those of the code that takes them)."""
    while True:
        with compile_spans() as found:
            item = next(items, _END)
        spans.extend(found)
        if item is _END:
            return
        yield item


_END = object()


def overlap(spans, start: float, end: float) -> float:
    """The seconds of ``start .. end`` that the spans cover (overlapping spans once)."""
    covered, reach = 0.0, start
    for a, b in sorted(spans):
        a, b = max(a, reach), min(b, end)
        if b > a:
            covered += b - a
            reach = b
    return covered


_compile_times: dict = {}  # id(run) -> (a weak reference to the run, seconds)


def note(run, seconds: float) -> None:
    """Remember that ``seconds`` of ``run``'s wall time were compiling."""
    key = id(run)
    _compile_times[key] = (weakref.ref(run, lambda _: _compile_times.pop(key, None)),
                           float(seconds))


def compile_time(run) -> float:
    """The seconds of ``run``'s wall time that were compiling (0 when none or not known)."""
    ref, seconds = _compile_times.get(id(run), (None, 0.0))
    return seconds if ref is not None and ref() is run else 0.0
