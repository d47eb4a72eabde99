"""JAX's persistent compilation cache, on for every way in (the app, the command line,
scripts and notebooks) from DiffLab's first use of JAX, in a folder of the user's own.

A program compiled once is kept on disk, so a new process (the app's next launch, a
restarted notebook) loads it instead of compiling it again. JAX's cache keys hold the
program, the JAX and jaxlib versions, the XLA flags and the devices, so versions and
settings never mix. The folder is ``$XDG_CACHE_HOME/difflab/jax`` (else
``~/.cache/difflab/jax``), made readable and writable by its owner alone; a folder owned
by someone else, or that others may write to, is not used (its programs would run as
yours). Set ``DIFFLAB_NO_COMPILATION_CACHE=1`` before DiffLab first uses JAX to leave it
off, or ``JAX_COMPILATION_CACHE_DIR`` to choose the folder; in a running process,
``jax.config.update("jax_enable_compilation_cache", False)`` turns it off.
"""

import os
import stat
import warnings
from pathlib import Path

import jax

OFF_VARIABLE = "DIFFLAB_NO_COMPILATION_CACHE"
MIN_COMPILE_SECONDS = 0.1  # quicker programs are compiled again rather than read back


def default_dir() -> Path:
    """Where DiffLab keeps compiled programs unless told otherwise."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "difflab" / "jax"


def _is_private_folder(path: Path) -> bool:
    """Make ``path`` (owner only) if missing; whether it is a folder of this user's that
    no one else may write to."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = path.stat()
    except OSError:
        return False
    if not stat.S_ISDIR(info.st_mode):
        return False
    if hasattr(os, "getuid"):
        return info.st_uid == os.getuid() and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    return True


def enable_compilation_cache() -> Path | None:
    """Turn the cache on in :func:`default_dir` unless ``DIFFLAB_NO_COMPILATION_CACHE`` is
    set or a folder was already chosen; the folder in use (``None``: off)."""
    if os.environ.get(OFF_VARIABLE, "").strip() not in ("", "0"):
        return None
    chosen = jax.config.jax_compilation_cache_dir
    if chosen:
        return Path(chosen)
    folder = default_dir()
    if not _is_private_folder(folder):
        warnings.warn(f"DiffLab keeps no compiled programs in {folder}: it is not a folder of "
                      f"yours that only you can write to (set {OFF_VARIABLE}=1 to hide this)",
                      stacklevel=2)
        return None
    jax.config.update("jax_compilation_cache_dir", str(folder))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", MIN_COMPILE_SECONDS)
    return folder


def compilation_cache_dir() -> Path | None:
    """The folder JAX keeps compiled programs in (``None`` when the cache is off)."""
    chosen = jax.config.jax_compilation_cache_dir
    if not chosen or not jax.config.jax_enable_compilation_cache:
        return None
    return Path(chosen)
