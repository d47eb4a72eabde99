"""Field models typed as equations: the class that equation text with a ``grid:`` line makes.

    name: Decay
    params: D = 0.01
    grid: x = periodic(0, 1, 64)
    init: u = sin(2*pi*x)
    du/dt = D*laplace(u)

Each right-hand side is split into its additive terms. A term that is a constant (numbers
and parameters) times ``laplace(u)`` or times ``u`` itself, ``u`` being the field the
equation advances, is linear: on a fully periodic grid these terms make the Fourier
multiplier of ``linear_part`` (so ``etdrk4`` takes them exactly), and every other term is
the nonlinear part. On a grid with walls the operators are finite differences of order 2
that meet the walls' conditions, there is no linear part and the whole right-hand side is
``vector_field``.
"""

import ast
import types

import equinox as eqx
import jax.numpy as jnp

from .._base import param
from .._expressions import CONSTANTS, FUNCTIONS, TIME, compile_expression
from . import operators as fd
from .grid import Grid
from .model import AbstractFieldModel
from .spectral import (
    fourier_shape,
    laplace_multiplier,
    spectral_derivative,
    spectral_laplace,
)


def additive_terms(node) -> list:
    """``(sign, term)`` for each term of the sum ``node`` (``a - b + -c``), left to right."""
    stack, terms = [(1, node)], []
    while stack:  # a long sum nests on its left: no recursion
        sign, node = stack.pop()
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub):
            stack.append((sign if isinstance(node.op, ast.Add) else -sign, node.right))
            stack.append((sign, node.left))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            stack.append((-sign if isinstance(node.op, ast.USub) else sign, node.operand))
        else:
            terms.append((sign, node))
    return terms


def _factors(node) -> list:
    """``(factor, power)`` for each factor of the product ``a * b / c`` (power 1 or -1)."""
    stack, factors = [(node, 1)], []
    while stack:
        node, power = stack.pop()
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult | ast.Div):
            stack.append((node.right, power if isinstance(node.op, ast.Mult) else -power))
            stack.append((node.left, power))
        else:
            factors.append((node, power))
    return factors


def _is_constant(node, names) -> bool:
    """Whether ``node`` uses only numbers, ``names`` and the math functions."""
    nodes = list(ast.walk(node))
    called = {id(n.func) for n in nodes if isinstance(n, ast.Call)}
    return all(n.func.id in FUNCTIONS for n in nodes if isinstance(n, ast.Call)) and all(
        n.id in names for n in nodes if isinstance(n, ast.Name) and id(n) not in called)


def _field_kind(node, state) -> str | None:
    """``"laplace"`` for ``laplace(state)``, ``"identity"`` for ``state``, else None."""
    if isinstance(node, ast.Name) and node.id == state:
        return "identity"
    if (isinstance(node, ast.Call) and node.func.id == "laplace"
            and isinstance(node.args[0], ast.Name) and node.args[0].id == state):
        return "laplace"
    return None


def linear_term(node, state: str, names) -> tuple | None:
    """``(kind, [(factor, power), ...])`` where ``node`` is a product of constants (over
    ``names``) and one ``laplace(state)`` or ``state``; None for any other term."""
    kind, coefficient = None, []
    for factor, power in _factors(node):
        this = _field_kind(factor, state)
        if this is not None and power == 1 and kind is None:
            kind = this
        elif _is_constant(factor, names):
            coefficient.append((compile_expression(factor), power))
        else:
            return None
    return None if kind is None else (kind, coefficient)


def _coefficient(factors, env):
    value = 1.0
    for factor, power in factors:
        value = value * factor(env) if power == 1 else value / factor(env)
    return value


def split_equation(node, state: str, names) -> tuple[list, list]:
    """The linear terms ``(sign, kind, factors)`` and the other terms ``(sign, function)``
    of the right-hand side ``node`` of ``d state/dt``."""
    linear, other = [], []
    for sign, term in additive_terms(node):
        found = linear_term(term, state, names)
        if found is None:
            other.append((sign, compile_expression(term)))
        else:
            linear.append((sign, *found))
    return linear, other


def _periodic(grid) -> bool:
    return all(grid.periodic(axis) for axis in range(grid.ndim))


