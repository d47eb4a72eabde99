"""Equilibria of a model: multi-start Newton on the exact vector field, then eigenvalues.

``equilibria(model)`` scatters starts over a box of state space, runs optimistix's Newton
from all of them at once (``vmap``), merges the roots that coincide and classifies each
by the eigenvalues of the exact Jacobian (``jax.jacfwd``).
"""

import json

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optimistix as optx

from .._datasets import to_dataset
from .._resources import check_memory
from .traced import untraced

STABILITY_CLASSES = ("stable node", "stable focus", "saddle", "unstable node",
                     "unstable focus", "centre", "non-hyperbolic")


def vector_field_at(model, t=0.0):
    """``y -> model.vector_field(t, y)``."""
    return lambda y: model.vector_field(t, y)


def jacobian(model, y, t=0.0):
    """The exact Jacobian ``d f / d y`` of the model's vector field at ``y``."""
    return jax.jacfwd(vector_field_at(model, t))(y)


def eigenvalues(jac) -> np.ndarray:
    """Eigenvalues of one Jacobian or a stack of them, computed on the host, sorted by
    decreasing real part (then imaginary part)."""
    values = np.linalg.eigvals(np.asarray(jac, dtype=float))
    order = np.lexsort((-values.imag, -values.real), axis=-1)
    return np.take_along_axis(values, order, axis=-1)


def _zero_tolerance(values) -> float:
    return 1e-8 * max(1.0, float(np.max(np.abs(values), initial=0.0)))


def classify(values) -> str:
    """The stability class of an equilibrium whose Jacobian has eigenvalues ``values``."""
    values = np.asarray(values)
    tol = _zero_tolerance(values)
    re, im = values.real, values.imag
    if np.any(np.abs(re) <= tol):
        if np.all(np.abs(re) <= tol) and np.all(np.abs(im) > tol):
            return "centre"
        return "non-hyperbolic"
    oscillates = bool(np.any(np.abs(im) > tol))
    if np.all(re < 0):
        return "stable focus" if oscillates else "stable node"
    if np.all(re > 0):
        return "unstable focus" if oscillates else "unstable node"
    return "saddle"


class Equilibria(eqx.Module):
    """The equilibria of ``model`` found in a box: ``states`` (k, n), the eigenvalues of
    the Jacobian at each (k, n) complex, sorted by decreasing real part, and their
    ``stability`` classes (one of ``STABILITY_CLASSES`` each)."""

    states: np.ndarray
    eigenvalues: np.ndarray
    stability: tuple[str, ...] = eqx.field(static=True)
    state_names: tuple[str, ...] = eqx.field(static=True)
    box: tuple[tuple[float, float], ...] | None = eqx.field(static=True)
    model: object

    def __len__(self) -> int:
        return len(self.stability)

    def to_dict(self) -> dict:
        """``{"equilibria": [{"state": {NAME: x}, "eigenvalues": [[re, im], ...],
        "stability": "..."}]}``"""
        return {"equilibria": [
            {"state": dict(zip(self.state_names, map(float, state))),
             "eigenvalues": [[float(v.real), float(v.imag)] for v in values],
             "stability": kind}
            for state, values, kind in zip(self.states, self.eigenvalues, self.stability)
        ]}

    def to_json(self) -> str:
        """:meth:`to_dict` as a JSON string."""
        return json.dumps(self.to_dict())

    def to_xarray(self):
        """This result as an ``xarray.Dataset``: the variables, coordinates and attributes
        of its group in a session file (``docs/hdf5-schema.md``)."""
        return to_dataset(self)


def default_box(model) -> tuple[tuple[float, float], ...]:
    """A cube around the origin ten times the initial state's scale (at least +-10)."""
    y0 = np.asarray(model.initial_state(), dtype=float)
    half = 10.0 * max(1.0, float(np.max(np.abs(y0), initial=0.0)))
    return tuple((-half, half) for _ in y0)


