"""What a model gives the solvers, checked once before any run is traced: its initial
state (read from its trace where it is a constant) and the shape and dtype of what its
vector field (and an SDE's diffusion) returns."""

import functools

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import Literal

from ..models import Model, SDEModel


@functools.partial(jax.jit, static_argnums=1)
def _initial_state_of(dynamic, static):
    return eqx.combine(dynamic, static).initial_state()


def _default_initial_state(model: Model):
    """``model.initial_state()``: read from its trace where it is a constant (as most
    are), else computed by a compiled program."""
    args = eqx.partition(model, eqx.is_array)
    try:
        traced = _initial_state_of.trace(*args)
    except TypeError:  # not an array (or a bug in it): run it as the user wrote it
        return model.initial_state()
    closed = traced.jaxpr
    if closed.jaxpr.eqns or not isinstance(traced.out_info, jax.ShapeDtypeStruct):
        return _initial_state_of(*args)  # computed, or not one array (a list, ...)
    out = closed.jaxpr.outvars[0]
    if isinstance(out, Literal):
        return np.asarray(out.val)
    if out in closed.jaxpr.constvars:
        return np.asarray(closed.consts[closed.jaxpr.constvars.index(out)])
    return _initial_state_of(*args)  # one of the model's arrays, passed on


def initial_state(model: Model, y0):
    """``y0`` (default the model's own) as a float array with one value per state."""
    n = len(model.state_names)
    if y0 is None:
        y0 = _default_initial_state(model)
        if not _is_numeric(y0):
            missing = " (is its return missing?)" if y0 is None else ""
            raise TypeError(f"{type(model).__name__}.initial_state() returned {y0!r}"
                            f"{missing}; it must return the initial state: an array "
                            f"with one value per state in {model.state_names}")
    y0 = jnp.asarray(y0, dtype=jnp.result_type(float))
    if y0.shape != (n,):
        raise ValueError(
            f"{type(model).__name__} has {n} states {model.state_names}, "
            f"but the initial state has shape {y0.shape}"
        )
    return y0


def _is_numeric(value) -> bool:
    """Whether ``value`` holds numbers (arrays, tracers, lists of them)."""
    leaves = jax.tree.leaves(value)
    try:
        jnp.result_type(*leaves)
    except (TypeError, ValueError):  # none, or not numbers ("one")
        return False
    return True


def _struct(x):
    return jax.ShapeDtypeStruct(jnp.shape(x), jnp.result_type(x))


def _returned(dynamic, static, method: str, t, y):
    """The shape and dtype ``model.<method>(t, y)`` returns (traced, never run), for the
    model of arrays (or their shapes) ``dynamic`` and the rest ``static``."""
    def call(dynamic, t, y):
        return getattr(eqx.combine(dynamic, static), method)(t, y)

    return jax.eval_shape(call, dynamic, t, y)


@functools.lru_cache(maxsize=256)
def _returned_cached(static, treedef, leaves: tuple, method: str, t, y):
    return _returned(jax.tree.unflatten(treedef, list(leaves)), static, method, t, y)


def _returned_once(model: Model, method: str, t, y):
    """:func:`_returned`, traced once per model structure, shapes and dtypes."""
    dynamic, static = eqx.partition(model, eqx.is_array)
    leaves, treedef = jax.tree.flatten(dynamic)
    try:
        return _returned_cached(static, treedef, tuple(map(_struct, leaves)), method,
                                _struct(t), _struct(y))
    except TypeError as error:
        if "unhashable" not in str(error):
            raise
        return _returned(dynamic, static, method, t, y)  # a static field that cannot be hashed


def check_returns(model: Model, t, y) -> None:
    """``ValueError`` or ``TypeError`` in one line, naming the model, unless its
    ``vector_field`` (and an SDE's ``diffusion``) returns one real number per state."""
    name = type(model).__name__
    methods = ("vector_field", "diffusion") if isinstance(model, SDEModel) else ("vector_field",)
    for method in methods:
        out = _returned_once(model, method, t, y)
        if not isinstance(out, jax.ShapeDtypeStruct):
            raise TypeError(f"{name}.{method} must return one array of shape {y.shape} "
                            f"(one value per state), not a {type(out).__name__}")
        real = jnp.issubdtype(out.dtype, jnp.floating) or jnp.issubdtype(out.dtype, jnp.integer)
        if not real or out.dtype == jnp.bool_:
            raise TypeError(f"{name}.{method} must return real numbers, not {out.dtype} "
                            f"values")
        if out.shape != y.shape:
            raise ValueError(f"{name}.{method} must return shape {y.shape} (one value per "
                             f"state of {', '.join(model.state_names)}), but returned shape "
                             f"{out.shape}")
