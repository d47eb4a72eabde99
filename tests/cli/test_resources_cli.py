"""The command line against jobs too big for the machine, and Ctrl-C.

Through the real entry point (``python -m difflab``): the exit status, one line on stderr,
no traceback, and no data lost.
"""

import json
import os
import signal
import subprocess
import sys
import time

import h5py
import numpy as np
import pytest

import difflab as dl
from difflab.cli import sweep_command


def _difflab(*args, env=None, timeout=120):
    return subprocess.run([sys.executable, "-m", "difflab", *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, **(env or {})},
                          check=False)


def _one_line(result) -> str:
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


@pytest.mark.parametrize("args, env, words", [
    (["--t1", "1e300", "--dt", "1"], {},
     ("t1 - t0 = 1e+300 in fixed steps of dt = 1 is 1e+300 steps, more than the "
      "1,000,000,000 allowed; use a larger dt")),
    (["--t1", "2e3", "--dt", "1e-6"], {}, "raise max_steps (--max-steps) to allow more"),
    (["--t1", "1e4", "--dt", "1e-5", "--n-save", "1000000000"], {"DIFFLAB_MEMORY_LIMIT": "4 GiB"},
     ("keeping 1,000,000,000 saved states of 3 values needs about 59.6 GiB of memory, more "
      "than the 4 GiB allowed (DIFFLAB_MEMORY_LIMIT=4 GiB); lower n_save (--n-save), or set "
      "DIFFLAB_MEMORY_LIMIT to allow more (e.g. DIFFLAB_MEMORY_LIMIT='60 GiB')")),
    (["--t1", "1e4", "--dt", "1e-5", "--n-save", "1000000000"], {"DIFFLAB_MEMORY_LIMIT": "1"},
     "DIFFLAB_MEMORY_LIMIT='1' is under 1 MiB"),
], ids=["t1-1e300", "steps", "n-save", "silly-limit"])
def test_run_refuses_what_cannot_fit_at_once(tmp_path, args, env, words):
    out = tmp_path / "run.h5"
    started = time.monotonic()
    result = _difflab("run", "lorenz", *args, "--out", out, env=env)
    assert result.returncode == 2
    assert words in _one_line(result)
    assert time.monotonic() - started < 60 and not out.exists()


SPACES = {
    "grid": "[space.grid]\nrho = { linspace = [0.0, 28.0, 10000] }\n"
            "sigma = { linspace = [1.0, 20.0, 10000] }\nbeta = { linspace = [1.0, 3.0, 10000] }\n",
    "uniform": "[space.sample]\nmethod = \"uniform\"\nn = 1000000000000\n"
               "ranges = { rho = [0.0, 28.0] }\n",
}


@pytest.mark.parametrize("kind, words", [
    ("grid", ("space.grid: a grid of 10000 x 10000 x 10000 of 1,000,000,000,000 points "
              "over 3 parameters needs about 43.7 TiB of memory")),
    ("uniform", ("space.sample: a uniform sample of 1,000,000,000,000 points over 1 "
                 "parameter needs about 29.1 TiB of memory")),
])
def test_sweep_refuses_a_space_too_large_to_hold(tmp_path, kind, words):
    config, out = tmp_path / "sweep.toml", tmp_path / "sweep.h5"
    config.write_text(f"model = \"lorenz\"\n[solve]\nt1 = 1.0\n{SPACES[kind]}")
    result = _difflab("sweep", config, "--out", out)
    assert result.returncode == 2
    assert words in _one_line(result) and not out.exists()


def test_sweep_refuses_a_file_larger_than_the_disk_before_starting(tmp_path):
    config, out = tmp_path / "sweep.toml", tmp_path / "sweep.h5"
    config.write_text("model = \"lorenz\"\n[solve]\nt1 = 100.0\ndt = 1e-3\nn_save = 100001\n"
                      "[space.grid]\nrho = { linspace = [0.0, 28.0, 10000000] }\n")
    result = _difflab("sweep", config, "--out", out)
    assert result.returncode == 1
    line = _one_line(result)
    assert line.startswith(f"difflab: error: {out}: not enough disk space: sweep 'sweep0' "
                           "(10,000,000 points) needs about 21.8 TiB, and ")
    assert not out.exists()


def test_a_sweep_whose_file_is_large_says_so_before_starting(capsys):
    class Job:
        n_points = 1_000_000

        @staticmethod
        def output_bytes():
            return 40 * 2**30

    sweep_command._say_size(Job, "big.h5")
    assert capsys.readouterr().err == ("difflab: the sweep's 1,000,000 points take about "
                                       "40.0 GiB in big.h5\n")


# SIGINT back to its default before exec (a test run in the background has it ignored)
TAKES_CTRL_C = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
                "os.execv(sys.executable, [sys.executable, '-m', 'difflab', *sys.argv[1:]])")


def _start(*args):
    """``difflab ARGS`` in a new process that takes Ctrl-C (SIGINT) as a terminal sends it."""
    return subprocess.Popen([sys.executable, "-c", TAKES_CTRL_C, *map(str, args)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _interrupt(process) -> tuple[float, str]:
    """Send Ctrl-C; the seconds until the process ended, and its stderr."""
    process.send_signal(signal.SIGINT)
    sent = time.monotonic()
    _, err = process.communicate(timeout=120)
    return time.monotonic() - sent, err


@pytest.mark.slow
def test_ctrl_c_stops_a_long_run_at_once_and_writes_nothing(tmp_path):
    out = tmp_path / "run.h5"
    process = _start("run", "lorenz", "--t1", "1e5", "--dt", "1e-4", "--n-save", "11",
                     "--out", out)  # a billion steps: half a minute in one jitted call
    time.sleep(8)
    assert process.poll() is None
    took, err = _interrupt(process)
    assert process.returncode == 130 and took < 3
    assert "Traceback" not in err and err.strip() == "difflab: interrupted"
    assert not out.exists() and not list(tmp_path.iterdir())


def _chunks_done(path) -> int:
    try:
        with h5py.File(path, "r", swmr=True, locking=False) as f:
            return int(f["sweeps/long/chunk_done"][:].sum())
    except (OSError, KeyError):
        return 0


@pytest.mark.slow
def test_ctrl_c_stops_a_sweep_at_once_and_the_same_command_resumes_it(tmp_path):
    config, out = tmp_path / "sweep.toml", tmp_path / "sweep.h5"
    config.write_text("model = \"lorenz\"\nname = \"long\"\n[solve]\nt1 = 300.0\ndt = 1e-4\n"
                      "[space.grid]\nrho = { linspace = [10.0, 28.0, 24] }\n"
                      "[run]\nchunk_size = 8\n")  # 3 chunks of a few seconds each
    process = _start("sweep", config, "--out", out)
    deadline = time.monotonic() + 120
    while _chunks_done(out) < 1 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)  # well into the next chunk
    took, err = _interrupt(process)
    assert process.returncode == 130 and took < 3, err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1] == (f"difflab: interrupted; the chunks done are kept in "
                                            f"{out}: run the same command again to resume")
    stored = dl.open(out).sweeps[0]
    done = int(np.sum(np.asarray(stored.result) == 0))
    assert not stored.complete and done in (8, 16)
    resumed = _difflab("sweep", config, "--out", out, "--json", timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["resumed"] == done and dl.open(out).sweeps[0].complete
