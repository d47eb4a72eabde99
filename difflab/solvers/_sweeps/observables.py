"""Observables: numbers reduced from a trajectory on the device, one per sweep point.

An observable is a function of a :class:`Trajectory` returning a scalar, or one of the
named reductions below written as text (as a sweep's TOML file does)::

    "max(x)"  "min(x)"  "mean(x)"  "std(x)"  "final(x)"  "amplitude(x)"  "period(x)"

``amplitude`` is ``(max - min) / 2``; ``period`` the mean time between upward crossings
of the state's mean value (NaN with fewer than two crossings).
"""

import functools
import re

import jax.numpy as jnp

_SPEC = re.compile(r"\s*([a-z_]+)\s*\(\s*([^()\s]+)\s*\)\s*")


def _period(ts, xs):
    s = xs - jnp.mean(xs)
    up = (s[:-1] < 0) & (s[1:] >= 0)
    denominator = jnp.where(up, s[1:] - s[:-1], 1.0)
    crossing = ts[:-1] - s[:-1] * (ts[1:] - ts[:-1]) / denominator
    count = jnp.sum(up)
    first = jnp.min(jnp.where(up, crossing, jnp.inf))
    last = jnp.max(jnp.where(up, crossing, -jnp.inf))
    return jnp.where(count >= 2, (last - first) / jnp.maximum(count - 1, 1), jnp.nan)


REDUCTIONS = {
    "max": lambda ts, xs: jnp.max(xs),
    "min": lambda ts, xs: jnp.min(xs),
    "mean": lambda ts, xs: jnp.mean(xs),
    "std": lambda ts, xs: jnp.std(xs),
    "final": lambda ts, xs: xs[-1],
    "amplitude": lambda ts, xs: 0.5 * (jnp.max(xs) - jnp.min(xs)),
    "period": _period,
}


class Named:
    """A named reduction of one state, e.g. ``Named("max", "x")``; equal specs are equal."""

    def __init__(self, reduction: str, state: str):
        self.reduction, self.state = reduction, state

    @property
    def spec(self) -> str:
        return f"{self.reduction}({self.state})"

    def __call__(self, traj):
        return REDUCTIONS[self.reduction](traj.ts, traj[self.state])

    def __eq__(self, other):
        return isinstance(other, Named) and other.spec == self.spec

    def __hash__(self):
        return hash(("difflab.observable", self.spec))

    def __repr__(self):
        return f"observable {self.spec!r}"


@functools.lru_cache(maxsize=None)
def parse(spec: str, state_names: tuple[str, ...]) -> Named:
    """The observable written as ``"max(x)"``; ``ValueError`` if it is not one."""
    match = _SPEC.fullmatch(spec)
    if match is None or match.group(1) not in REDUCTIONS:
        raise ValueError(f"observable {spec!r} must read REDUCTION(STATE), with REDUCTION one of "
                         f"{', '.join(REDUCTIONS)}")
    if match.group(2) not in state_names:
        raise ValueError(f"observable {spec!r}: no state {match.group(2)!r}; "
                         f"the states are {', '.join(state_names)}")
    return Named(match.group(1), match.group(2))


def describe_observable(fn) -> str:
    """How an observable is recorded in a file: its spec, or the function's name."""
    if isinstance(fn, Named):
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
