"""Observables: what a sweep keeps of each point's trajectory, reduced on the device.

An observable is a function of a :class:`Trajectory` returning a number or a vector, or
one of these specs written as text (as a sweep's TOML file does)::

    "max(x)"  "min(x)"  "mean(x)"  "std(x)"  "final(x)"  "amplitude(x)"  "period(x)"
    "max(x, after=50)"                 only the saved times t >= 50 count (the transient)
    "maxima(x, after=50, k=64)"        the first k local maxima of x after t = 50
    "section(x, y=0, after=50, k=64)"  x where y crosses 0 upwards after t = 50
    "lyapunov(100, dt=0.01)"           the largest Lyapunov exponent over 100 more

``amplitude`` is ``(max - min) / 2``; ``period`` the mean time between upward crossings
of the state's mean value. Both are NaN unless the kept samples are a steady oscillation
(:func:`periodicity`: a damped one settles to a fixed point, a growing or chaotic one has
not settled); ``SweepResult.notes`` says why, in words. ``maxima`` and
``section`` give ``k`` values per point (default 64, NaN-padded): an orbit diagram
(``orbits``); ``lyapunov`` continues from the end of the run (``chaos``).
"""

import functools
import re

import jax
import jax.numpy as jnp
import numpy as np

from .chaos import DEFAULT_DT, DEFAULT_EVERY, LargestLyapunov
from .orbits import Maxima, Section
from .spec import DEFAULT_VALUES, SpecObservable, after_mask, number_text, spec_text

_CALL = re.compile(r"\s*([a-z_]+)\s*\((.*)\)\s*", re.DOTALL)
_ARG = re.compile(r"\s*(?:([A-Za-z_][\w.]*)\s*=\s*)?([^=,()\s]+)\s*")
MAX_VALUES = 100_000  # k: values per point of an orbit-diagram observable


def _count(m):
    return jnp.sum(m)


def _mean(xs, m):
    return jnp.sum(jnp.where(m, xs, 0.0)) / _count(m)


def _std(xs, m):
    return jnp.sqrt(_mean((xs - _mean(xs, m)) ** 2, m))


def _extreme(fn, fill):
    return lambda ts, xs, m: jnp.where(_count(m) > 0, fn(jnp.where(m, xs, fill)), jnp.nan)


def _crossings(ts, s, m):
    """The upward crossings of zero by ``s`` among the kept samples: a mask over the
    intervals between samples, and the interpolated crossing time of each."""
    up = m[:-1] & (s[:-1] < 0) & (s[1:] >= 0)
    denominator = jnp.where(up, s[1:] - s[:-1], 1.0)
    return up, ts[:-1] - s[:-1] * (ts[1:] - ts[:-1]) / denominator


def _cycle(ts, s, up, crossing, k):
    """``(amplitude, period)`` of complete cycle ``k`` (1-based: from the ``k``-th
    upward crossing to the next)."""
    number = jnp.cumsum(up)  # the crossings at or before each interval
    inside = jnp.concatenate([jnp.zeros(1, bool), number == k])  # after crossing k only
    top = jnp.max(jnp.where(inside, s, -jnp.inf))
    bottom = jnp.min(jnp.where(inside, s, jnp.inf))
    start = jnp.min(jnp.where(up & (number == k), crossing, jnp.inf))
    stop = jnp.min(jnp.where(up & (number == k + 1), crossing, jnp.inf))
    return top - bottom, stop - start


def _halves(ts, s, m):
    """The range of ``s`` over the first and over the second half of the kept times."""
    first = jnp.min(jnp.where(m, ts, jnp.inf))
    middle = 0.5 * (first + jnp.max(jnp.where(m, ts, -jnp.inf)))
    early, late = m & (ts < middle), m & (ts >= middle)

    def spread(k):
        return jnp.max(jnp.where(k, s, -jnp.inf)) - jnp.min(jnp.where(k, s, jnp.inf))

    return spread(early), spread(late)


