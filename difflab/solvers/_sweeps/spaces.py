"""Parameter spaces: the points of a sweep, as named columns of equal length.

A column is named after a model parameter (``"rho"``), the whole initial state
(``"y0"``, one row of ``n_states`` values per point) or one of its components
(``"y0.x"``). Build a space from a dict of equal-length arrays (the points, zipped), or
with :func:`grid`, :func:`uniform`, :func:`latin_hypercube` and :func:`sobol`; the
random ones draw from an explicit ``jax.random`` key, so a space is reproducible.
"""

import dataclasses
import difflib
import itertools
import math

import jax
import numpy as np

from .._resources import check_points

#: Primitive polynomials and initial direction numbers of the first 21 Sobol dimensions
#: (Joe and Kuo, "new-joe-kuo-6.21201", the table SciPy uses).
_SOBOL = [(1, (1,)), (3, (1,)), (7, (1, 3)), (11, (1, 3, 1)), (13, (1, 1, 1)),
          (19, (1, 1, 3, 3)), (25, (1, 3, 5, 13)), (37, (1, 1, 5, 5, 17)),
          (41, (1, 1, 5, 5, 5)), (47, (1, 1, 7, 11, 19)), (55, (1, 1, 5, 1, 1)),
          (59, (1, 1, 1, 3, 11)), (61, (1, 3, 5, 5, 31)), (67, (1, 3, 3, 9, 7, 49)),
          (91, (1, 1, 1, 15, 21, 21)), (97, (1, 3, 1, 13, 27, 49)),
          (103, (1, 1, 1, 15, 7, 5)), (109, (1, 3, 1, 15, 13, 25)),
          (115, (1, 1, 5, 5, 19, 61)), (131, (1, 3, 7, 11, 23, 15, 103)),
          (137, (1, 3, 7, 13, 13, 15, 69))]
_BITS = 32


@dataclasses.dataclass(frozen=True, eq=False)
class Space:
    """The points of a sweep: ``columns[name]`` holds one value (or state row) per point.

    ``shape`` is the grid shape for :func:`grid` spaces (``(len,)`` otherwise), so
    ``space.reshape(res.final)`` lays results out on the grid; ``kind`` says how the
    points were made.
    """

    columns: dict
    shape: tuple
    kind: str = "points"

    def __post_init__(self):
        if not self.columns:
            raise ValueError("a parameter space needs at least one column")
        lengths = {name: len(v) for name, v in self.columns.items()}
        if len(set(lengths.values())) != 1:
            raise ValueError(f"space columns differ in length: {lengths}")
        if math.prod(self.shape) != len(self):
            raise ValueError(f"space shape {self.shape} does not hold {len(self)} points")

    def __len__(self) -> int:
        return len(next(iter(self.columns.values())))

    def __repr__(self) -> str:
        return f"Space({describe(self)})"

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.columns)

    def __getitem__(self, name: str) -> np.ndarray:
        return self.columns[name]

    def rows(self, start: int, stop: int) -> dict:
        """The columns of points ``start .. stop - 1``."""
        return {name: v[start:stop] for name, v in self.columns.items()}

    def reshape(self, values):
        """Per-point ``values`` (leading axis: points) laid out on the space's shape."""
        values = np.asarray(values)
        return values.reshape(*self.shape, *values.shape[1:])

    def check(self, model) -> None:
        """Raise ``ValueError`` naming the first column ``model`` cannot take."""
        specs, states = model.parameter_specs(), tuple(model.state_names)
        for name, values in self.columns.items():
            _check_column(type(model).__name__, name, values, specs, states)


def _check_column(model_name, name, values, specs, states):
    if name == "y0":
        if values.ndim != 2 or values.shape[1] != len(states):
            raise ValueError(f"space 'y0' must hold rows of {len(states)} states "
                             f"{states}, not shape {values.shape[1:]}")
        return
    if values.ndim != 1:
        raise ValueError(f"space {name!r} must hold one number per point")
    if name.startswith("y0."):
        if name[3:] not in states:
            raise ValueError(f"space {name!r}: {model_name} has no state {name[3:]!r}; "
                             f"its states are {', '.join(states)}")
        return
    if name not in specs:
        close = difflib.get_close_matches(name, [*specs, "y0"], n=1, cutoff=0.5)
        hint = f"; did you mean {close[0]}?" if close else ""
        raise ValueError(f"space {name!r}: {model_name} has no parameter {name!r}{hint} "
                         f"(its parameters are {', '.join(specs) or 'none'})")


