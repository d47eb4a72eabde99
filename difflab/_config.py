"""Process-wide settings: float64 unless the user asks for float32, one JAX CPU device per
core, and XLA's CPU backend asked to compile whole time-stepping loops into single kernels
with its quicker-compiling emitters."""

import os
import sys
import warnings

SMALL_LOOP_OPTION = "xla_cpu_small_while_loop_byte_threshold"
SMALL_LOOP_BYTES = 100_000_000  # XLA's own default is 1 kB


def with_whole_loop_kernels(flags: str) -> str:
    """``XLA_FLAGS`` with XLA's CPU small-while-loop limit raised, unless it is already set.

    XLA's CPU backend compiles a ``while`` loop into one kernel only if its body touches
    under 1 kB of buffers; a bigger body (a stepper carrying forward sensitivities, a
    16-state model, an adjoint) runs op by op with a dispatch per operation, which makes
    gradients of small ODEs 5-50x and sweeps 1.5x slower than they need to be
    (``docs/fitting.md``). Set the option yourself in ``XLA_FLAGS`` (1024 is XLA's
    default) and DiffLab leaves it alone.
    """
    if SMALL_LOOP_OPTION in flags:
        return flags
    option = f"{SMALL_LOOP_OPTION}={SMALL_LOOP_BYTES}"
    words = flags.split()
    for i, word in enumerate(words):  # XLA keeps one comma-separated list of these
        if word.startswith("--xla_backend_extra_options="):
            words[i] = f"{word},{option}"
            return " ".join(words)
    return " ".join([*words, f"--xla_backend_extra_options={option}"])


CPU_DEVICES_VARIABLE = "DIFFLAB_CPU_DEVICES"
DEVICE_COUNT_VARIABLE = "JAX_NUM_CPU_DEVICES"  # JAX's jax_num_cpu_devices, read as it loads
X64_VARIABLE = "JAX_ENABLE_X64"
DEVICE_COUNT_FLAG = "xla_force_host_platform_device_count"
VECTOR_WIDTH_FLAG = "xla_cpu_prefer_vector_width"


def _has_avx512() -> bool:
    try:
        with open("/proc/cpuinfo") as f:
            return any(line.startswith("flags") and " avx512f" in line for line in f)
    except OSError:
        return False


def with_wide_vectors(flags: str) -> str:
    """``XLA_FLAGS`` asking for 512-bit vectors on a CPU with AVX-512, unless a width is set.

    LLVM's default is 256 bits; 512 steps a sweep's blocks about 1.4x faster
    (``benchmarks/sweep_throughput.py``), with the same results.
    """
    if VECTOR_WIDTH_FLAG in flags or not _has_avx512():
        return flags
    return f"{flags} --{VECTOR_WIDTH_FLAG}=512".strip()


EMITTER_FLAG = "xla_cpu_use_fusion_emitters"
EMITTER_JAXLIBS = ("0.10.",)  # jaxlib versions known to take the flag (an unknown one aborts)


def with_quick_compiles(flags: str, jaxlib: str | None = None) -> str:
    """``XLA_FLAGS`` choosing XLA's CPU loop emitters that compile 2-3x faster, unless set.

    The newer fusion emitters of XLA's CPU backend take most of a first call's compile
    time; the classic emitters compile the same programs in a third to a half of it, and
    the programs run as fast (``docs/performance.md``, "First calls"). Applied only for
    jaxlib versions known to have the flag (``jaxlib``: the installed version), since
    XLA aborts on a flag it does not know; set it yourself in ``XLA_FLAGS`` to choose.
    """
    if EMITTER_FLAG in flags:
        return flags
    if jaxlib is None:
        from importlib.metadata import PackageNotFoundError, version

        try:
            jaxlib = version("jaxlib")
        except PackageNotFoundError:
            return flags
    if not jaxlib.startswith(EMITTER_JAXLIBS):
        return flags
    return f"{flags} --{EMITTER_FLAG}=false".strip()


def cpu_cores() -> int:
    """The number of cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def chosen_cpu_devices() -> int | None:
    """The CPU device count already chosen (``XLA_FLAGS`` or JAX's ``jax_num_cpu_devices``)."""
    for word in os.environ.get("XLA_FLAGS", "").split():
        if DEVICE_COUNT_FLAG in word:
            return int(word.partition("=")[2] or 1)
    if "jax" not in sys.modules:
        count = int(os.environ.get(DEVICE_COUNT_VARIABLE, -1) or -1)
    else:
        import jax

        count = jax.config.jax_num_cpu_devices
    return None if count == -1 else int(count)


def request_cpu_devices(count: int) -> bool:
    """Ask JAX for ``count`` CPU devices; ``False`` when JAX has started (too late)."""
    import jax

    try:
        jax.config.update("jax_num_cpu_devices", int(count))
    except RuntimeError:
        return False
    return True


def _cpu_devices_wanted() -> int:
    """The CPU device count ``DIFFLAB_CPU_DEVICES`` asks for (unset or ``all``: every core)."""
    value = os.environ.get(CPU_DEVICES_VARIABLE, "all").strip().lower()
    if value in ("", "all"):
        return cpu_cores()
    if value.isdigit() and int(value) >= 1:
        return int(value)
    warnings.warn(f"{CPU_DEVICES_VARIABLE}={value!r} is not a number of devices or 'all'; "
                  "using one CPU device per core", stacklevel=3)
    return cpu_cores()


def _jax_defaults() -> None:
    """float64, and one CPU device per core (or ``DIFFLAB_CPU_DEVICES``) unless the count
    was chosen. Before JAX is imported they are left in the environment variables JAX
    reads as it loads, so ``import difflab`` does not load JAX (``difflab --version``
    answers at once); if it has loaded, they are set now (the device count only if JAX
    has not started: ``use_all_cpu_cores`` says so when asked)."""
    wanted = _cpu_devices_wanted()
    more_devices = wanted > 1 and chosen_cpu_devices() is None
    if "jax" not in sys.modules:
        os.environ[X64_VARIABLE] = "1"
        if more_devices:
            os.environ[DEVICE_COUNT_VARIABLE] = str(wanted)
        return
    import jax

    jax.config.update("jax_enable_x64", True)
    if more_devices:
        request_cpu_devices(wanted)


def start_jax() -> None:
    """What DiffLab sets up once JAX is loaded: the compilation cache (once per process)."""
    global _started
    if not _started:
        from . import _compilation_cache

        _compilation_cache.enable_compilation_cache()
        _started = True


_started = False
# XLA reads its flags when JAX first runs something, so this holds unless JAX ran before
# DiffLab was imported.
os.environ["XLA_FLAGS"] = with_whole_loop_kernels(
    with_wide_vectors(with_quick_compiles(os.environ.get("XLA_FLAGS", ""))))
_jax_defaults()


def set_precision(precision: str) -> None:
    """Choose ``"float64"`` (the default) or ``"float32"`` for new models and states."""
    if precision not in ("float32", "float64"):
        raise ValueError(f"precision must be 'float32' or 'float64', not {precision!r}")
    import jax

    jax.config.update("jax_enable_x64", precision == "float64")


def precision() -> str:
    """The floating-point precision new arrays get: ``"float64"`` or ``"float32"``."""
    import jax

    return "float64" if jax.config.jax_enable_x64 else "float32"
