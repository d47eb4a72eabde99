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
