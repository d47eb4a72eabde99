"""Accelerators: what JAX computes on, and a per-trajectory Pallas kernel for sweeps."""

from .devices import describe_devices as describe_devices
from .pallas_sweep import pallas_supported as pallas_supported
from .pallas_sweep import solve_block_pallas as solve_block_pallas
