"""Reading and checking the TOML files of ``difflab sweep`` and ``difflab fit``.

Every problem is a :class:`ConfigError` whose one-line message names the key at fault.
"""

import contextlib
import math
import tomllib

import numpy as np

from .errors import UsageError

#: The ``[solve]`` table: the arguments of ``difflab.simulate``, by the same names
#: (``key`` an integer: the key is ``jax.random.key(key)``).
SOLVE = ("solver", "t0", "t1", "dt", "n_save", "rtol", "atol", "max_steps", "key", "y0")
_OLDER = {"name": "solver", "seed": "key"}  # the [solver] table of files written before


class ConfigError(UsageError):
    """A config file that cannot be used; the message names the key."""


MAX_CONFIG_BYTES = 64 << 20  # far above any config (150,000 explicit points are 1.4 MB)


def read(path) -> str:
    """The text of the config file ``path``: a regular UTF-8 file of at most 64 MiB."""
    from difflab.models import FileReadError, read_bounded_text

    try:
        return read_bounded_text(path, MAX_CONFIG_BYTES)
    except FileReadError as error:
        raise ConfigError(f"cannot read {error}") from None


def parse(text: str, path) -> dict:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path} is not valid TOML: {error}") from None
    except RecursionError:
        raise ConfigError(f"{path} is not a config DiffLab reads: its tables or arrays "
                          "are nested too deeply") from None


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


def solve_table(data: dict, allowed=SOLVE) -> dict:
    """The ``[solve]`` table, its values checked.

    Files written before it had a ``[solver]`` table (``name``, ``seed``) and an
    ``[initial_state]`` table; they are read as ``solve.solver``, ``solve.key`` and
    ``solve.y0``.
    """
    if "solver" in data or "initial_state" in data:
        solve = _older_solve(data, allowed)
    else:
        solve = dict(table(data, "solve", allowed))
    for key in ("t0", "t1", "dt", "rtol"):
        if key in solve:
            number(solve[key], f"solve.{key}", positive=key != "t0")
    if "atol" in solve:
        solve["atol"] = _tolerances(solve["atol"], "solve.atol")
    for key in ("n_save", "max_steps", "key"):
        if key in solve:
            number(solve[key], f"solve.{key}", integer=True, positive=key != "key")
    if "solver" in solve and not isinstance(solve["solver"], str):
        raise ConfigError("solve.solver must be a solver name, e.g. \"rk4\"")
    _check_y0(solve.get("y0", []))
    return solve


def _tolerances(value, key: str):
    """A tolerance: a positive number, or a list of one per state (a tuple)."""
    if not isinstance(value, list):
        return number(value, key, positive=True)
    if not value:
        raise ConfigError(f"{key} must be a positive number or a list of one per state, not []")
    return tuple(number(v, f"{key}[{i}]", positive=True) for i, v in enumerate(value))


def _older_solve(data: dict, allowed) -> dict:
    if "solve" in data:
        raise ConfigError("give the solver settings in [solve] alone (not [solver] or "
                          "[initial_state], the names of older files)")
    older = {_OLDER.get(k, k): v for k, v in table(data, "solver").items()}
    state = table(data, "initial_state")
    return table({"solve": {**older, **({"y0": state} if state else {})}}, "solve", allowed)


def _check_y0(y0) -> None:
    if not isinstance(y0, (dict, list)):
        raise ConfigError("solve.y0 must be a list of numbers or a table {state = number}")
    for k, v in y0.items() if isinstance(y0, dict) else enumerate(y0):
        number(v, f"solve.y0.{k}" if isinstance(k, str) else f"solve.y0[{k}]")


def initial_state(model, y0) -> np.ndarray | None:
    """The initial state ``solve.y0`` gives: a list (every state) or a table by state name
    (the other states: the model's); ``None`` when not given."""
    if y0 is None or isinstance(y0, list):
        return None if y0 is None else np.asarray(y0, dtype=float)
    state = np.array(model.initial_state(), dtype=float)
    for name, value in y0.items():
        state[keyed(f"solve.y0.{name}", model.state_index, name)] = value
    return state


def number(value, key: str, *, integer=False, positive=False):
    ok = isinstance(value, int if integer else (int, float)) and not isinstance(value, bool)
    if ok and integer and not -(2**63) <= value < 2**63:
        raise ConfigError(f"{key} must be an integer that fits in 64 bits, not {value}")
    if not ok or not math.isfinite(value) or (positive and value <= 0):
        kind = "a positive " if positive else ("an " if integer else "a ")
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
    except (MemoryError, OverflowError) as error:  # e.g. a grid too large to hold
        raise ConfigError(f"{where}: too large ({one_line(error) or 'out of memory'})") from None


@contextlib.contextmanager
def naming(path):
    """Within the block, a :class:`ConfigError` names the file ``path`` first."""
    try:
        yield
    except ConfigError as error:
        if str(path) in str(error):
            raise
        raise ConfigError(f"{path}: {error}") from None


def one_line(error) -> str:
    text = str(error.args[0]) if isinstance(error, KeyError) and error.args else str(error)
    return " ".join(text.split())
