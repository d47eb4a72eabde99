"""What a job will need, checked before it runs: its steps, its memory, its output.

A run, a sweep or a parameter space that cannot fit fails at once with one line saying
what it would need, what is allowed and how to allow more, instead of running until
killed, dying in the allocator (a NumPy or XLA traceback, a C++ abort) or being taken by
the kernel's OOM killer. The memory allowed is ``DIFFLAB_MEMORY_LIMIT`` when set (a size
such as ``"40 GiB"``), else a share of the memory the machine has available now.
"""

import math
import os

import jax

MEMORY_LIMIT_VARIABLE = "DIFFLAB_MEMORY_LIMIT"
MEMORY_SHARE = 0.8  # of the memory available now, what one job may plan to take
UNKNOWN_MEMORY = 8 * 2**30  # assumed when the machine does not say what it has
MIN_MEMORY_LIMIT = 2**20
FIXED_MAX_STEPS = 10**9  # fixed steps allowed unless max_steps allows more
INDEX_LIMIT_32 = 2**31 - 1  # step and save indices are 32-bit where x64 is off
_UNITS = (("EiB", 2**60), ("PiB", 2**50), ("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20),
          ("KiB", 2**10))
_PARSE = {"kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40, "kb": 10**3, "mb": 10**6,
          "gb": 10**9, "tb": 10**12, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40, "b": 1}


def format_bytes(n: float) -> str:
    """``n`` bytes for people: ``"7.28 TiB"``, ``"512 MiB"``, ``"900 bytes"``."""
    for unit, scale in _UNITS:
        if n >= scale:
            return f"{n / scale:.3g} {unit}" if n < 1000 * scale or unit == "EiB" \
                else f"{n / scale:,.0f} {unit}"
    return f"{int(n)} bytes"


def parse_bytes(text: str) -> int:
    """Bytes from ``"40 GiB"``, ``"500MB"``, ``"8g"`` or a bare number of bytes."""
    clean = str(text).strip().lower().replace(" ", "")
    unit = next((u for u in _PARSE if clean.endswith(u)), "")
    try:
        value = float(clean[: len(clean) - len(unit)]) * _PARSE.get(unit, 1)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{text!r} is not a size; write one like '40 GiB' or '500 MB'")
    return int(min(value, 2**62))


def _proc_meminfo() -> int | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _cgroup_room() -> int | None:
    """What the cgroup (v2) this process runs in still lets it take, if it is limited."""
    try:
        with open("/sys/fs/cgroup/memory.max") as f:
            limit = f.read().strip()
        with open("/sys/fs/cgroup/memory.current") as f:
            used = int(f.read().strip())
    except (OSError, ValueError):
        return None
    return None if limit == "max" else max(int(limit) - used, 0)


def available_memory() -> int | None:
    """The memory this machine can give now, in bytes (``None`` if it does not say).

    psutil's figure when it is installed, else ``MemAvailable`` of ``/proc/meminfo``,
    else ``os.sysconf``; never more than a cgroup limit leaves.
    """
    try:
        import psutil  # optional

        available = int(psutil.virtual_memory().available)
    except ImportError:
        available = _proc_meminfo()
    if available is None:
        try:
            available = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            available = None
    room = _cgroup_room()
    if room is not None:
        available = room if available is None else min(available, room)
    return available


def memory_limit() -> tuple[int, str]:
    """``(bytes, where the figure comes from)``: the most memory one job may plan to use."""
    text = os.environ.get(MEMORY_LIMIT_VARIABLE, "").strip()
    if text:
        try:
            limit = parse_bytes(text)
        except ValueError as error:
            raise ValueError(f"{MEMORY_LIMIT_VARIABLE}: {error}") from None
        if limit < MIN_MEMORY_LIMIT:
            raise ValueError(f"{MEMORY_LIMIT_VARIABLE}={text!r} is under 1 MiB; give a size "
                             "such as '40 GiB' (a bare number counts bytes)")
        return limit, f"{MEMORY_LIMIT_VARIABLE}={text}"
    available = available_memory()
    if available is None or available < MIN_MEMORY_LIMIT:
        return UNKNOWN_MEMORY, "assumed: this machine does not say what memory it has free"
    return (int(available * MEMORY_SHARE),
            f"{MEMORY_SHARE:.0%} of the {format_bytes(available)} available")


def _device_room() -> tuple[int, str] | None:
    """Free memory of the default accelerator, when it reports it (GPUs do, CPUs do not)."""
    try:
        device = jax.devices()[0]
        stats = device.memory_stats() if device.platform != "cpu" else None
    except Exception:  # a backend without memory statistics
        return None
    if not stats or "bytes_limit" not in stats:
        return None
    room = int(stats["bytes_limit"]) - int(stats.get("bytes_in_use", 0))
    return room, f"free on {device.platform}:{device.id}"


def check_memory(need: float, what: str, hint: str, *, device_need: float | None = None):
    """``ValueError`` (one line) when ``need`` bytes of host memory, or ``device_need``
    bytes of accelerator memory, are more than allowed. ``what`` says what needs it
    (``"keeping 1,000,000,000 saved states of 3 values"``), ``hint`` how to need less."""
    if need <= MIN_MEMORY_LIMIT:
        return  # below any limit: not worth asking the machine
    limit, source = memory_limit()
    if need > limit:
        raise ValueError(
            f"{what} needs about {format_bytes(need)} of memory, more than the "
            f"{format_bytes(limit)} allowed ({source}); {hint}, or set "
            f"{MEMORY_LIMIT_VARIABLE} to allow more (e.g. {MEMORY_LIMIT_VARIABLE}="
            f"'{_round_up(need)}')")
    room = _device_room() if device_need and device_need > MIN_MEMORY_LIMIT else None
    if room is not None and device_need > room[0]:
        raise ValueError(f"{what} needs about {format_bytes(device_need)} of accelerator "
                         f"memory, more than the {format_bytes(room[0])} {room[1]}; {hint}")


def _round_up(need: float) -> str:
    for unit, scale in _UNITS:
        if need >= scale:
            return f"{math.ceil(need / scale)} {unit}"
    return "1 MiB"


def _concrete(*values) -> bool:
    return not any(isinstance(v, jax.core.Tracer) for v in values)


def check_fixed_steps(t0, t1, dt, max_steps: int, n_save=None) -> None:
    """``ValueError`` unless fixed steps ``dt`` from ``t0`` to ``t1`` are few enough to run.

    At most ``max(max_steps, FIXED_MAX_STEPS)`` steps (a billion steps of a small model take
    about half a minute), and, where x64 is off, a step count times saved points that
    fits the 32-bit indices. Traced values are not checked.
    """
    if not _concrete(t0, t1, dt):
        return
    span = float(t1) - float(t0)
    steps = span / float(dt)
    limit = max(int(max_steps), FIXED_MAX_STEPS)
    if not steps <= limit:
        raise ValueError(
            f"t1 - t0 = {span:g} in fixed steps of dt = {float(dt):g} is {steps:.3g} steps, "
            f"more than the {limit:,} allowed; use a larger dt"
            + (", or raise max_steps (--max-steps) to allow more" if steps <= INDEX_LIMIT_32
               else f" (max_steps allows at most {INDEX_LIMIT_32:,})"))
    saved = (min(1001, math.ceil(steps) + 1) if n_save is None else int(n_save)) - 1
    if not jax.config.jax_enable_x64 and math.ceil(steps) * saved > INDEX_LIMIT_32:
        raise ValueError(
            f"{math.ceil(steps):,} steps and {saved + 1:,} saved states are too many for "
            f"float32 precision's 32-bit step indices (steps x (n_save - 1) must stay under "
            f"{INDEX_LIMIT_32:,}); lower n_save or the steps, or use float64 "
            "(difflab.set_precision('float64'))")


def check_step_count(steps: float, what: str, hint: str) -> None:
    """``ValueError`` (one line) when ``what`` takes more than ``FIXED_MAX_STEPS`` steps:
    ``what`` says where they come from (``"lyapunov(1e12) in RK4 steps of dt = 0.01"``),
    ``hint`` how to need fewer."""
    if not steps <= FIXED_MAX_STEPS:
        raise ValueError(f"{what} is {steps:.3g} steps, more than the {FIXED_MAX_STEPS:,} "
                         f"allowed; {hint}")


def check_saved_states(n_save: int, n_states: int, itemsize: int) -> None:
    """A run's saved times and states, on the device and copied to the host, must fit."""
    need = 2 * n_save * (n_states + 1) * itemsize
    values = f"{n_states} value{'s' if n_states != 1 else ''}"
    check_memory(need, f"keeping {n_save:,} saved states of {values}",
                 "lower n_save (--n-save)", device_need=need / 2)


def check_points(n_points: int, n_columns: int, what: str, copies: float = 2.0) -> None:
    """A parameter space of ``n_points`` rows of ``n_columns`` numbers must fit in memory
    (``copies``: the arrays made while building it, each of that size)."""
    need = copies * n_points * max(n_columns, 1) * 8
    check_memory(need, f"{what} of {n_points:,} points over {n_columns} "
                       f"parameter{'s' if n_columns != 1 else ''}", "use fewer points")
