"""Shared test helpers."""

import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import numpy as np
import pytest


@pytest.fixture
def crossings():
    """Times where a sampled signal crosses zero upwards (``-1``: downwards), interpolated."""

    def times(ts, xs, direction=1):
        ts, xs = np.asarray(ts), direction * np.asarray(xs)
        i = np.nonzero((xs[:-1] < 0) & (xs[1:] >= 0))[0]
        return ts[i] - xs[i] * (ts[i + 1] - ts[i]) / (xs[i + 1] - xs[i])

    return times


#: test files that take longest, run first: with one file per worker (``--dist loadfile``)
#: a long file left for last keeps one worker busy while the other has nothing to do
LONGEST_FIRST = ("test_docs.py", "gui/test_view_matrix.py", "io/test_save_invariant.py",
                 "cli/test_fuzz_cli.py", "cli/test_sweep_cli.py", "test_exits.py",
                 "io/test_cf_compliance.py", "io/test_sweep_store.py")


def pytest_collection_modifyitems(config, items):
    def rank(item):
        path = item.path.as_posix()
        return next((k for k, name in enumerate(LONGEST_FIRST)
                     if path.endswith(f"/tests/{name}")), len(LONGEST_FIRST))

    items.sort(key=rank)  # stable: the rest keep their order
