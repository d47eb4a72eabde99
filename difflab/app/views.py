"""Views a model asks for beyond its states: a field's space-time image, derived quantities.

A model whose states are one 1-D field names it in a ``field_name`` class attribute and
gives the positions of its grid points by ``grid()`` (``heat1d``: states ``u0..u{n-1}`` at
``x_i``). A model may define ``derived(y) -> {name: scalar}``, quantities of one state
(Kuramoto's order parameter); a Hamiltonian model offers its energy ``H``. Qt-free.
"""

import dataclasses

import jax
import numpy as np

import difflab as dl

ENERGY = "energy H"


@dataclasses.dataclass(frozen=True)
class Field:
    """A 1-D field: its name, the positions ``x`` of its points, their state names."""

    name: str
    x: np.ndarray
    states: tuple[str, ...]

    def image(self, run) -> np.ndarray:
        """The field over space and time, shape ``(len(x), len(run.ts))``."""
        index = [run.state_names.index(s) for s in self.states]
        return np.asarray(run.ys)[:, index].T

    def profile(self, run, t: float) -> tuple[float, np.ndarray]:
        """The saved time nearest ``t`` and the field there."""
        ts = np.asarray(run.ts)
        k = int(np.clip(np.searchsorted(ts, t), 0, len(ts) - 1))
        if k > 0 and abs(ts[k - 1] - t) <= abs(ts[k] - t):
            k -= 1
        return float(ts[k]), self.image(run)[:, k]


def field_of(model) -> Field | None:
    """The field ``model``'s states form, or ``None`` when they are not one."""
    name = getattr(model, "field_name", None)
    grid = getattr(model, "grid", None)
    if not name or not callable(grid):
        return None
    x = np.asarray(grid(), dtype=float).reshape(-1)
    states = tuple(model.state_names)
    if len(x) != len(states):
        raise ValueError(f"{type(model).__name__}.grid() gives {len(x)} positions for "
                         f"{len(states)} states")
    return Field(str(name), x, states)


def derived_names(model) -> tuple[str, ...]:
    """The names of the derived quantities ``model`` offers."""
    y = np.asarray(model.initial_state())
    return tuple(_quantities(model, y))


def derived_series(model, ys) -> dict[str, np.ndarray]:
    """Every derived quantity of ``model`` along the states ``ys`` (times, states)."""
    ys = np.asarray(ys)
    if not len(ys) or not derived_names(model):
        return {}
    values = jax.vmap(lambda y: _quantities(model, y))(ys)
    return {name: np.asarray(v, dtype=float) for name, v in values.items()}


def _quantities(model, y) -> dict:
    out = {}
    if isinstance(model, dl.HamiltonianModel):
        out[ENERGY] = model.energy(y)
    own = getattr(model, "derived", None)
    if callable(own):
        out.update(own(y))
    return out
