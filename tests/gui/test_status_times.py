"""The status line says a first run's compile time and run time apart, as the CLI does."""

import re

from difflab.app.lab import Lab
from .conftest import LONG

FIRST = re.compile(r"lorenz: 300 steps, ([\d.]+) ms run \+ ([\d.]+) s compile, rk4")
AGAIN = re.compile(r"lorenz: 300 steps in ([\d.]+) ms, rk4")


def _settled(window, test):
    current = window.lab.current
    return (current is not None and test(current) and "solving" not in window.status.text()
            and "failed" not in window.status.text())


def test_a_first_run_says_its_compile_time_apart_and_a_later_one_its_run_alone(
        qtbot, make_window):
    """'heat1d: 12 steps in 4787.5 ms' was mostly compiling, and said nothing of it."""
    window = make_window(Lab("lorenz"))
    window.lab.set_settings(solver="rk4", dt=0.01, t1=3.0, n_save=151)  # a program of its own
    qtbot.waitUntil(lambda: _settled(window, lambda run: run.settings.n_save == 151),
                    timeout=LONG)
    run, text = window.lab.current, window.status.text()
    first = FIRST.search(text)
    assert first, text
    run_ms, compile_s = map(float, first.groups())
    assert compile_s * 1e3 > run_ms  # a first run of a small model is mostly compiling
    assert abs(run_ms + compile_s * 1e3 - run.wall_time * 1e3) < 10.0  # the two are its time

    window.lab.set_params({"rho": 20.0})  # the same program, new values: nothing compiles
    qtbot.waitUntil(lambda: _settled(window, lambda run: float(run.model.rho) == 20.0),
                    timeout=LONG)
    text = window.status.text()
    assert AGAIN.search(text) and "compile" not in text, text
