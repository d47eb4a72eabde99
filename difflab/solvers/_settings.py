"""``SolveSettings``: everything ``simulate`` was told, as plain values, to save and rerun a run."""

import dataclasses
import math
from typing import ClassVar

import jax
import numpy as np


@dataclasses.dataclass(frozen=True)
class SolveSettings:
    """How a run was solved: the solver's name and every argument that made the run.

    ``dt`` is the step actually used (the default one included); ``y0`` the initial
    state; ``key`` the PRNG key as ``(impl, data)`` (``None`` for deterministic models).
    ``optimize`` is ``False`` for a run compiled quickly (``simulate(optimize=False)``,
    whose last bits may differ from an optimized run's).
    ``simulate(model, **settings.kwargs())`` runs it again, bit for bit. Every entry
    point takes ``settings=`` for all of them but ``y0`` (the initial state stays the
    model's), and keyword arguments given beside it override its values.
    """

    solver: str
    t0: float
    t1: float
    dt: float | None
    n_save: int
    rtol: float
    atol: float | tuple[float, ...]  # a tuple: one per state
    max_steps: int
    y0: tuple[float, ...]
    key: tuple | None = None
    precision: str = "float64"
    optimize: bool = True
    DEFAULTS: ClassVar[dict] = {"t0": 0.0, "rtol": 1e-6, "atol": 1e-9, "max_steps": 100_000}

    def kwargs(self) -> dict:
        """``simulate``'s keyword arguments (``t1`` included)."""
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        values.pop("precision")
        values["y0"] = np.asarray(self.y0, dtype=self.precision)
        values["key"] = None if self.key is None else key_from_record(*self.key)
        return values

    def as_dict(self) -> dict:
        """The settings as plain values (``y0`` a list, ``key`` its impl and data)."""
        values = dataclasses.asdict(self)
        values["y0"] = list(self.y0)
        return values


#: The arguments that say how a model is solved, named alike in every entry point
#: (``simulate``, ``stream``, ``sweep``, ``sensitivity``, ``fit``), the command line, the
#: TOML files and the session files.
SOLVE_ARGUMENTS = ("t0", "t1", "dt", "solver", "n_save", "rtol", "atol", "max_steps", "y0",
                   "key")
DEFAULTS = SolveSettings.DEFAULTS  # simulate's defaults for the arguments that have one


def solve_arguments(settings: "SolveSettings | None", defaults: dict = DEFAULTS,
                    **given) -> dict:
    """The solve arguments of a call: each one ``given`` unless ``None``, else the value in
    ``settings`` (a :class:`SolveSettings`), else its default (``None`` if it has none).

    The initial state is never taken from ``settings``: it stays the model's (which may
    depend on the parameters) unless ``y0`` is given.
    """
    if settings is not None and not isinstance(settings, SolveSettings):
        raise TypeError(f"settings must be a SolveSettings (such as traj.settings), not "
                        f"{type(settings).__name__}")
    unknown = [name for name in given if name not in SOLVE_ARGUMENTS]
    if unknown:
        raise TypeError(f"{unknown[0]!r} is not a solve argument")
    base = {} if settings is None else settings.kwargs()
    base.pop("y0", None)
    return check_arguments({name: _first(value, base.get(name), defaults.get(name))
                            for name, value in given.items()})


#: The most steps a run may be allowed (the step counters are 32-bit where x64 is off).
MAX_STEPS_LIMIT = 2**31 - 1


def check_arguments(solve: dict) -> dict:
    """``solve`` with its counts as ``int``, after refusing values no run can use.

    A ``ValueError`` names the argument: a time, step or tolerance that is NaN or
    infinite, an ``n_save`` or ``max_steps`` that is not a whole number, a ``max_steps``
    below 1 or above :data:`MAX_STEPS_LIMIT`. Traced values are left to the run.
    """
    for name in ("t0", "t1", "dt", "rtol", "atol"):
        if name in solve:
            _check_finite(solve[name], name)
    for name, low, high in (("n_save", None, None), ("max_steps", 1, MAX_STEPS_LIMIT)):
        if solve.get(name) is not None:
            solve[name] = _whole_number(solve[name], name, low, high)
    return solve


def _check_finite(value, name: str) -> None:
    if value is None or isinstance(value, jax.core.Tracer):
        return
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        return  # not a number at all: the run's own check names it
    if not np.all(np.isfinite(array)):
        shown = float(array) if array.shape == () else "an array holding NaN or inf"
        raise ValueError(f"{name} must be a finite number, got {shown}")


def _whole_number(value, name: str, low, high) -> int:
    ok = isinstance(value, (int, np.integer, float, np.floating)) and not isinstance(value, bool)
    if ok and not isinstance(value, (int, np.integer)):
        ok = math.isfinite(value) and float(value).is_integer()
    if not ok:
        raise ValueError(f"{name} must be a whole number, got {value!r}")
    value = int(value)
    if (low is not None and value < low) or (high is not None and value > high):
        bounds = f"at least {low}" + (f" and at most {high:,}" if high is not None else "")
        raise ValueError(f"{name} must be {bounds}, got {value}")
    return value


def _first(*values):
    return next((v for v in values if v is not None), None)


def key_to_record(key) -> tuple | None:
    """A ``jax.random`` key as ``(impl, data)`` of plain ints (typed or raw ``uint32`` keys)."""
    if key is None:
        return None
    if jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key):
        impl, data = str(jax.random.key_impl(key)), jax.random.key_data(key)
    else:
        impl, data = "raw_uint32", key
    return impl, tuple(int(v) for v in np.asarray(data, dtype=np.uint32).reshape(-1))


def key_from_record(impl: str, data):
    """The key :func:`key_to_record` described."""
    data = np.asarray(data, dtype=np.uint32)
    if impl == "raw_uint32":
        return jax.numpy.asarray(data)
    return jax.random.wrap_key_data(data, impl=impl)
