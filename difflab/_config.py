"""Process-wide settings: float64 unless the user asks for float32, and XLA's CPU backend
asked to compile whole time-stepping loops into single kernels."""

import os

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


# XLA reads its flags when JAX first runs something, so this holds unless JAX ran before
# DiffLab was imported.
os.environ["XLA_FLAGS"] = with_whole_loop_kernels(os.environ.get("XLA_FLAGS", ""))

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)


def set_precision(precision: str) -> None:
    """Choose ``"float64"`` (the default) or ``"float32"`` for new models and states."""
    if precision not in ("float32", "float64"):
        raise ValueError(f"precision must be 'float32' or 'float64', not {precision!r}")
    jax.config.update("jax_enable_x64", precision == "float64")


def precision() -> str:
    """The floating-point precision new arrays get: ``"float64"`` or ``"float32"``."""
    return "float64" if jax.config.jax_enable_x64 else "float32"
