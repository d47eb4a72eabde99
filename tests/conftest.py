"""Shared test helpers."""

import os

# Eight CPU devices, as a machine with eight accelerators; and XLA's CPU programs compiled
# without LLVM's optimizations. The suite compiles thousands of small programs and runs
# most of them briefly: on 2 cores it took 1,028 s with XLA's default level, 783 s with
# this one. The suite passes at both (at level 1 two programs that must agree to the bit
# did not); the documents run at the default level, as a reader's do (``test_docs.py``).
# A run with XLA_FLAGS set keeps its own flags.
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8 "
                                   "--xla_backend_optimization_level=0")

import gc
import math
import sys

import jax
import numpy as np
import pytest

# The test workers compile in-process without JAX's on-disk cache: two workers (and the
# command lines the tests start) would write that folder at once, and JAX writes its
# entries without a lock. Subprocesses still use the cache.
jax.config.update("jax_enable_compilation_cache", False)


@pytest.fixture(scope="module", autouse=True)
def _earlier_objects_left_out_of_gc():
    """Each test file starts with what earlier files left alive (JAX's caches of traced
    and compiled programs: a million objects after the view matrix) frozen out of Python's
    cyclic garbage collector. Otherwise every full collection scans them all (about a
    second each), and a file run late in a worker took up to five times as long as alone.
    The collection first frees the cycles the previous file left, scanning only them,
    once the app's background compiles of that file have finished.

    A worker's compiled programs are dropped once they hold more than half the memory
    maps the kernel allows a process: at its limit the next compile died of a
    segmentation fault, late in a full run (``difflab._memory_maps``)."""
    from difflab import _memory_maps
    from difflab.app import runs

    for thread in [*runs._precompiling, *runs._optimizing.values()]:
        thread.join(timeout=120)
    if _memory_maps.relieve(share=0.5, every_s=0.0):
        gc.unfreeze()  # programs dropped may hang from cycles frozen by earlier files
    gc.collect()
    gc.freeze()


@pytest.fixture(autouse=True)
def _collect_on_the_main_thread():
    """Once the app collects on the GUI thread only (``difflab.gui._gc``, from the first
    GUI test on), each test ends with the collection it would have had: a file that runs
    no event loop would otherwise collect nothing."""
    yield
    collector = sys.modules.get("difflab.gui._gc")
    if collector is not None and not gc.isenabled():
        collector.collect()


@pytest.fixture(autouse=True)
def _no_background_compiles(monkeypatch):
    """The app's runs keep their quickly compiled programs: no test but those of the
    optimizing tier (which set their own threshold) compiles optimized programs on
    background threads: they cost CPU on a loaded machine."""
    from difflab.app import runs

    monkeypatch.setattr(runs, "SLOW_RUN", math.inf)


@pytest.fixture
def crossings():
    """Times where a sampled signal crosses zero upwards (``-1``: downwards), interpolated."""

    def times(ts, xs, direction=1):
        ts, xs = np.asarray(ts), direction * np.asarray(xs)
        i = np.nonzero((xs[:-1] < 0) & (xs[1:] >= 0))[0]
        return ts[i] - xs[i] * (ts[i + 1] - ts[i]) / (xs[i + 1] - xs[i])

    return times


#: test files that take longest, run first: with one file per worker (``--dist loadfile``)
#: a long file left for last keeps one worker busy while the other has nothing to do.
#: xdist keeps this order only with ``--no-loadscope-reorder`` (in pyproject's addopts);
#: by default it hands out the files with the most tests first, and a long file of one
#: test (the view matrix) last
LONGEST_FIRST = (  # measured: pytest --durations=0 summed per file, 30 s and more
    "test_docs.py", "gui/test_view_matrix.py", "solvers/test_periodic_orbits.py",
    "test_exits.py", "solvers/test_locate_cycles.py", "solvers/test_cycle_curves.py",
    "solvers/test_field_implicit.py", "solvers/test_gradients.py",
    "solvers/test_field_implicit_derivatives.py", "solvers/test_lowering.py",
    "cli/test_sweep_cli.py", "io/test_analysis_results.py", "gui/test_stuck_tasks.py",
    "gui/test_bifurcation_cycles.py", "solvers/test_stiff.py", "cli/test_resources_cli.py",
    "solvers/test_periodic_doubling.py", "solvers/test_homoclinic.py",
    "io/test_cf_compliance.py", "io/test_saves_keep_work.py")


def pytest_collection_modifyitems(config, items):
    def rank(item):
        path = item.path.as_posix()
        return next((k for k, name in enumerate(LONGEST_FIRST)
                     if path.endswith(f"/tests/{name}")), len(LONGEST_FIRST))

    items.sort(key=rank)  # stable: the rest keep their order
