"""The GUI thread's collector (``difflab.gui._gc``) scans the long-lived objects in a
full collection only once they have grown by a quarter, as Python's own collector does.
By the thresholds alone, every eleventh collection of the middle generation was a full
one, however many objects JAX's caches held (a million, 60 ms, after a few dozen models)."""

import gc

from difflab.gui import _gc


def _full_collections(rounds: int, kept: list) -> int:
    """Full collections over ``rounds`` turns of the app's timer, each after 1,000 new
    objects that stay alive (as a session's compiles leave them)."""
    full = []

    def seen(phase, info):
        if phase == "stop" and info["generation"] == 2:
            full.append(info)

    gc.callbacks.append(seen)
    try:
        for _ in range(rounds):
            kept.extend([i] for i in range(1_000))
            _gc.collect()
    finally:
        gc.callbacks.remove(seen)
    return len(full)


def test_full_collections_wait_for_a_quarter_more_long_lived_objects(qapp, monkeypatch):
    assert not gc.isenabled()  # the GUI thread's timer collects, from the first window on
    kept = [[i] for i in range(1_000_000)]
    _gc.collect()
    gc.collect()  # a full collection keeps them: a quarter more is 250,000 objects
    # this test's count, the app's as it was for the tests after it
    monkeypatch.setattr(_gc, "_long_lived", {"total": len(gc.get_objects(2)), "pending": 0})
    # 200,000 objects moved up in 200 rounds: more than ten collections of the middle
    # generation (a full one by the thresholds alone), but not yet a quarter
    assert _full_collections(200, kept) == 0
    # 100,000 more pass the quarter: one full collection, then the count starts again
    assert _full_collections(100, kept) == 1
    assert _gc._long_lived["pending"] < 100_000
