"""A task of the window (a sweep, a continuation, a fit: each compiles) first drops a long
session's compiled programs where they near the kernel's limit on memory maps."""

import threading

from difflab import _memory_maps
from difflab.gui.workers import TaskWorker


def test_a_task_asks_on_its_own_thread_before_it_runs(qtbot, monkeypatch):
    order = []
    monkeypatch.setattr(_memory_maps, "relieve",
                        lambda: order.append(("relieve", threading.current_thread())))
    worker = TaskWorker(lambda emit, stop: order.append(("task", threading.current_thread())))
    with qtbot.waitSignal(worker.done, timeout=10_000):
        worker.start()
    assert [what for what, _ in order] == ["relieve", "task"]
    assert order[0][1] is order[1][1] is not threading.main_thread()