def periodicity(ts, xs, m):
    """Why the kept samples of ``xs`` are not a steady oscillation: ``PERIODIC`` (0) if
    they are, else one of the codes of ``NOT_PERIODIC``.

    It settles if it varies by less than ``FLAT`` of the state's largest magnitude over
    the run (what is left is the solver's error) or its range over the second half of
    the window is smaller than over the first. Steady: at least two complete cycles, the
    same range over both halves, and the last cycle's amplitude and period those of the
    cycle half-way through (to 2 %, plus what sampling at the saved step misses of a peak).
    """
    s = xs - _mean(xs, m)
    up, crossing = _crossings(ts, s, m)
    count = jnp.sum(up)
    a_last, t_last = _cycle(ts, s, up, crossing, jnp.maximum(count - 1, 1))
    a_mid, t_mid = _cycle(ts, s, up, crossing, jnp.maximum((count + 1) // 2 - 1, 1))
    early, late = _halves(ts, s, m)
    step = jnp.max(jnp.where(m[1:] & m[:-1], ts[1:] - ts[:-1], 0.0))
    tol = 0.02 + 2.0 * (jnp.pi * step / jnp.where(t_last > 0, t_last, 1.0)) ** 2
    flat = jnp.maximum(early, late) <= FLAT * jnp.max(jnp.abs(xs))
    unsteady = ((late > (1 + tol) * early) | (jnp.abs(a_last - a_mid) > tol * a_last)
                | (jnp.abs(t_last - t_mid) > 0.02 * t_last))
    code = jnp.select(
        [flat, count < 3, late < (1 - tol) * early, unsteady],
        [SETTLES, TOO_FEW_CYCLES, SETTLES, NOT_STEADY], PERIODIC)
    return code.astype(jnp.int32)


#: below this share of the state's largest magnitude a variation is the solver's error
FLAT = 1e-4
#: the codes of :func:`periodicity`, and why a period or amplitude is NaN for each
PERIODIC, SETTLES, TOO_FEW_CYCLES, NOT_STEADY = 0, 1, 2, 3
NOT_PERIODIC = {
    SETTLES: "not periodic: settles to a fixed point (the oscillation decays)",
    TOO_FEW_CYCLES: "not periodic: fewer than two complete cycles in the window",
    NOT_STEADY: "not periodic: the oscillation has not settled (its amplitude or period "
                "still changes: growing, irregular or chaotic)",
}


def _period(ts, xs, m):
    up, crossing = _crossings(ts, xs - _mean(xs, m), m)
    count = jnp.sum(up)
    first = jnp.min(jnp.where(up, crossing, jnp.inf))
    last = jnp.max(jnp.where(up, crossing, -jnp.inf))
    period = (last - first) / jnp.maximum(count - 1, 1)
    return jnp.where(periodicity(ts, xs, m) == PERIODIC, period, jnp.nan)


def _amplitude(ts, xs, m):
    half_range = 0.5 * (_max(ts, xs, m) - _min(ts, xs, m))
    return jnp.where(periodicity(ts, xs, m) == PERIODIC, half_range, jnp.nan)


_max, _min = _extreme(jnp.max, -jnp.inf), _extreme(jnp.min, jnp.inf)

#: the reductions of one state to one number, over the saved times that count (``m``)
REDUCTIONS = {
    "max": _max,
    "min": _min,
    "mean": lambda ts, xs, m: _mean(xs, m),
    "std": lambda ts, xs, m: _std(xs, m),
    "final": lambda ts, xs, m: jnp.where(_count(m) > 0, xs[-1], jnp.nan),
    "amplitude": _amplitude,
    "period": _period,
}
VECTORS = ("maxima", "section")
KINDS = (*REDUCTIONS, *VECTORS, "lyapunov")


class Named(SpecObservable):
    """A named reduction of one state, e.g. ``Named("max", "x", after=50.0)``."""

    def __init__(self, reduction: str, state: str, after: float | None = None):
        self.reduction, self.state, self.after = reduction, state, after

    @property
    def spec(self) -> str:
        return spec_text(self.reduction, self.state,
                         {"after": None if self.after is None else number_text(self.after)})

    def __call__(self, traj):
        ts = traj.ts
        return REDUCTIONS[self.reduction](ts, traj[self.state], after_mask(ts, self.after))


def _arguments(spec: str, text: str) -> tuple[list[str], dict[str, str]]:
    """The positional and keyword arguments of ``NAME(a, key=value, ...)``."""
    positional, keywords = [], {}
    for part in text.split(","):
        match = _ARG.fullmatch(part)
        if match is None:
            raise ValueError(f"observable {spec!r}: cannot read {part.strip()!r}")
        key, value = match.groups()
        if key is None and keywords:
            raise ValueError(f"observable {spec!r}: {value!r} must come before the key=value parts")
        if key in keywords:
            raise ValueError(f"observable {spec!r}: {key!r} is given twice")
        if key is None:
            positional.append(value)
        else:
            keywords[key] = value
    return positional, keywords


def _number(spec: str, key: str, text: str, *, positive=False) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not (abs(value) < float("inf")) or (positive and value <= 0):
        kind = "a positive number" if positive else "a number"
        raise ValueError(f"observable {spec!r}: {key} must be {kind}, not {text!r}")
    return value


def _values(spec: str, text: str | None) -> int:
    if text is None:
        return DEFAULT_VALUES
    if not text.isdigit() or not 1 <= int(text) <= MAX_VALUES:
        raise ValueError(f"observable {spec!r}: k must be a whole number from 1 to "
                         f"{MAX_VALUES:,}, not {text!r}")
    return int(text)


def _state(spec: str, positional: list, state_names) -> str:
    if len(positional) != 1:
        raise ValueError(f"observable {spec!r} must name one state first, like 'max(x)'")
    if positional[0] not in state_names:
        raise ValueError(f"observable {spec!r}: no state {positional[0]!r}; "
                         f"the states are {', '.join(state_names)}")
    return positional[0]


def _only(spec: str, keywords: dict, allowed) -> None:
    extra = [k for k in keywords if k not in allowed]
    if extra:
        raise ValueError(f"observable {spec!r}: unknown option {extra[0]!r}; "
                         f"it takes {', '.join(allowed) or 'none'}")


def _lyapunov(spec: str, positional, keywords) -> LargestLyapunov:
    _only(spec, keywords, ("t", "dt", "every"))
    times = positional + ([keywords["t"]] if "t" in keywords else [])
    if len(times) != 1:
        raise ValueError(f"observable {spec!r} must give one time to average over, "
                         "like 'lyapunov(100)'")
    every = keywords.get("every", str(DEFAULT_EVERY))
    if not every.isdigit() or int(every) < 1:
        raise ValueError(f"observable {spec!r}: every must be a whole number >= 1, not {every!r}")
    return LargestLyapunov(_number(spec, "t", times[0], positive=True),
                           _number(spec, "dt", keywords.get("dt", repr(DEFAULT_DT)), positive=True),
                           int(every))


def _section(spec: str, state: str, keywords: dict, state_names, after, k) -> Section:
    levels = {key: v for key, v in keywords.items() if key not in ("after", "k")}
    if len(levels) != 1 or next(iter(levels)) not in state_names:
        raise ValueError(f"observable {spec!r} must name the section as STATE=LEVEL, like "
                         f"'section(x, y=0)'; the states are {', '.join(state_names)}")
    (through, level), = levels.items()
    return Section(state, through, _number(spec, through, level), after, k)


def _build(spec: str, kind: str, positional, keywords, state_names) -> SpecObservable:
    if kind == "lyapunov":
        return _lyapunov(spec, positional, keywords)
    state = _state(spec, positional, state_names)
    after = None if "after" not in keywords else _number(spec, "after", keywords["after"])
    if kind == "section":
        return _section(spec, state, keywords, state_names, after, _values(spec, keywords.get("k")))
    if kind == "maxima":
        _only(spec, keywords, ("after", "k"))
        return Maxima(state, after, _values(spec, keywords.get("k")))
    _only(spec, keywords, ("after",))
    return Named(kind, state, after)


@functools.lru_cache(maxsize=None)
def parse(spec: str, state_names: tuple[str, ...]) -> SpecObservable:
    """The observable written as ``"max(x)"`` (see the module); ``ValueError`` if it is not one."""
    match = _CALL.fullmatch(spec)
    if match is None or match.group(1) not in KINDS:
        raise ValueError(f"observable {spec!r} must read REDUCTION(STATE), with REDUCTION one of "
                         f"{', '.join(REDUCTIONS)}, or maxima(STATE), section(STATE, STATE=LEVEL) "
                         "or lyapunov(TIME)")
    positional, keywords = _arguments(spec, match.group(2))
    return _build(spec, match.group(1), positional, keywords, state_names)


def describe_observable(fn) -> str:
    """How an observable is recorded in a file: its spec, or the function's name."""
    if isinstance(fn, SpecObservable):
        return fn.spec
    name = getattr(fn, "__qualname__", type(fn).__name__)
    return f"python:{getattr(fn, '__module__', '?')}.{name}"


def resolve_observables(observables, state_names) -> tuple[tuple[str, object], ...]:
    """``(name, function)`` pairs from a dict of names to functions or specs."""
    if observables is None:
        return ()
    if not isinstance(observables, dict):
        raise TypeError("observables must be a dict of names to functions or specs like 'max(x)'")
    out = []
    for name, fn in observables.items():
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,63}", name):
            raise ValueError(f"observable name {name!r}: use letters, digits and '_'")
        if isinstance(fn, str):
            fn = parse(fn, tuple(state_names))
        elif not callable(fn):
            raise TypeError(f"observable {name!r} must be a function or a spec like 'max(x)'")
        out.append((name, fn))
    return tuple(out)


def nan_notes(res) -> dict[str, str]:
    """``{name: why}`` for each period or amplitude observable of the sweep ``res`` that
    is NaN at points that solved: how many, and why (each point's reason where the sweep
    kept its trajectories, else the reasons there can be)."""
    notes = {}
    for name, spec in res.observable_specs.items():
        match = _CALL.fullmatch(spec)
        if match is None or match.group(1) not in ("period", "amplitude"):
            continue
        missing = np.isnan(np.asarray(res.observables[name], dtype=float)) & (
            np.asarray(res.result) == 0)
        if missing.any():
            notes[name] = _why(res, parse(spec, tuple(res.state_names)), missing)
    return notes


def _why(res, fn: Named, missing) -> str:
    n = int(missing.sum())
    if res.ys is None:
        return (f"{_points(n)} not periodic: each settles to a fixed point, has not "
                "settled, or has fewer than two complete cycles in the window")
    ts = jnp.asarray(res.ts)
    xs = jnp.asarray(res.ys[missing][:, :, res.state_names.index(fn.state)])
    codes = np.asarray(jax.vmap(lambda x: periodicity(ts, x, after_mask(ts, fn.after)))(xs))
    parts = [f"{_points(int(np.sum(codes == c)))} {NOT_PERIODIC[c]}"
             for c in NOT_PERIODIC if np.any(codes == c)]
    return "; ".join(parts)


def _points(n: int) -> str:
    return "1 point:" if n == 1 else f"{n} points:"
