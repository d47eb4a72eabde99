"""What a job needs, checked before it runs: fixed steps, memory, spaces, and wall time."""

import signal
import subprocess
import sys
import time

import jax
import numpy as np
import pytest

import difflab as dl
from difflab.solvers import _resources  # white-box: the memory figures and their words
from tests.models_for_tests import Decay


@pytest.fixture
def limit(monkeypatch):
    """Set ``DIFFLAB_MEMORY_LIMIT`` for the test."""
    return lambda size: monkeypatch.setenv(_resources.MEMORY_LIMIT_VARIABLE, size)


def test_runaway_fixed_steps_are_refused_before_running():
    started = time.perf_counter()
    with pytest.raises(ValueError, match=r"1e\+300 steps, more than the 1,000,000,000 allowed"):
        dl.simulate(dl.models.get("lorenz")(), 1e300, dt=1.0)
    with pytest.raises(ValueError, match="more than the 1,000,000,000 allowed; use a larger dt"):
        list(dl.stream(Decay(), 1e10, dt=1.0))
    with pytest.raises(ValueError, match="raise max_steps"):
        dl.sweep(Decay(), {"rate": [1.0, 2.0]}, 2e9, dt=1.0)
    assert time.perf_counter() - started < 10  # refused, not run
    # max_steps allows more fixed steps (and checks nothing it does not have to)
    assert dl.simulate(Decay(), 1.0, dt=1e-3, max_steps=10).ok


def test_float32_step_indices_that_would_overflow_are_refused():
    dl.set_precision("float32")
    try:
        with pytest.raises(ValueError, match="32-bit step indices"):
            dl.simulate(Decay(), 1e7, dt=1.0, n_save=1001)
    finally:
        dl.set_precision("float64")


def test_saved_states_beyond_the_memory_limit_are_refused(limit):
    limit("64 MiB")
    with pytest.raises(ValueError) as info:
        dl.simulate(Decay(), 1e4, dt=1e-3, n_save=5_000_001)
    text = str(info.value)
    assert "keeping 5,000,001 saved states of 1 value needs about 153 MiB of memory" in text
    assert "more than the 64 MiB allowed (DIFFLAB_MEMORY_LIMIT=64 MiB)" in text
    assert "lower n_save" in text and "DIFFLAB_MEMORY_LIMIT='153 MiB'" in text
    assert "\n" not in text
    with pytest.raises(ValueError, match="save times of a streamed run"):
        next(iter(dl.stream(Decay(), 1e4, dt=1e-4, n_save=5_000_001)))


def test_the_memory_limit_comes_from_the_machine_or_the_variable(limit, monkeypatch):
    monkeypatch.delenv(_resources.MEMORY_LIMIT_VARIABLE, raising=False)
    available = _resources.available_memory()
    assert available is None or available > 2**20
    allowed, source = _resources.memory_limit()
    assert allowed >= 2**20 and ("available" in source or "assumed" in source)
    monkeypatch.setattr(_resources, "available_memory", lambda: None)
    assumed = "assumed: this machine does not say what memory it has free"
    assert _resources.memory_limit() == (8 * 2**30, assumed)
    limit("40 GiB")
    assert _resources.memory_limit() == (40 * 2**30, "DIFFLAB_MEMORY_LIMIT=40 GiB")
    for silly in ("1", "12 kB", "lots", "-3 GiB"):
        limit(silly)
        with pytest.raises(ValueError, match="DIFFLAB_MEMORY_LIMIT"):
            _resources.memory_limit()


@pytest.mark.parametrize("n, text", [(900, "900 bytes"), (512 * 2**20, "512 MiB"),
                                     (8e12, "7.28 TiB"), (3e19, "26 EiB"), (2**30, "1 GiB")])
def test_sizes_read_as_people_write_them(n, text):
    assert _resources.format_bytes(n) == text


@pytest.mark.parametrize("make, words", [
    (lambda: dl.grid(rho=np.arange(1e4), sigma=np.arange(1e4), beta=np.arange(1e4)),
     "a grid of 10000 x 10000 x 10000 of 1,000,000,000,000 points over 3 parameters"),
    (lambda: dl.uniform(jax.random.key(0), 10**12, rho=(0, 28)), "a uniform sample"),
    (lambda: dl.latin_hypercube(jax.random.key(0), 10**12, rho=(0, 28)), "a Latin hypercube"),
    (lambda: dl.sobol(jax.random.key(0), 10**12, rho=(0, 28)), "a Sobol sequence"),
])
def test_parameter_spaces_too_large_to_hold_are_refused(make, words):
    with pytest.raises(ValueError) as info:
        make()
    assert words in str(info.value) and "TiB of memory" in str(info.value)
    assert "use fewer points" in str(info.value)


def test_a_sweep_kept_in_memory_must_fit_before_a_file_is_touched(limit, tmp_path):
    limit("16 MiB")
    out = tmp_path / "sweep.h5"
    with pytest.raises(ValueError, match="a sweep of 2,000 points needs about .* MiB") as info:
        dl.sweep(Decay(), {"rate": np.linspace(1, 2, 2000)}, 10.0, dt=1e-2, n_save=1001,
                 out=out)
    assert "stream the sweep to a file" in str(info.value)
    assert not out.exists()
    job = dl.solvers.SweepJob(Decay(), {"rate": np.linspace(1, 2, 2000)}, 10.0, dt=1e-2,
                              n_save=1001, chunk_size=100)
    assert 2000 * 1001 * 8 < job.output_bytes() < 2000 * 1002 * 8 + 2000 * 40
    job.check_memory(collect=False)  # streamed to a file, only a chunk is held


def test_wall_time_is_the_time_of_the_finished_run():
    model = dl.models.get("lorenz")()
    dl.simulate(model, 1.0, dt=1e-3, n_save=3)  # compiled
    started = time.perf_counter()
    traj = dl.simulate(model, 2000.0, dt=1e-4, n_save=3)
    elapsed = time.perf_counter() - started
    assert 0.8 * elapsed <= traj.wall_time <= elapsed


_CTRL_C_SWEEP = """
import signal, sys, time
import numpy as np
import difflab as dl
model, space = dl.models.get("lorenz")(), {"rho": np.linspace(10, 28, 8)}
dl.sweep(model, space, 1e-3, dt=1e-4, chunk_size=4)  # compiled (t1 is traced)
print("ready", flush=True)
started = time.perf_counter()
try:  # chunks of 4 points, 4e7 steps each: seconds
    dl.sweep(model, space, 4000.0, dt=1e-4, chunk_size=4, out=sys.argv[1], name="long")
except KeyboardInterrupt:
    print(f"interrupted {time.perf_counter() - started:.3f}", flush=True)
"""


@pytest.mark.slow
def test_ctrl_c_stops_a_sweep_at_once_and_leaves_its_file_to_resume(tmp_path):
    out = tmp_path / "sweep.h5"  # a fresh process: Python's own Ctrl-C, no test machinery
    proc = subprocess.Popen([sys.executable, "-c", _CTRL_C_SWEEP, str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    printed, errors = proc.communicate(timeout=120)
    assert printed.startswith("interrupted"), f"exit status {proc.returncode}:\n{errors[-3000:]}"
    assert float(printed.split()[1]) < 5.0  # at once, not when the chunk ends (tens of s)
    stored = dl.open(out).sweeps[0]
    assert stored.name == "long" and not stored.complete
    assert np.all(np.asarray(stored.result) == -1)  # nothing half-written: to resume
