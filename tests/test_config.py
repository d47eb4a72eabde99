"""Process-wide settings made by ``import difflab``."""

import os
import subprocess
import sys

import pytest

from difflab._config import SMALL_LOOP_OPTION, with_whole_loop_kernels

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


def test_importing_difflab_sets_the_limit_before_jax_starts():
    script = ("import os, jax; import difflab; jax.numpy.zeros(1).block_until_ready(); "
              "print(os.environ['XLA_FLAGS'])")
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == f"--xla_backend_extra_options={RAISED}"
