"""What every observable written as text shares: its spec, its size, and the transient.

An observable made from a spec (``"max(x, after=50)"``) is a function of a point's
:class:`Trajectory`; two with the same spec are equal and hash alike, so a sweep that
names them again reuses its compiled program.
"""

import jax.numpy as jnp

DEFAULT_VALUES = 64  # values per point of an orbit-diagram observable (``k=``)


class SpecObservable:
    """An observable that a spec describes. ``size`` is ``None`` for one number per
    point, else the length of the vector each point gets (NaN-padded)."""

    size: int | None = None

    @property
    def spec(self) -> str:
        raise NotImplementedError

    def __call__(self, traj):
        raise NotImplementedError

    def __eq__(self, other):
        return isinstance(other, SpecObservable) and other.spec == self.spec

    def __hash__(self):
        return hash(("difflab.observable", self.spec))

    def __repr__(self):
        return f"observable {self.spec!r}"


def number_text(value: float) -> str:
    """A number as a spec writes it: ``50``, ``0.1``, ``1e-20``."""
    return repr(float(value)).removesuffix(".0")


def spec_text(name: str, first: str, options: dict) -> str:
    """``name(first, key=value, ...)``, leaving out the options that are ``None``."""
    parts = [first] + [f"{k}={v}" for k, v in options.items() if v is not None]
    return f"{name}({', '.join(parts)})"


def after_mask(ts, after: float | None):
    """Which saved times count: those at or after ``after`` (all when ``None``)."""
    if after is None:
        return jnp.ones(ts.shape, dtype=bool)
    return ts >= after
