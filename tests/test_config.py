"""Process-wide settings made by ``import difflab``."""

import os
import subprocess
import sys

import pytest

# white-box: the XLA_FLAGS rewrite that import difflab makes before jax starts
from difflab._config import (
    EMITTER_FLAG,
    SMALL_LOOP_OPTION,
    with_quick_compiles,
    with_whole_loop_kernels,
    with_wide_vectors,
)

RAISED = f"{SMALL_LOOP_OPTION}=100000000"


@pytest.mark.parametrize("flags, expected", [
    ("", f"--xla_backend_extra_options={RAISED}"),
    ("--xla_force_host_platform_device_count=8",
     f"--xla_force_host_platform_device_count=8 --xla_backend_extra_options={RAISED}"),
    ("--xla_backend_extra_options=xla_cpu_disable_loop_unrolling=true --xla_dump_to=/tmp/d",
     f"--xla_backend_extra_options=xla_cpu_disable_loop_unrolling=true,{RAISED}"
     " --xla_dump_to=/tmp/d"),
    (f"--xla_backend_extra_options={SMALL_LOOP_OPTION}=1024",
     f"--xla_backend_extra_options={SMALL_LOOP_OPTION}=1024"),
])
def test_the_small_loop_limit_is_raised_unless_the_user_set_it(flags, expected):
    assert with_whole_loop_kernels(flags) == expected


@pytest.mark.parametrize("flags, jaxlib, expected", [
    ("", "0.10.2", f"--{EMITTER_FLAG}=false"),
    ("--xla_dump_to=/tmp/d", "0.10.0", f"--xla_dump_to=/tmp/d --{EMITTER_FLAG}=false"),
    (f"--{EMITTER_FLAG}=true", "0.10.2", f"--{EMITTER_FLAG}=true"),  # the user's choice
    ("", "0.11.0", ""),  # a jaxlib not known to take the flag: XLA would abort on it
])
def test_the_quick_compiling_emitters_are_chosen_where_known(flags, jaxlib, expected):
    assert with_quick_compiles(flags, jaxlib) == expected


@pytest.mark.slow
def test_importing_difflab_sets_the_limit_before_jax_starts():
    script = ("import os, jax; import difflab; jax.numpy.zeros(1).block_until_ready(); "
              "print(os.environ['XLA_FLAGS'])")
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == with_whole_loop_kernels(with_wide_vectors(with_quick_compiles("")))
    assert f"--xla_backend_extra_options={RAISED}" in out.split()


def _fresh(script: str, **env) -> subprocess.CompletedProcess:
    """``script`` run by a new Python, without the test suite's ``XLA_FLAGS``."""
    base = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "DIFFLAB_CPU_DEVICES")}
    return subprocess.run([sys.executable, "-W", "always", "-c", script], env={**base, **env},
                          capture_output=True, text=True, check=True)


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


@pytest.mark.slow
def test_importing_difflab_gives_jax_one_cpu_device_per_core():
    out = _fresh("import difflab, jax; print(len(jax.devices('cpu')))").stdout
    assert int(out) == _cores()


@pytest.mark.slow
@pytest.mark.parametrize("env, expected", [
    ({"DIFFLAB_CPU_DEVICES": "1"}, 1),
    ({"DIFFLAB_CPU_DEVICES": "3"}, 3),
    ({"XLA_FLAGS": "--xla_force_host_platform_device_count=5"}, 5),
])
def test_a_chosen_cpu_device_count_is_kept(env, expected):
    out = _fresh("import difflab, jax; print(len(jax.devices('cpu')))", **env).stdout
    assert int(out) == expected


@pytest.mark.slow
def test_use_all_cpu_cores_called_too_late_says_so():
    script = ("import jax; jax.numpy.zeros(1); import difflab; "
              "print(difflab.solvers.use_all_cpu_cores())")
    done = _fresh(script, DIFFLAB_CPU_DEVICES="1")
    assert int(done.stdout) == 1
    if _cores() > 1:
        assert "called after JAX started" in done.stderr
        assert "xla_force_host_platform_device_count" in done.stderr
