"""Reading and checking the TOML files of ``difflab sweep`` and ``difflab fit``.

Every problem is a :class:`ConfigError` whose one-line message names the key at fault.
"""

import math
import tomllib
from pathlib import Path

from .main import UsageError


class ConfigError(UsageError):
    """A config file that cannot be used; the message names the key."""


def read(path) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"cannot read {path}: {error.strerror or error}") from None


def parse(text: str, path) -> dict:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path} is not valid TOML: {error}") from None


def table(data: dict, key: str, allowed=None) -> dict:
    """The table ``key`` (dotted: the last part is looked up in ``data``), keys checked."""
    value = data.get(key.rsplit(".", 1)[-1], {})
    if not isinstance(value, dict):
        raise ConfigError(f"{key} must be a table")
    if allowed is not None:
        for k in value:
            if k not in allowed:
                raise ConfigError(f"unknown key {key}.{k} (allowed: {', '.join(sorted(allowed))})")
    return value


def number(value, key: str, *, integer=False, positive=False):
    ok = isinstance(value, int if integer else (int, float)) and not isinstance(value, bool)
    if not ok or not math.isfinite(value) or (positive and value <= 0):
        kind = "a positive " if positive else "a "
        raise ConfigError(f"{key} must be {kind}{'integer' if integer else 'number'}, "
                          f"not {value!r}")
    return value


def keyed(where: str, fn, *args, **kwargs):
    """``fn(*args, **kwargs)``, its errors as one line starting with ``where`` (the key)."""
    try:
        return fn(*args, **kwargs)
    except (ValueError, TypeError, KeyError) as error:  # before OSError: an untrusted
        raise ConfigError(f"{where}: {one_line(error)}") from None  # model file is both
    except OSError as error:
        raise ConfigError(f"{where}: cannot read {error.filename}: {error.strerror}") from None


def one_line(error) -> str:
    text = str(error.args[0]) if isinstance(error, KeyError) and error.args else str(error)
    return " ".join(text.split())
