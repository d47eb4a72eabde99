"""Scripts end with their own status: finished work exits 0, an error 1, ``sys.exit(3)`` 3,
Ctrl-C at once by SIGINT, and never abort (134) on a DiffLab thread left running at exit."""

import signal
import subprocess
import sys
import textwrap
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import h5py
import jax.numpy as jnp
import pytest

import difflab as dl
from difflab import _threads

ENDINGS = textwrap.dedent("""
    print("done", flush=True)
    if sys.argv[1] == "raise":
        raise RuntimeError("after the work")
    if sys.argv[1] == "exit":
        sys.exit(3)
""")
HEAD = textwrap.dedent("""
    import sys
    import jax; jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import difflab as dl
    m = dl.models.get("lorenz")()
""")
SWEEP = HEAD + textwrap.dedent("""
    r = dl.sweep(m, {"rho": jnp.linspace(0, 28, 37)}, t1=1.0, dt=1e-3, solver="rk4")
    print(r.final.shape)
""") + ENDINGS
EVERY_CALL = HEAD + textwrap.dedent("""
    run = dl.simulate(m, 0.5, dt=0.01, solver="rk4")
    chunks = list(dl.stream(m, 0.5, dt=0.01, solver="rk4", chunk_size=10))
    lv = dl.models.get("lotka_volterra")()
    truth = dl.simulate(lv, 2.0, dt=0.01, solver="rk4", n_save=11)
    fit = dl.fit(lv, truth, params=["alpha"], dt=0.01, solver="rk4", fit_max_steps=5)
    sweep = dl.sweep(m, {"rho": jnp.linspace(0, 28, 9)}, t1=0.5, dt=0.01, solver="rk4",
                     out=sys.argv[2])
    branch = dl.continuation(m, "rho", 0.0, 2.0, state={"x": 0, "y": 0, "z": 0},
                             max_points=20)
""") + ENDINGS
STATUS = {"end": 0, "raise": 1, "exit": 3}


def _run(script, *args, timeout=120):
    done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True,
                          text=True, timeout=timeout)
    return done.returncode, done.stdout, done.stderr


@pytest.mark.slow
def test_a_sweep_script_exits_with_its_own_status_every_time():
    """The README's sweep shape aborted at exit (134, 'FATAL: exception not rethrown') in
    2 to 7 of 16 runs: its sweep thread was still alive as Python finalized."""
    endings = [list(STATUS)[i % 3] for i in range(18)]
    with ThreadPoolExecutor(2) as pool:
        outcomes = list(pool.map(lambda how: (how, *_run(SWEEP, how)), endings))
    for how, status, out, err in outcomes:
        assert (status, out.split()[-1:]) == (STATUS[how], ["done"]), (how, err[-2000:])
        assert "FATAL" not in err and "terminate called" not in err


@pytest.mark.slow
@pytest.mark.parametrize("how", list(STATUS))
def test_a_script_of_every_call_exits_with_its_own_status(how, tmp_path):
    status, out, err = _run(EVERY_CALL, how, str(tmp_path / "sweep.h5"))
    assert status == STATUS[how], err[-3000:]
    assert out.split()[-1:] == ["done"] and "FATAL" not in err
    with h5py.File(tmp_path / "sweep.h5", "r") as f:  # closed whole: it reads back
        assert len(f.keys()) > 0


@pytest.mark.slow
def test_ctrl_c_in_a_long_sweep_chunk_ends_the_script_at_once_by_sigint():
    """The chunk runs on in XLA; the script still leaves within a second or two, by SIGINT
    as Python leaves on Ctrl-C, without an abort."""
    script = HEAD + textwrap.dedent("""
        import signal  # Python's own Ctrl-C, even where a test run in the background ignores it
        signal.signal(signal.SIGINT, signal.default_int_handler)
        print("go", flush=True)
        dl.sweep(m, {"rho": jnp.linspace(0, 28, 8)}, t1=1e5, dt=1e-3, solver="rk4")
    """)
    process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    assert process.stdout.readline().strip() == "go"
    time.sleep(3.0)  # past the compilation, into the first chunk (tens of seconds)
    process.send_signal(signal.SIGINT)
    sent = time.perf_counter()
    _, err = process.communicate(timeout=60)
    assert process.returncode == -signal.SIGINT, err[-3000:]
    assert time.perf_counter() - sent < 10.0
    assert "KeyboardInterrupt" in err and "FATAL" not in err


def test_a_sweep_leaves_no_thread_running():
    model = dl.models.get("lorenz")()
    dl.sweep(model, {"rho": jnp.linspace(0, 28, 9)}, t1=0.1, dt=1e-2, solver="rk4")
    assert _threads.running() == []
    left = [t.name for t in threading.enumerate() if t.name.startswith("difflab-")]
    assert left == []


def test_the_exit_asks_waiting_threads_to_end_then_joins_them():
    """A thread waiting for work is asked to end (its ``stop``) and joined at exit; one that
    never ends leaves the process at once, with status 1, after the grace."""
    script = textwrap.dedent("""
        import sys, threading
        from difflab import _threads
        _threads.GRACE, _threads.NOTE_AFTER = 1.0, 0.5
        asked = threading.Event()
        _threads.start(asked.wait, name="difflab-waiting", stop=asked.set)
        if sys.argv[1] == "stuck":
            _threads.start(threading.Event().wait, name="difflab-stuck")
        sys.exit(3)
    """)
    assert _run(script, "waiting", timeout=30)[0] == 3
    status, _, err = _run(script, "stuck", timeout=30)
    assert status == 1 and "difflab-stuck did not end" in err, err