def _column(name: str, values) -> np.ndarray:
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"space {name!r}: values must be numbers, not {values!r}") from None
    if array.ndim == 0:
        array = array[None]
    if array.shape[0] == 0:
        raise ValueError(f"space {name!r} has no values")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"space {name!r} holds values that are not finite")
    return array


def as_space(space) -> Space:
    """A :class:`Space` from a Space or a dict of equal-length arrays (zipped)."""
    if isinstance(space, Space):
        return space
    if not isinstance(space, dict):
        raise TypeError(f"space must be a dict of arrays or a Space, not {type(space).__name__}")
    columns = {str(k): _column(str(k), v) for k, v in space.items()}
    n = len(next(iter(columns.values()))) if columns else 0
    return Space(columns, (n,), "points")


def _axes(mapping, kwargs) -> dict:
    axes = dict(mapping or {}, **kwargs)
    if not axes:
        raise ValueError("give at least one parameter to sweep over")
    return axes


def grid(axes: dict | None = None, /, **more) -> Space:
    """Every combination of the given values: ``grid(rho=np.linspace(0, 28, 100), sigma=[...])``.

    The first parameter varies slowest; ``space.shape`` is the grid's shape. Initial-state
    components go in by name: ``grid({"y0.x": [-1, 0, 1]}, rho=[10, 28])``.
    """
    columns = {name: _column(name, v) for name, v in _axes(axes, more).items()}
    for name, v in columns.items():
        if v.ndim != 1:
            raise ValueError(f"grid axis {name!r} must be one-dimensional")
    shape = tuple(len(v) for v in columns.values())
    check_points(math.prod(shape), len(shape), f"a grid of {' x '.join(map(str, shape))}")
    mesh = np.meshgrid(*columns.values(), indexing="ij")
    return Space({n: m.reshape(-1) for n, m in zip(columns, mesh)}, shape, "grid")


def _ranges(axes) -> dict:
    """name -> (low, high, log) from ``(low, high)`` or ``(low, high, "log")``."""
    ranges = {}
    for name, r in axes.items():
        r = tuple(r) if isinstance(r, (tuple, list)) else (r,)
        log = len(r) == 3 and r[2] == "log"
        if len(r) not in (2, 3) or (len(r) == 3 and not log):
            raise ValueError(f"range {name!r} must be (low, high) or (low, high, 'log'), not {r}")
        low, high = float(r[0]), float(r[1])
        if not low < high or (log and low <= 0):
            raise ValueError(f"range {name!r}: need 0 < low < high on a log scale, "
                             f"low < high otherwise; got ({low}, {high})")
        ranges[name] = (low, high, log)
    return ranges


def _scaled(unit: np.ndarray, ranges: dict, kind: str) -> Space:
    columns = {}
    for j, (name, (low, high, log)) in enumerate(ranges.items()):
        u = unit[:, j]
        columns[name] = low * (high / low) ** u if log else low + (high - low) * u
    return Space(columns, (unit.shape[0],), kind)


def _count(n) -> int:
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
        raise ValueError(f"the number of points must be a positive integer, not {n!r}")
    return int(n)


def uniform(key, n: int, axes: dict | None = None, /, **more) -> Space:
    """``n`` independent uniform samples: ``uniform(jax.random.key(0), 1000, rho=(0, 28))``.

    A range ``(low, high, "log")`` samples uniformly in the logarithm.
    """
    ranges = _ranges(_axes(axes, more))
    check_points(_count(n), len(ranges), "a uniform sample", copies=4)
    unit = jax.random.uniform(key, (_count(n), len(ranges)), dtype=np.float64)
    return _scaled(np.asarray(unit, dtype=np.float64), ranges, "uniform")


