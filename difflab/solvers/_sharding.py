"""Batch sharding: one mesh axis over every device, each device running its own loop.

The small API that sweeps and multi-start fits share::

    use_all_cpu_cores()                        # done by `import difflab`: a CPU device per core
    mesh = batch_mesh()                        # all devices (all processes), axis "batch"
    n_pad = padded_size(n, mesh.size)          # the batch, rounded up to fill every device
    x = pad_batch(x, n_pad)                    # pad by repeating the last row (valid values)
    x = put_batch(x, mesh)                     # lay the leading axis over the mesh
    f = jax.jit(map_batch(fn, mesh, replicated=(1,)))  # fn(x_rows, shared) on every device
    y = local_rows(f(x, shared))[:n]           # this process's rows, on the host

``map_batch`` wraps ``jax.shard_map``: each device runs ``fn`` on its block of rows with no
collective between devices, so an adaptive solver's loop on one device never waits for
another's (a sharded ``jit(vmap(...))`` puts an all-reduce in the loop condition instead:
diffrax issue #407). The mesh axis is ``AxisType.Auto``: JAX 0.10 makes explicit axes by
default, which diffrax rejects.

Past one machine, call :func:`initialize_distributed` first; the mesh then spans every
process's devices, ordered by process, so each process owns one contiguous block of rows.
"""

import os
import warnings

import jax
import numpy as np
from jax.extend.core import jaxpr_as_fun
from jax.sharding import AxisType, Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from .. import _config

BATCH = "batch"


def select_devices(devices=None) -> list:
    """The devices to use: all (``None``), the first ``n`` (an int), or those given."""
    every = sorted(jax.devices(), key=lambda d: (d.process_index, d.id))
    if devices is None:
        return every
    if isinstance(devices, (int, np.integer)) and not isinstance(devices, bool):
        if not 1 <= devices <= len(every):
            raise ValueError(f"devices must be between 1 and {len(every)}, got {devices}")
        return every[: int(devices)]
    chosen = list(devices)
    if not chosen:
        raise ValueError("devices must name at least one device")
    return chosen


def batch_mesh(devices=None) -> Mesh:
    """A one-axis ``Mesh`` named ``"batch"`` (``AxisType.Auto``) over ``devices``."""
    chosen = select_devices(devices)
    return Mesh(np.array(chosen), (BATCH,), axis_types=(AxisType.Auto,))


def batch_sharding(mesh: Mesh) -> NamedSharding:
    """``NamedSharding(mesh, P("batch"))``: leading axis split over the devices."""
    return NamedSharding(mesh, P(BATCH))


