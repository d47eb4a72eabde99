"""JAX's persistent compilation cache, on for the app and the CLI."""

import os
from pathlib import Path

import jax


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "difflab" / "jax"


def enable_compilation_cache() -> None:
    """Keep compiled programs on disk so a second launch skips their compilation."""
    if os.environ.get("DIFFLAB_NO_COMPILATION_CACHE"):
        return
    jax.config.update("jax_compilation_cache_dir", str(cache_dir()))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.2)