def latin_hypercube(key, n: int, axes: dict | None = None, /, **more) -> Space:
    """``n`` Latin-hypercube samples: each range cut in ``n`` strata, one point in each."""
    ranges = _ranges(_axes(axes, more))
    n = _count(n)
    check_points(n, len(ranges), "a Latin hypercube", copies=6)
    k_perm, k_jitter = jax.random.split(key)
    perms = [jax.random.permutation(k, n) for k in jax.random.split(k_perm, len(ranges))]
    jitter = np.asarray(jax.random.uniform(k_jitter, (n, len(ranges)), dtype=np.float64))
    unit = (np.stack([np.asarray(p) for p in perms], axis=1) + jitter) / n
    return _scaled(unit, ranges, "latin_hypercube")


def _direction_numbers(dim: int) -> np.ndarray:
    """The ``_BITS`` direction integers of Sobol dimension ``dim``."""
    poly, m_init = _SOBOL[dim]
    degree = poly.bit_length() - 1
    m = [1] * _BITS if degree == 0 else list(m_init)
    for k in range(len(m), _BITS):
        new = m[k - degree] ^ (m[k - degree] << degree)
        for i in range(1, degree):
            if (poly >> (degree - i)) & 1:
                new ^= m[k - i] << i
        m.append(new)
    return np.array([m[k] << (_BITS - 1 - k) for k in range(_BITS)], dtype=np.uint64)


def sobol_unit(n: int, d: int) -> np.ndarray:
    """The first ``n`` points of the unscrambled ``d``-dimensional Sobol sequence in [0, 1)."""
    if d > len(_SOBOL):
        raise ValueError(f"Sobol spaces support at most {len(_SOBOL)} dimensions, not {d}")
    index = np.arange(n, dtype=np.uint64)
    gray = index ^ (index >> np.uint64(1))
    out = np.zeros((n, d), dtype=np.uint64)
    for j in range(d):
        v = _direction_numbers(j)
        for k in range(max(1, int(n).bit_length())):
            bit = (gray >> np.uint64(k)) & np.uint64(1)
            out[:, j] ^= bit * v[k]
    return out


def sobol(key, n: int, axes: dict | None = None, /, scramble: bool = True, **more) -> Space:
    """``n`` points of a Sobol sequence (a power of two keeps it balanced).

    With ``scramble`` (the default) a random digital shift drawn from ``key`` is applied,
    which keeps the sequence's low discrepancy and makes its points random.
    """
    ranges = _ranges(_axes(axes, more))
    check_points(_count(n), len(ranges), "a Sobol sequence", copies=2 + 4 / len(ranges))
    bits = sobol_unit(_count(n), len(ranges))
    if scramble:
        shift = jax.random.bits(key, (len(ranges),), dtype=np.uint32)
        bits ^= np.asarray(shift).astype(np.uint64)
    return _scaled(bits.astype(np.float64) / 2.0**_BITS, ranges, "sobol")


def describe(space: Space) -> str:
    """One line: the kind, size and columns of a space."""
    kind = "" if space.kind == "points" else f"{space.kind} of "
    shape = f" ({'x'.join(map(str, space.shape))})" if len(space.shape) > 1 else ""
    return f"{kind}{len(space)} points{shape} over {short_names(space.names)}"


def short_names(names, most: int = 6) -> str:
    """``names`` joined by commas, the first ``most`` of them and how many more."""
    names = list(names)
    shown = ", ".join(names[:most])
    return shown if len(names) <= most else f"{shown}, ... ({len(names)} in all)"


def product(*spaces: Space) -> Space:
    """Every point of the first space combined with every point of the next ones."""
    spaces = [as_space(s) for s in spaces]
    names = list(itertools.chain.from_iterable(s.names for s in spaces))
    if len(set(names)) != len(names):
        raise ValueError(f"spaces share columns: {names}")
    check_points(math.prod(len(s) for s in spaces), len(names), "a product", copies=3)
    index = np.meshgrid(*[np.arange(len(s)) for s in spaces], indexing="ij")
    columns = {}
    for s, i in zip(spaces, index):
        columns.update({name: v[i.reshape(-1)] for name, v in s.columns.items()})
    return Space(columns, tuple(itertools.chain.from_iterable(s.shape for s in spaces)),
                 "product")
