"""Stiff sweeps finish on any number of CPU devices.

The Kvaerno solvers' Newton iterations solve linear systems. Done by LAPACK's batched LU
(a custom call that waits, on a thread of the CPU client's pool, for parts it gave that
pool), a sweep of the heat equation by the method of lines (``Rod``, 50 states) on two
CPU devices of a two-core machine waited for ever with both pool threads inside the
kernel. The solve is now plain XLA (``PlainLU``).
The sweeps on 2 and 8 devices run in a subprocess under a hard timeout, so a return of
the wedge fails the test instead of hanging the suite.
"""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.linalg

import difflab as dl
from tests.models_for_tests import Rod

# white-box: the linear solve the stiff solvers use
from difflab.solvers._steppers import linear

DS = np.linspace(0.05, 0.2, 16)
T1 = 0.5
HARD_TIMEOUT = 240  # seconds; the sweep itself takes a few on two loaded cores
ROOT = Path(__file__).resolve().parents[2]  # where ``tests.models_for_tests`` imports from

SCRIPT = textwrap.dedent(f"""
    import numpy as np, difflab as dl, jax
    from tests.models_for_tests import Rod
    res = dl.sweep(Rod(), dl.grid({{"D": np.linspace(0.05, 0.2, 16)}}),
                   {T1}, solver="kvaerno5", observables={{"f": "final(u24)"}})
    assert len(jax.devices()) == int({{n}}), jax.devices()
    print(repr(np.asarray(res.observables["f"]).tolist()))
    print(repr(np.asarray(res.result).tolist()))
""")


def sweep_in_subprocess(n_devices: int):
    env = {k: v for k, v in os.environ.items() if k != "DIFFLAB_CPU_DEVICES"}
    env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={n_devices}"
    try:
        done = subprocess.run([sys.executable, "-c", SCRIPT.replace("{n}", str(n_devices))],
                              env=env, capture_output=True, text=True, timeout=HARD_TIMEOUT,
                              cwd=ROOT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the stiff sweep on {n_devices} devices did not return in "
                    f"{HARD_TIMEOUT} s")
    assert done.returncode == 0, done.stderr[-2000:]
    values, results = done.stdout.strip().splitlines()[-2:]
    return np.array(eval(values)), np.array(eval(results))  # noqa: S307 (our own output)


@pytest.fixture(scope="module")
def one_device():
    res = dl.sweep(Rod(), dl.grid({"D": DS}), T1, solver="kvaerno5",
                   devices=1, observables={"f": "final(u24)"})
    return np.asarray(res.observables["f"])


@pytest.mark.parametrize("n_devices", [2, 8])
def test_a_stiff_sweep_finishes_on_many_devices(n_devices, one_device):
    values, results = sweep_in_subprocess(n_devices)
    assert np.all(results == 0)
    np.testing.assert_allclose(values, one_device, rtol=1e-12, atol=1e-15)
    # and both are the discrete heat equation's decay of its slowest mode
    dx = 1 / 51
    rate = 4 / dx**2 * np.sin(np.pi * dx / 2) ** 2
    np.testing.assert_allclose(values, np.sin(25 * np.pi * dx) * np.exp(-DS * rate * T1),
                               rtol=1e-5)


def test_the_stiff_solve_holds_no_lapack_call():
    f = jax.jit(jax.vmap(lambda d: dl.simulate(
        Rod(D=d, n=8), 0.1, solver="kvaerno5", n_save=2).ys[-1]))
    text = f.lower(jnp.linspace(0.1, 0.2, 4)).as_text()
    assert "lapack" not in text.lower()


@pytest.mark.parametrize("n", [1, 3, 20])
def test_plain_lu_solves_as_lapack_does(n):
    rng = np.random.default_rng(n)
    a, b = rng.normal(size=(n, n)), rng.normal(size=n)
    lu, perm = linear.lu_factor(jnp.asarray(a))
    ref_lu, _ = scipy.linalg.lu_factor(a)
    np.testing.assert_allclose(lu, ref_lu, rtol=1e-12, atol=1e-13)  # the same pivots
    np.testing.assert_allclose(a[np.asarray(perm)],
                               (np.tril(lu, -1) + np.eye(n)) @ np.triu(lu), atol=1e-13)
    np.testing.assert_allclose(linear.lu_solve((lu, perm), b), np.linalg.solve(a, b),
                               rtol=1e-10)
    np.testing.assert_allclose(linear.lu_solve_transposed((lu, perm), b),
                               np.linalg.solve(a.T, b), rtol=1e-10)
