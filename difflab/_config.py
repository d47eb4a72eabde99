"""Process-wide numerical settings: float64 unless the user asks for float32."""

import jax

jax.config.update("jax_enable_x64", True)


def set_precision(precision: str) -> None:
    """Choose ``"float64"`` (the default) or ``"float32"`` for new models and states."""
    if precision not in ("float32", "float64"):
        raise ValueError(f"precision must be 'float32' or 'float64', not {precision!r}")
    jax.config.update("jax_enable_x64", precision == "float64")


def precision() -> str:
    """The floating-point precision new arrays get: ``"float64"`` or ``"float32"``."""
    return "float64" if jax.config.jax_enable_x64 else "float32"