def _as_box(model, box) -> tuple[tuple[float, float], ...]:
    names = tuple(model.state_names)
    if box is None:
        return default_box(model)
    if isinstance(box, dict):
        unknown = [k for k in box if k not in names]
        if unknown:
            raise ValueError(f"box: {type(model).__name__} has no state {unknown[0]!r}; "
                             f"its states are {', '.join(names)}")
        full = dict(zip(names, default_box(model)))
        full.update(box)
        box = [full[n] for n in names]
    box = tuple((float(lo), float(hi)) for lo, hi in box)
    if len(box) != len(names):
        raise ValueError(f"box has {len(box)} ranges; the model has {len(names)} states")
    if any(not (np.isfinite(lo) and np.isfinite(hi) and lo < hi) for lo, hi in box):
        raise ValueError(f"box: every range must be finite with LO < HI, got {box}")
    return box


@eqx.filter_jit
def _newton_from(model, starts, t, rtol, atol, max_steps):
    def residual(y, args):
        return model.vector_field(t, y)

    def one(y0):
        sol = optx.root_find(residual, optx.Newton(rtol=rtol, atol=atol), y0,
                             throw=False, max_steps=max_steps)
        y = sol.value
        ok = (sol.result == optx.RESULTS.successful) & jnp.all(jnp.isfinite(y))
        return y, ok & (jnp.max(jnp.abs(residual(y, None))) < 1e3 * atol)

    return jax.vmap(one)(starts)


def _starts(box, n_starts, seed, y0):
    lo, hi = np.array(box).T
    unit = np.asarray(jax.random.uniform(jax.random.key(seed), (n_starts, len(lo))))
    corners = [y0, (lo + hi) / 2, np.zeros_like(lo)]
    return np.concatenate([np.array(corners), lo + (hi - lo) * unit])


def roots_from(model, starts, t=0.0, *, rtol=1e-10, atol=1e-10, max_steps=64) -> np.ndarray:
    """The roots Newton converges to from each of ``starts`` (k, n), one row each."""
    ys, ok = _newton_from(model, jnp.asarray(starts, float), jnp.asarray(t, float),
                          rtol, atol, max_steps)
    return np.asarray(ys)[np.asarray(ok)]


def _merge(roots, tol):
    kept = []
    for y in roots:
        if all(np.max(np.abs(y - k)) > tol * (1 + np.max(np.abs(k))) for k in kept):
            kept.append(y)
    return np.array(kept).reshape(len(kept), roots.shape[1])


def equilibria(model, box=None, n_starts: int = 256, t: float = 0.0, *,
               rtol: float = 1e-10, atol: float = 1e-10, max_steps: int = 64,
               seed: int = 0) -> Equilibria:
    """All equilibria of ``model`` (``vector_field(t, y) = 0``) that multi-start Newton
    finds from ``n_starts`` random starts in ``box``.

    ``box``: ``{state: (lo, hi)}`` (other states keep the default range) or one
    ``(lo, hi)`` per state; roots outside it are dropped. Left ``None``, the starts fill
    a cube ten times the initial state's scale and every root found is kept.
    """
    untraced("equilibria", model, box)
    if n_starts < 1:
        raise ValueError(f"n_starts must be at least 1, got {n_starts}")
    n = len(model.state_names)  # each start: a state, a Newton step, a Jacobian, twice
    check_memory(2 * (n_starts + 3) * (2 * n + n * n) * 8,
                 f"equilibria from {n_starts:,} starts of {n} states", "use fewer starts")
    ranges = _as_box(model, box)
    y0 = np.asarray(model.initial_state(), dtype=float)
    roots = roots_from(model, _starts(ranges, n_starts, seed, y0), t,
                       rtol=rtol, atol=atol, max_steps=max_steps)
    if box is not None:
        lo, hi = np.array(ranges).T
        roots = roots[np.all((roots >= lo) & (roots <= hi), axis=1)]
    states = _merge(roots, 1e-6)
    states[np.abs(states) < 1e-14 * (1 + np.max(np.abs(states), initial=0))] = 0.0
    states = states[np.lexsort(states.T[::-1])] if len(states) else states
    jacs = jax.vmap(lambda y: jacobian(model, y, t))(jnp.asarray(states)) if len(states) \
        else np.zeros((0, len(y0), len(y0)))
    values = eigenvalues(jacs)
    return Equilibria(states=states, eigenvalues=values,
                      stability=tuple(classify(v) for v in values),
                      state_names=tuple(model.state_names),
                      box=None if box is None else ranges, model=model)
