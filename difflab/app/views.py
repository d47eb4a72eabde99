"""Views a model asks for beyond its states: a field's space-time image, derived quantities.

A model whose states are one 1-D field names it in a ``field_name`` class attribute and
gives the positions of its grid points by ``grid()`` (the heat equation by the method of
lines: states ``u0..u{n-1}`` at ``x_i``). A model may define ``derived(y) -> {name:
scalar}``, quantities of one state (Kuramoto's order parameter); a Hamiltonian model
offers its energy ``H``. The user may type more as expressions over the states,
parameters and ``t`` (:class:`DerivedExpression`), kept per model in an
:class:`ExpressionBook`. Qt-free.
"""

import dataclasses
from collections.abc import Callable

import jax
import jax.numpy as jnp
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


# --- typed expressions -----------------------------------------------------------------

TIME = "t"


def expression_names(model) -> tuple[str, ...]:
    """The names an expression over ``model``'s runs may use: states, parameters, ``t``."""
    return tuple(dict.fromkeys((*model.state_names, *model.parameter_specs(), TIME)))


@dataclasses.dataclass(frozen=True)
class DerivedExpression:
    """A derived quantity typed as text, such as ``x*y - beta*z`` for the Lorenz model."""

    text: str
    function: Callable = dataclasses.field(repr=False, compare=False)

    @classmethod
    def parse(cls, text: str, model) -> "DerivedExpression":
        """``text`` checked against ``model``'s names; ``ValueError`` says where it is bad."""
        if not isinstance(text, str):
            raise TypeError(f"an expression must be a str, not {type(text).__name__}")
        try:
            function = dl.models.compile_formula(text, expression_names(model))
        except dl.models.EquationError as error:
            problem = error.problems[0]
            raise ValueError(f"column {problem.column}: {problem.message}") from None
        return cls(text.strip(), function)

    def series(self, run) -> np.ndarray:
        """The value at every saved time of ``run``, with the parameters of its model."""
        ts, ys = np.asarray(run.ts, dtype=float), np.asarray(run.ys)
        env = {name: jnp.asarray(v) for name, v in run.model.parameters().items()}
        env[TIME] = ts
        env.update((state, ys[:, j]) for j, state in enumerate(run.state_names))
        value = np.asarray(self.function(env), dtype=float)
        if value.shape not in ((), ts.shape):
            raise ValueError(f"{self.text!r} gives shape {value.shape}, not one value per time")
        return np.broadcast_to(value, ts.shape).copy()


class ExpressionBook:
    """The expressions typed for each model, by model name, in the order they were added."""

    def __init__(self, texts: dict[str, list[str]] | None = None):
        self._texts: dict[str, list[str]] = {}
        self.update(texts or {})

    def of(self, model_name: str) -> tuple[str, ...]:
        return tuple(self._texts.get(model_name, ()))

    def add(self, model_name: str, model, text: str) -> DerivedExpression:
        """Check ``text`` against ``model`` and keep it (``ValueError`` if bad or kept)."""
        expression = DerivedExpression.parse(text, model)
        if expression.text in self.of(model_name):
            raise ValueError(f"{expression.text!r} is already defined for {model_name}")
        self._texts.setdefault(model_name, []).append(expression.text)
        return expression

    def remove(self, model_name: str, text: str) -> None:
        if text not in self.of(model_name):
            raise ValueError(f"{model_name} has no expression {text!r}")
        self._texts[model_name].remove(text)

    def compiled(self, model_name: str, model) -> tuple[DerivedExpression, ...]:
        """The expressions of ``model_name`` that ``model`` still accepts."""
        out = []
        for text in self.of(model_name):
            try:
                out.append(DerivedExpression.parse(text, model))
            except ValueError:  # the model's names changed since (a reloaded file)
                continue
        return tuple(out)

    def update(self, texts: dict) -> None:
        """Add the expressions of a JSON mapping (a session file's); ignores what is not text."""
        for model_name, items in (texts.items() if isinstance(texts, dict) else ()):
            kept = self._texts.setdefault(str(model_name), [])
            for text in items if isinstance(items, list) else ():
                if isinstance(text, str) and text not in kept:
                    kept.append(text)

    def to_json(self) -> dict[str, list[str]]:
        return {name: list(texts) for name, texts in self._texts.items() if texts}
