"""Events inside the integration loops: crossings found at every step, located on the step.

After each accepted step from ``(t0, y0)`` to ``(t1, y1)`` every event's condition is
evaluated at the end; a sign change (in the event's direction) is located as the root
in ``[0, h]`` of ``G(theta) = g(t0 + theta, step(theta))``, where ``step(theta)`` is the
solver's own step of size ``theta`` from ``y0``: the located state is as accurate as a
step of the solver (order p). A bracketing search (Illinois) runs on values cut from
differentiation; one Newton step on the live values then takes the root to rounding and
gives the derivative of the event time by the implicit function theorem,
``dtheta = -dG / G'``.
"""

import equinox as eqx
import jax
import jax.numpy as jnp

from .._events import Event, Events

MAX_ITERATIONS = 64


class Record(eqx.Module):
    """What the watch carries through a loop: the conditions at the last accepted point
    ``g`` (K,), the kept crossings ``ts`` (K, M) and ``ys`` (K, M, n), the crossings found
    per event, and where a terminal event stopped the run (``stopped_by = -1``: not)."""

    g: jax.Array
    ts: jax.Array
    ys: jax.Array
    found: jax.Array
    stopped_by: jax.Array
    t_stop: jax.Array
    y_stop: jax.Array


class Watch(eqx.Module):
    """The events of one run, as the loops see them (resolved: named, conditions callable)."""

    events: tuple[Event, ...]

    @property
    def capacity(self) -> tuple[int, ...]:
        return tuple(e.max_events for e in self.events)

    def values(self, t, y):
        """Every condition at ``(t, y)``, (K,)."""
        return jnp.stack([jnp.asarray(e.condition(t, y), y.dtype) for e in self.events])

    def start(self, t0, y0) -> Record:
        k, m = len(self.events), max(self.capacity)
        t0 = jnp.asarray(t0, y0.dtype)
        return Record(self.values(t0, y0), jnp.zeros((k, m), y0.dtype),
                      jnp.zeros((k, m, *y0.shape), y0.dtype), jnp.zeros(k, jnp.int32),
                      jnp.int32(-1), jnp.asarray(jnp.inf, y0.dtype), y0)

    def update(self, rec: Record, step, model, t0, y0, t1, y1, accept=True) -> Record:
        """``rec`` after the step from ``(t0, y0)`` to ``(t1, y1)`` (counted if ``accept``).

        ``step(model, t0, y0, theta)``: the solver's step of size ``theta``.
        """
        g1 = self.values(t1, y1)
        crossed = crossings(rec.g, g1, [e.direction for e in self.events])
        crossed = crossed & accept & (rec.stopped_by < 0)

        def one(k):  # one trace for every event: k is traced
            def located():
                return locate(lambda t, y: self.values(t, y)[k], step, model, t0, y0,
                              t1 - t0, rec.g[k], g1[k])

            return jax.lax.cond(crossed[k], located, lambda: (jnp.asarray(t1, y1.dtype), y1))

        times, states = jax.lax.map(one, jnp.arange(len(self.events)))
        terminal = crossed & jnp.array([e.terminal for e in self.events])
        t_stop = jnp.min(jnp.where(terminal, times, jnp.inf))
        first, stops = jnp.argmin(jnp.where(terminal, times, jnp.inf)), jnp.any(terminal)
        rec = self._kept(rec, crossed & (times <= t_stop), times, states)
        return Record(jnp.where(accept, g1, rec.g), rec.ts, rec.ys, rec.found,
                      jnp.where(stops, first.astype(jnp.int32), rec.stopped_by),
                      jnp.where(stops, t_stop, rec.t_stop),
                      jnp.where(stops, states[first], rec.y_stop))

    def _kept(self, rec: Record, kept, times, states) -> Record:
        rows = jnp.arange(len(self.events))
        slot = jnp.minimum(rec.found, rec.ts.shape[1] - 1)
        write = kept & (rec.found < jnp.array(self.capacity))
        ts = rec.ts.at[rows, slot].set(jnp.where(write, times, rec.ts[rows, slot]))
        ys = rec.ys.at[rows, slot].set(jnp.where(write[:, None], states, rec.ys[rows, slot]))
        return eqx.tree_at(lambda r: (r.ts, r.ys, r.found), rec,
                           (ts, ys, rec.found + kept.astype(jnp.int32)))

    def finish(self, rec: Record) -> Events:
        """The kept crossings in time order, as :class:`Events`."""
        k, m = rec.ts.shape
        kept = jnp.arange(m)[None, :] < jnp.minimum(rec.found, jnp.array(self.capacity))[:, None]
        order = jnp.argsort(jnp.where(kept, rec.ts, jnp.inf).reshape(-1))[:sum(self.capacity)]
        valid = kept.reshape(-1)[order]
        ts = jnp.where(valid, rec.ts.reshape(-1)[order], jnp.nan)
        ys = jnp.where(valid[:, None], rec.ys.reshape(k * m, -1)[order], jnp.nan)
        which = jnp.where(valid, order // m, -1).astype(jnp.int32)
        e = self.events
        return Events(ts, ys, which, rec.found, rec.stopped_by, tuple(x.name for x in e),
                      tuple(x.direction for x in e), tuple(bool(x.terminal) for x in e),
                      self.capacity)


def crossings(g0, g1, directions):
    """Where each condition crossed zero from ``g0`` to ``g1`` in its direction (K,)."""
    up = (g0 < 0) & (g1 >= 0)
    down = (g0 > 0) & (g1 <= 0)
    d = jnp.array(directions)
    return jnp.where(d > 0, up, jnp.where(d < 0, down, up | down))


def locate(condition, step, model, t0, y0, h, g0, g1):
    """``(t, y)`` where ``condition`` crosses zero inside the step of size ``h`` from
    ``(t0, y0)``, given its values ``g0`` and ``g1`` at the ends (of opposite signs)."""
    cut = jax.lax.stop_gradient
    frozen = jax.tree.map(lambda x: cut(x) if eqx.is_inexact_array(x) else x,
                          (model, t0, y0))
    theta = search(lambda th: along(condition, step, *frozen, th)[0], cut(h), cut(g0),
                   cut(g1))
    (value, y), (slope, dy) = jax.jvp(lambda th: along(condition, step, model, t0, y0, th),
                                      (theta,), (jnp.ones_like(theta),))
    slope, dy = cut(slope), cut(dy)
    delta = -jnp.where(slope == 0, 0.0, value / jnp.where(slope == 0, 1.0, slope))
    # delta is tiny: first order is exact (``y`` may be a pytree: a field model's fields)
    return t0 + theta + delta, jax.tree.map(lambda a, b: a + b * delta, y, dy)


def along(condition, step, model, t0, y0, theta):
    """The condition after a step of size ``theta`` from ``(t0, y0)``, and that state."""
    y = step(model, t0, y0, theta)
    return condition(t0 + theta, y), y


def search(fn, h, g0, g1):
    """A root of ``fn`` in ``[0, h]`` (``fn(0) = g0`` and ``fn(h) = g1`` of opposite signs)
    by the Illinois method: regula falsi that halves the value kept at a stale end, so
    both ends close in (superlinearly); no derivatives, so the loop stays small."""
    tol = 1e-9 * h  # the Newton step in ``locate`` takes it to rounding

    def body(carry):
        i, a, fa, b, fb, _ = carry
        c = jnp.clip((a * fb - b * fa) / (fb - fa), jnp.minimum(a, b), jnp.maximum(a, b))
        fc = fn(c)
        flip = jnp.sign(fc) != jnp.sign(fb)
        a, fa = jnp.where(flip, b, a), jnp.where(flip, fb, 0.5 * fa)
        return i + 1, a, fa, c, fc, jnp.where(fc == 0, 0.0, jnp.abs(c - b))

    def going(carry):
        return (carry[0] < MAX_ITERATIONS) & (carry[5] > tol)

    return jax.lax.while_loop(going, body, (0, jnp.zeros_like(h), g0, h, g1, h))[3]
