"""The model contract: abstract Equinox modules whose float fields are the parameters."""

import abc
import dataclasses
from typing import Any, ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp


@dataclasses.dataclass(frozen=True)
class ParamSpec:
    """What the CLI and the GUI need to know about one parameter."""

    name: str
    default: float
    bounds: tuple[float, float]
    unit: str = ""
    doc: str = ""

    @property
    def log_scale(self) -> bool:
        """True where the range spans two decades or more of positive values."""
        lo, hi = self.bounds
        return lo > 0 and hi / lo >= 100


def _as_parameter(value: Any) -> jax.Array:
    if isinstance(value, jax.Array) and jnp.issubdtype(value.dtype, jnp.inexact):
        return value
    return jnp.asarray(value, dtype=jnp.result_type(float))


def _default_bounds(default: float) -> tuple[float, float]:
    if default > 0:
        return (0.0, 10.0 * default)
    if default < 0:
        return (10.0 * default, 0.0)
    return (-1.0, 1.0)


def param(default: float, *, bounds=None, unit: str = "", doc: str = ""):
    """Declare a model parameter with its default, bounds, unit and one-line description.

    ``bounds`` default to ``(0, 10 * default)`` for a positive default.
    """
    bounds = tuple(float(b) for b in (bounds or _default_bounds(default)))
    if not bounds[0] <= default <= bounds[1]:
        raise ValueError(f"default {default} lies outside bounds {bounds}")
    meta = {"difflab_param": dict(bounds=bounds, unit=unit, doc=doc)}
    return eqx.field(default=float(default), converter=_as_parameter, metadata=meta)


def _is_plain_float_field(cls, name: str, annotation: Any) -> bool:
    value = cls.__dict__.get(name, dataclasses.MISSING)
    return annotation in (float, "float") and isinstance(value, (int, float))


class Model(eqx.Module):
    """A physical model: ``dy/dt = vector_field(t, y)`` from ``initial_state()``.

    Subclass it with annotated float fields; those fields are the parameters, so
    ``jax.grad``, ``jax.vmap`` and sharding apply to the model itself::

        class Spring(dl.Model):
            k: float = 1.0
            state_names = ("x", "v")
            def vector_field(self, t, y):
                return jnp.stack([y[1], -self.k * y[0]])
            def initial_state(self):
                return jnp.array([1.0, 0.0])
    """

    state_names: ClassVar[tuple[str, ...]]
    # Units (UDUNITS strings, "1" for dimensionless); None: not declared, and files say so.
    time_unit: ClassVar[str | None] = None
    state_units: ClassVar[str | tuple[str, ...] | dict[str, str] | None] = None  # one for all,
    # one per state, or by state name
    domain: ClassVar[str] = "user"
    description: ClassVar[str] = ""
    registry_name: ClassVar[str | None] = None
    default_solver: ClassVar[str | None] = None  # None: "rk4" ("euler_maruyama" for SDEs)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for name, annotation in cls.__dict__.get("__annotations__", {}).items():
            if _is_plain_float_field(cls, name, annotation):
                setattr(cls, name, param(float(cls.__dict__[name])))
        units, names = cls.__dict__.get("state_units"), cls.__dict__.get("state_names")
        if isinstance(units, tuple) and isinstance(names, tuple) and len(units) != len(names):
            raise TypeError(f"{cls.__name__}.state_units gives {len(units)} units for "
                            f"{len(names)} states {names}")

    @abc.abstractmethod
    def vector_field(self, t, y):
        """The right-hand side ``dy/dt`` at time ``t`` and state ``y`` (a 1-D array)."""

    @abc.abstractmethod
    def initial_state(self):
        """The default initial state, a 1-D array of ``len(state_names)``."""

    @classmethod
    def parameter_specs(cls) -> dict[str, ParamSpec]:
        """Every scalar parameter of the model class, in declaration order."""
        specs = {}
        for f in dataclasses.fields(cls):
            meta = f.metadata.get("difflab_param")
            if meta is not None:
                specs[f.name] = ParamSpec(f.name, f.default, **meta)
        return specs

    def parameters(self) -> dict[str, jax.Array]:
        """The current value of every scalar parameter."""
        return {name: getattr(self, name) for name in self.parameter_specs()}

    def replace(self, **values) -> "Model":
        """A copy with some parameters changed: ``model.replace(k=2.0)``."""
        specs = self.parameter_specs()
        unknown = [n for n in values if n not in specs]
        if unknown:
            raise ValueError(
                f"{type(self).__name__} has no parameter {unknown[0]!r}; "
                f"its parameters are {', '.join(specs) or 'none'}"
            )
        names = list(values)
        new = [_as_parameter(values[n]) for n in names]
        return eqx.tree_at(lambda m: [getattr(m, n) for n in names], self, new)

    def state_unit(self, name: str) -> str | None:
        """The declared unit of state ``name``, or None where the model declares none."""
        units = self.state_units
        if units is None or isinstance(units, str):
            return units
        if isinstance(units, dict):
            return units.get(name)
        return units[self.state_index(name)] if len(units) == len(self.state_names) else None

    def state_index(self, name: str) -> int:
        """The position of state ``name`` in ``y``."""
        try:
            return self.state_names.index(name)
        except ValueError:
            raise KeyError(
                f"{type(self).__name__} has no state {name!r}; "
                f"its states are {', '.join(self.state_names)}"
            ) from None


class SDEModel(Model):
    """A stochastic model ``dy = f(t, y) dt + g(t, y) dW`` with diagonal noise ``g``."""

    @abc.abstractmethod
    def diffusion(self, t, y):
        """The noise amplitude per state, shape ``(n_states,)``."""


class HamiltonianModel(Model):
    """A separable Hamiltonian system ``H(q, p) = T(p) + V(q)`` with ``y = [q, p]``.

    Give the two energies; the vector field follows from them, and the symplectic
    ``leapfrog`` solver can step the model.
    """

    @abc.abstractmethod
    def kinetic_energy(self, p):
        """T(p)."""

    @abc.abstractmethod
    def potential_energy(self, q):
        """V(q)."""

    def split(self, y):
        """The positions and momenta of ``y = [q, p]``."""
        half = y.shape[-1] // 2
        return y[..., :half], y[..., half:]

    def energy(self, y):
        """The Hamiltonian ``T(p) + V(q)``."""
        q, p = self.split(y)
        return self.kinetic_energy(p) + self.potential_energy(q)

    def dq_dt(self, p):
        return jax.grad(self.kinetic_energy)(p)

    def dp_dt(self, q):
        return -jax.grad(self.potential_energy)(q)

    def vector_field(self, t, y):
        q, p = self.split(y)
        return jnp.concatenate([self.dq_dt(p), self.dp_dt(q)])


def is_model_class(obj) -> bool:
    """True for a concrete (instantiable) subclass of :class:`Model`."""
    return isinstance(obj, type) and issubclass(obj, Model) and not getattr(
        obj, "__abstractmethods__", None
    )
