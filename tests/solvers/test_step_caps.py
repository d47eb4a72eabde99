"""Every path that integrates is held to the 10^9-step cap of run, simulate and stream,
and analyses refuse sizes that would not fit in memory: before any work, in one line
naming the steps or the memory needed."""

import time

import numpy as np
import pytest

import difflab as dl
from difflab.cli import main

LORENZ = dl.models.get("lorenz")
FHN = dl.models.get("fitzhugh_nagumo")


def refused(call, match):
    start = time.perf_counter()
    with pytest.raises(ValueError, match=match) as info:
        call()
    assert time.perf_counter() - start < 5.0  # refused up front, not after running
    assert "\n" not in str(info.value)
    return str(info.value)


def test_a_lyapunov_observable_over_1e12_is_refused():
    message = refused(lambda: dl.sweep(LORENZ(), dl.grid(rho=np.array([28.0])), 1.0,
                                       observables={"l": "lyapunov(1e12)"}),
                      "1e\\+14 steps")
    assert "lyapunov(1e+12) in RK4 steps of dt = 0.01" in message
    assert "1,000,000,000 allowed" in message


@pytest.mark.parametrize("t1, transient", [(1e12, 0.0), (10.0, 1e12)])
def test_a_lyapunov_spectrum_over_1e12_is_refused(t1, transient):
    refused(lambda: dl.lyapunov(LORENZ(), t1, transient=transient), "1e\\+14 steps")


@pytest.mark.parametrize("option", ["--t1", "--transient"])
def test_the_cli_refuses_lyapunov_over_1e12_in_one_line(option, capsys):
    args = ["lyapunov", "lorenz", "--t1", "10"] if option == "--transient" else ["lyapunov", "lorenz"]
    code = main([*args, option, "1e12"])
    err = capsys.readouterr().err.strip()
    assert code != 0
    assert len(err.splitlines()) == 1 and "1e+14 steps" in err, err


def test_equilibria_from_1e8_starts_name_the_memory(monkeypatch):
    monkeypatch.setenv("DIFFLAB_MEMORY_LIMIT", "4 GiB")
    refused(lambda: dl.equilibria(LORENZ(), n_starts=100_000_000),
            "equilibria from 100,000,000 starts of 3 states needs about 22.4 GiB")


def test_cycles_with_1e9_steps_per_period_name_the_memory(monkeypatch):
    monkeypatch.setenv("DIFFLAB_MEMORY_LIMIT", "4 GiB")
    refused(lambda: dl.periodic_orbits(FHN(), "current", 0.5, 0.0, 1.5, steps=10**9),
            "1,000,000,000 steps per period \\(2 states\\) needs about 22.4 GiB")
    refused(lambda: dl.periodic_orbits(FHN(), "current", 0.5, 0.0, 1.5, steps=10**10),
            "10,000,000,000 RK4 steps per period is 1e\\+10 steps")