def grid_operators(grid, t) -> dict:
    """The operators by name: spectral on a fully periodic grid, else finite differences
    of order 2 that read the walls' values at time ``t``."""
    if _periodic(grid):
        ops = {"laplace": lambda u: spectral_laplace(u, grid)}
        derivative = (lambda axis: lambda u: spectral_derivative(u, grid, axis))
    else:
        ops = {"laplace": lambda u: fd.laplace(u, grid, t=t)}
        derivative = (lambda axis: lambda u: fd.derivative(u, grid, axis, t=t))
    ops.update({f"d_d{name}": derivative(axis) for axis, name in enumerate(grid.axis_names)})
    return ops


def _sum(terms, env, shape):
    total = 0.0
    for sign, term in terms:
        total = total + term(env) if sign > 0 else total - term(env)
    return jnp.broadcast_to(jnp.asarray(total, jnp.result_type(float)), shape)


def _methods(parsed):
    states, params = tuple(parsed.rates), tuple(parsed.params)
    names = {*params, *CONSTANTS}
    aux = [(name, compile_expression(loc.node)) for name, (loc, _) in parsed.aux.items()]
    split = {s: split_equation(loc.node, s, names) for s, (loc, _) in parsed.rates.items()}
    whole = {s: [(1, compile_expression(loc.node))] for s, (loc, _) in parsed.rates.items()}
    inits = {s: compile_expression(parsed.init[s][0].node) for s in states}

    def constants(self):
        return dict(CONSTANTS, **{p: getattr(self, p) for p in params})

    def environment(self, t, fields):
        env = dict(constants(self), **{TIME: t}, **grid_operators(self.grid, t))
        env.update(zip(self.grid.axis_names, self.grid.coordinates))
        env.update(fields)
        for name, value in aux:
            env[name] = value(env)
        return env

    def linear_part(self):
        if not _periodic(self.grid):
            return None
        env, laplacian = constants(self), jnp.asarray(laplace_multiplier(self.grid))
        part = {}
        for state in states:
            total = jnp.zeros(fourier_shape(self.grid))
            for sign, kind, factors in split[state][0]:
                term = _coefficient(factors, env) * (laplacian if kind == "laplace" else 1.0)
                total = total + term if sign > 0 else total - term
            part[state] = total
        return part

    def nonlinear_part(self, t, fields):
        env = environment(self, t, fields)
        terms = {s: split[s][1] for s in states} if _periodic(self.grid) else whole
        return {s: _sum(terms[s], env, self.grid.shape) for s in states}

    def vector_field(self, t, fields):
        if _periodic(self.grid):
            return AbstractFieldModel.vector_field(self, t, fields)
        return nonlinear_part(self, t, fields)  # no linear part: the whole right-hand side

    def initial_fields(self):
        env = dict(constants(self), **dict(zip(self.grid.axis_names, self.grid.coordinates)))
        return {s: _sum([(1, inits[s])], env, self.grid.shape) for s in states}

    return {"linear_part": linear_part, "nonlinear_part": nonlinear_part,
            "vector_field": vector_field, "initial_fields": initial_fields}


def _summary(parsed) -> str:
    text = ", ".join(f"d{s}/dt = {loc.text}" for s, (loc, _) in parsed.rates.items())
    return text if len(text) <= 100 else text[:97] + "..."


def field_model_class(parsed, text: str) -> type[AbstractFieldModel]:
    """The :class:`AbstractFieldModel` subclass of parsed equation text with a grid."""
    grid = parsed.grid
    units = {name: unit for name, (unit, _, _) in parsed.units.items()}
    namespace = {
        "__annotations__": {**{name: float for name in parsed.params}, "grid": Grid},
        "__module__": "difflab.equations",
        "__doc__": f"A field model typed as equations: {_summary(parsed)}.",
        "grid": eqx.field(default_factory=lambda: grid),
        "field_names": tuple(parsed.rates),
        "dimensions": (grid.ndim,),
        "description": parsed.description or f"Equations on a grid: {_summary(parsed)}",
        "equations": text,
        **_methods(parsed),
    }
    for name, (default, bounds) in parsed.params.items():
        namespace[name] = param(default, bounds=bounds, unit=units.get(name, ""))
    return types.new_class(parsed.name, (AbstractFieldModel,),
                           exec_body=lambda ns: ns.update(namespace))
