"""Orbit-diagram observables: a vector of values per point, drawn against the swept parameter.

``maxima(x, after=T, k=K)``: the first ``K`` local maxima of ``x`` at or after time
``T``, each the vertex of the parabola through the three saved points around it.
``section(x, y=c, after=T, k=K)``: the values of ``x`` where ``y`` crosses ``c``
upwards (a Poincare section), located on the cubic Hermite interpolant built from the
model's vector field at the saved points (straight lines for stochastic models).
Points with fewer than ``K`` events are padded with NaN.
"""

import jax
import jax.numpy as jnp

from .spec import DEFAULT_VALUES, SpecObservable, after_mask, number_text, spec_text

NEWTON_STEPS = 4  # on the Hermite cubic, from the straight-line guess


def _first(k: int, events, values):
    """The ``values`` at the first ``k`` true ``events``, NaN-padded to length ``k``."""
    slot = jnp.where(events, jnp.cumsum(events) - 1, k)
    return jnp.full((k,), jnp.nan, values.dtype).at[slot].set(values, mode="drop")


def parabola_vertices(ts, xs):
    """The vertex value of the parabola through ``(ts[i-1..i+1], xs[i-1..i+1])`` for
    every inner sample ``i`` (meaningful where ``xs[i]`` is a local maximum)."""
    h1, h2 = ts[1:-1] - ts[:-2], ts[2:] - ts[1:-1]
    d1, d2 = (xs[1:-1] - xs[:-2]) / h1, (xs[2:] - xs[1:-1]) / h2
    curvature = (d2 - d1) / (h1 + h2)
    slope = d1 + curvature * h1
    safe = jnp.where(curvature < 0, curvature, -1.0)
    return jnp.where(curvature < 0, xs[1:-1] - slope**2 / (4 * safe), xs[1:-1])


class Maxima(SpecObservable):
    """The local maxima of one state after a transient (see the module)."""

    def __init__(self, state: str, after: float | None = None, k: int = DEFAULT_VALUES):
        self.state, self.after, self.size = state, after, int(k)

    @property
    def spec(self) -> str:
        return spec_text("maxima", self.state, {
            "after": None if self.after is None else number_text(self.after),
            "k": None if self.size == DEFAULT_VALUES else self.size})

    def __call__(self, traj):
        ts, xs = traj.ts, traj[self.state]
        inner = after_mask(ts, self.after)[1:-1]
        peaks = inner & (xs[1:-1] > xs[:-2]) & (xs[1:-1] >= xs[2:])
        return _first(self.size, peaks, parabola_vertices(ts, xs))


def hermite(y0, y1, f0, f1, h, theta):
    """The cubic Hermite interpolant between ``y0`` and ``y1`` (slopes ``f0``, ``f1``
    over a step ``h``) at ``theta`` in [0, 1], and its derivative in ``theta``."""
    t2, t3 = theta**2, theta**3
    value = ((2 * t3 - 3 * t2 + 1) * y0 + (t3 - 2 * t2 + theta) * h * f0
             + (-2 * t3 + 3 * t2) * y1 + (t3 - t2) * h * f1)
    slope = ((6 * t2 - 6 * theta) * y0 + (3 * t2 - 4 * theta + 1) * h * f0
             + (-6 * t2 + 6 * theta) * y1 + (3 * t2 - 2 * theta) * h * f1)
    return value, slope


def _slopes(traj):
    """The vector field at every saved point, or ``None`` where it cannot be used."""
    model = traj.model
    if model is None or hasattr(model, "diffusion"):
        return None
    return jax.vmap(model.vector_field)(traj.ts, traj.ys)


def crossing_values(traj, j: int, c: float, i: int):
    """Where state ``j`` crosses ``c`` between consecutive saved points: the value of
    state ``i`` there (on the Hermite cubic when the field is known, else linear)."""
    ys, ts = traj.ys, traj.ts
    s0, s1 = ys[:-1, j] - c, ys[1:, j] - c
    theta = jnp.clip(-s0 / jnp.where(s1 != s0, s1 - s0, 1.0), 0.0, 1.0)
    slopes = _slopes(traj)
    if slopes is None:
        return ys[:-1, i] + theta * (ys[1:, i] - ys[:-1, i])
    h = ts[1:] - ts[:-1]

    def at(k, theta):
        return hermite(ys[:-1, k], ys[1:, k], slopes[:-1, k], slopes[1:, k], h, theta)

    for _ in range(NEWTON_STEPS):
        value, slope = at(j, theta)
        step = (value - c) / jnp.where(slope != 0, slope, 1.0)
        theta = jnp.clip(theta - step, 0.0, 1.0)
    return at(i, theta)[0]


class Section(SpecObservable):
    """The values of ``state`` where ``through`` crosses ``level`` upwards (see the module)."""

    def __init__(self, state: str, through: str, level: float, after: float | None = None,
                 k: int = DEFAULT_VALUES):
        self.state, self.through, self.level = state, through, float(level)
        self.after, self.size = after, int(k)

    @property
    def spec(self) -> str:
        return spec_text("section", self.state, {
            self.through: number_text(self.level),
            "after": None if self.after is None else number_text(self.after),
            "k": None if self.size == DEFAULT_VALUES else self.size})

    def __call__(self, traj):
        i, j = (traj.state_names.index(n) for n in (self.state, self.through))
        s = traj.ys[:, j] - self.level
        mask = after_mask(traj.ts, self.after)
        up = mask[:-1] & (s[:-1] < 0) & (s[1:] >= 0)
        return _first(self.size, up, crossing_values(traj, j, self.level, i))
