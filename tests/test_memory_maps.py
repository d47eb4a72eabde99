"""Compiled programs dropped before the kernel's limit on memory maps: at that limit the
next compile died of a segmentation fault (``LLVM compilation error: Cannot allocate
memory``), late in a full test run and in a long session of the app."""

import gc

import jax
import jax.numpy as jnp
import pytest

from difflab import _memory_maps

pytestmark = pytest.mark.skipif(_memory_maps.maps_in_use() is None,
                                reason="the system does not count memory maps")


def _kernel_count() -> int:
    with open("/proc/self/maps") as f:
        return len(f.readlines())


def _limit(tmp_path, monkeypatch, limit: int) -> None:
    path = tmp_path / "max_map_count"
    path.write_text(f"{limit}\n")
    monkeypatch.setattr(_memory_maps, "LIMIT_FILE", str(path))


def test_the_count_is_the_kernels():
    used, limit = _memory_maps.maps_in_use()
    with open("/proc/sys/vm/max_map_count") as f:
        assert limit == int(f.read())
    assert abs(used - _kernel_count()) <= 2  # the files being read map nothing lasting


def test_past_the_share_the_programs_and_their_maps_are_dropped(tmp_path, monkeypatch):
    scaled = jax.jit(lambda x: jnp.sin(x) * 3.0)
    programs = 80  # one per shape
    for n in range(1, programs + 1):
        scaled(jnp.ones(n)).block_until_ready()
    assert scaled._cache_size() == programs
    before = _kernel_count()
    _limit(tmp_path, monkeypatch, 2 * before)  # half in use
    assert not _memory_maps.relieve(share=0.6, every_s=0.0)
    assert scaled._cache_size() == programs
    assert _memory_maps.relieve(share=0.4, every_s=0.0)
    gc.collect()
    assert scaled._cache_size() == 0
    assert _kernel_count() < before - 2 * programs  # three to five maps a program
    assert float(scaled(jnp.ones(2))[0]) == pytest.approx(3 * 0.8414709848078965)


def test_the_count_is_taken_at_most_once_in_a_while(tmp_path, monkeypatch):
    counts = []
    monkeypatch.setattr(_memory_maps, "maps_in_use", lambda: counts.append(1) or (10, 10))
    monkeypatch.setattr(_memory_maps, "_counted", -float("inf"))
    monkeypatch.setattr(jax, "clear_caches", lambda: None)
    assert _memory_maps.relieve(share=0.5, every_s=60.0)
    assert not _memory_maps.relieve(share=0.5, every_s=60.0)
    assert len(counts) == 1


def test_each_solve_of_the_app_asks_first(monkeypatch):
    from difflab.app import runs
    from tests.models_for_tests import Decay

    asked = []
    monkeypatch.setattr(_memory_maps, "relieve", lambda: asked.append(1) or False)
    run = runs.solve(runs.SolveRequest(1, Decay(), "decay", runs.RunSettings(t1=1.0)))
    assert asked == [1] and run.ts[-1] == 1.0