def padded_size(n: int, multiple: int) -> int:
    """``n`` rounded up to a multiple of ``multiple`` (at least one multiple)."""
    return max(1, -(-int(n) // int(multiple))) * int(multiple)


def pad_batch(tree, size: int):
    """Pad every leaf's leading axis to ``size`` rows by repeating its last row.

    Repeating a real row (rather than zeros) keeps padded points valid inputs, so they
    cannot fail or slow a solver down; callers drop them afterwards.
    """

    def pad(x):
        x = np.asarray(x)
        extra = size - x.shape[0]
        if extra < 0:
            raise ValueError(f"cannot pad {x.shape[0]} rows down to {size}")
        if extra == 0:
            return x
        return np.concatenate([x, np.repeat(x[-1:], extra, axis=0)])

    return jax.tree.map(pad, tree)


def process_rows(n: int, mesh: Mesh) -> slice:
    """The rows of an ``n``-row batch (a multiple of ``mesh.size``) this process holds."""
    devices = list(mesh.devices.flat)
    per_device = n // len(devices)
    mine = [i for i, d in enumerate(devices) if d.process_index == jax.process_index()]
    if not mine:
        return slice(0, 0)
    if mine != list(range(mine[0], mine[-1] + 1)):
        raise ValueError("the mesh must list each process's devices contiguously")
    return slice(mine[0] * per_device, (mine[-1] + 1) * per_device)


def put_batch(tree, mesh: Mesh, global_rows: int | None = None):
    """Lay each leaf's leading axis over ``mesh``.

    In one process the leaves are the whole batch. Over several processes each passes
    only its own rows (see :func:`process_rows`) and ``global_rows``, the total.
    """
    sharding = batch_sharding(mesh)
    if jax.process_count() == 1:
        return jax.device_put(tree, sharding)

    def put(x):
        x = np.asarray(x)
        shape = (int(global_rows), *x.shape[1:])
        return jax.make_array_from_process_local_data(sharding, x, shape)

    return jax.tree.map(put, tree)


def map_batch(fn, mesh: Mesh, *, replicated: tuple[int, ...] = ()):
    """``fn`` run on every device on its own rows, with no collectives: a ``shard_map``.

    Each positional argument is split along its leading axis over the ``"batch"`` axis,
    except those whose positions are in ``replicated``, which every device receives
    whole. Every output is split along its leading axis. Wrap the result in ``jax.jit``.
    ``fn`` is traced outside the mesh (:func:`_traced_unsharded`), so lineax's linear
    solves (implicit solvers, root finds) work inside it.
    """

    def specs(*args):
        return tuple(P() if i in replicated else P(BATCH) for i in range(len(args)))

    def mapped(*args):
        per_device = [a if i in replicated else _rows_of(a, mesh.size)
                      for i, a in enumerate(args)]
        body = _traced_unsharded(fn, *per_device)
        return jax.shard_map(body, mesh=mesh, in_specs=specs(*args), out_specs=P(BATCH),
                             check_vma=False)(*args)

    return mapped


def _rows_of(tree, n_devices: int):
    """``tree`` (leaves split on their leading axis) as one device's share of it."""
    return jax.tree.map(lambda x: _like(x, (x.shape[0] // n_devices, *x.shape[1:])), tree)


def _like(x, shape=None):
    """A shape, dtype and weak type like ``x``'s, with no sharding."""
    aval = jax.typeof(x)
    return jax.ShapeDtypeStruct(x.shape if shape is None else shape, aval.dtype,
                                weak_type=aval.weak_type)


def _traced_unsharded(fn, *examples):
    """``fn`` traced once on ``examples``' shapes with no mesh about, then replayed.

    Inside ``shard_map`` every traced value carries the mesh's manual axis in its type;
    lineax keeps that axis in an operator's structure but drops it from the vector it
    solves for, then refuses the pair as mismatched ("pytree does not match
    out_structure": every implicit diffrax solver, optimistix's root finds), and
    equinox's closure conversion refuses it likewise. Traced outside the mesh, no value
    carries the axis; the jaxpr is then evaluated on the device's own rows.
    """
    examples = jax.tree.map(_like, examples)
    with jax.sharding.use_abstract_mesh(jax.sharding.AbstractMesh((), ())):
        closed, out_shape = jax.make_jaxpr(fn, return_shape=True)(*examples)
    out_tree = jax.tree.structure(out_shape)

    def replayed(*args):
        return jax.tree.unflatten(out_tree, jaxpr_as_fun(closed)(*jax.tree.leaves(args)))

    return replayed


def local_rows(tree):
    """This process's rows of each sharded leaf, joined in order, as NumPy arrays."""

    def gather(x):
        if jax.process_count() == 1 or x.is_fully_addressable:
            return np.asarray(x)
        shards = sorted(x.addressable_shards, key=lambda s: s.index[0].start or 0)
        unique = {s.index[0].start: s for s in shards}
        return np.concatenate([np.asarray(s.data) for s in unique.values()])

    return jax.tree.map(gather, tree)


def collectives_in(compiled_text: str) -> list[str]:
    """The cross-device collective ops named in a compiled program's HLO text."""
    ops = ("all-reduce", "all-gather", "all-to-all", "collective-permute",
           "reduce-scatter", "collective-broadcast")
    found = {op for op in ops if f" {op}(" in compiled_text or f" {op}-start(" in compiled_text}
    return sorted(found)


def use_all_cpu_cores(*, wide_vectors: bool = True) -> int:
    """Give JAX one CPU device per core, so a sweep on the CPU uses every core.

    ``import difflab`` already does this (``DIFFLAB_CPU_DEVICES=N`` asks for ``N``
    devices instead, ``1`` keeps JAX's single device); call it only after choosing
    otherwise. It leaves a count already chosen alone
    (``XLA_FLAGS=--xla_force_host_platform_device_count=N`` or the ``jax_num_cpu_devices``
    option). With ``wide_vectors``, on a CPU with AVX-512 it also asks XLA for 512-bit
    vectors. Returns the CPU device count; called after JAX has started, it warns and
    returns the count JAX has.
    """
    if wide_vectors:
        os.environ["XLA_FLAGS"] = _config.with_wide_vectors(os.environ.get("XLA_FLAGS", ""))
    chosen = _config.chosen_cpu_devices()
    if chosen is not None:
        return chosen
    cores = _config.cpu_cores()
    if _config.request_cpu_devices(cores):
        return cores
    count = len(jax.devices("cpu"))
    if count < cores:
        warnings.warn(
            f"use_all_cpu_cores() was called after JAX started, so JAX keeps {count} CPU "
            f"device(s). Call it before anything runs on JAX (importing difflab first does "
            f"it), or set XLA_FLAGS=--xla_force_host_platform_device_count={cores} before "
            "starting Python.", RuntimeWarning, stacklevel=2)
    return count


_ENV = {
    "coordinator_address": ("DIFFLAB_COORDINATOR", "JAX_COORDINATOR_ADDRESS"),
    "num_processes": ("DIFFLAB_NUM_PROCESSES", "JAX_NUM_PROCESSES"),
    "process_id": ("DIFFLAB_PROCESS_ID", "JAX_PROCESS_ID"),
}


def initialize_distributed(coordinator_address=None, num_processes=None, process_id=None):
    """Join JAX's multi-process runtime (``jax.distributed.initialize``); call it first.

    Arguments left ``None`` come from ``DIFFLAB_COORDINATOR`` / ``DIFFLAB_NUM_PROCESSES``
    / ``DIFFLAB_PROCESS_ID`` (or the ``JAX_*`` equivalents); where those are unset too,
    JAX detects the cluster itself (SLURM, Open MPI, Kubernetes, Cloud TPU).
    """
    given = dict(coordinator_address=coordinator_address, num_processes=num_processes,
                 process_id=process_id)
    for name, keys in _ENV.items():
        if given[name] is None:
            given[name] = next((os.environ[k] for k in keys if os.environ.get(k)), None)
    for name in ("num_processes", "process_id"):
        if given[name] is not None:
            given[name] = int(given[name])
    jax.distributed.initialize(**given)
    return jax.process_index(), jax.process_count()
