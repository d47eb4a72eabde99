"""Field models typed as equations: the class that equation text with a ``grid:`` line makes.

    name: Decay
    params: D = 0.01
    grid: x = periodic(0, 1, 64)
    init: u = sin(2*pi*x)
    du/dt = D*laplace(u)

Each right-hand side is split into its additive terms. A term that is a constant (numbers
and parameters) times ``u`` itself or an operator of it, ``u`` being the field the
equation advances, is linear. On a fully periodic grid the operator may be any nesting of
``laplace`` and the derivatives ``d_dx``, ... (``laplace(laplace(u))``, ``d_dx(u)``):
these terms make the Fourier multiplier of ``linear_part`` (so ``etdrk4`` takes them
exactly), and every other term is the nonlinear part. On a grid with walls the operators
are finite differences of order 2 that meet the walls' conditions and there is no Fourier
linear part: the terms in ``u`` and ``laplace(u)``, with the same finite differences, are
``linear_operator`` (which ``imex2`` takes implicitly) and every other term is
``nonlinear_part``. A coefficient that depends on ``t``, the coordinates or a field keeps
its term out of the linear ones.
"""

import ast
import dataclasses
import functools
import types

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._base import param
from .._expressions import CONSTANTS, FUNCTIONS, TIME, compile_expression
from . import operators as fd
from .grid import Grid
from .model import AbstractFieldModel
from .spectral import (
    fourier_shape,
    gradient_multipliers,
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
    """``(factor, power)`` for each factor of the product ``a * b / c`` (power 1 or -1); a
    negated factor (``-a * b``) gives a factor ``-1`` and ``a``."""
    stack, factors = [(node, 1)], []
    while stack:
        node, power = stack.pop()
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult | ast.Div):
            stack.append((node.right, power if isinstance(node.op, ast.Mult) else -power))
            stack.append((node.left, power))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            stack.append((node.operand, power))
            if isinstance(node.op, ast.USub):
                factors.append((ast.Constant(-1.0), 1))
        else:
            factors.append((node, power))
    return factors


def _is_constant(node, names) -> bool:
    """Whether ``node`` uses only numbers, ``names`` and the math functions."""
    nodes = list(ast.walk(node))
    called = {id(n.func) for n in nodes if isinstance(n, ast.Call)}
    return all(n.func.id in FUNCTIONS for n in nodes if isinstance(n, ast.Call)) and all(
        n.id in names for n in nodes if isinstance(n, ast.Name) and id(n) not in called)


def _field_kind(node, state, operators) -> tuple[str, ...] | None:
    """The names of the ``operators`` applied to ``state``, outermost first (``()`` for
    ``state`` itself), where ``node`` is such a nesting; else None."""
    kind = []
    while (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
           and node.func.id in operators and len(node.args) == 1):
        kind.append(node.func.id)
        node = node.args[0]
    return tuple(kind) if isinstance(node, ast.Name) and node.id == state else None


def linear_term(node, state: str, names, operators=("laplace",)) -> tuple | None:
    """``(kind, [(factor, power), ...])`` where ``node`` is a product of constants (over
    ``names``) and one nesting of ``operators`` applied to ``state`` (its ``kind``, the
    operators outermost first), or ``state``; None for any other term."""
    kind, coefficient = None, []
    for factor, power in _factors(node):
        this = _field_kind(factor, state, operators)
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


def split_equation(node, state: str, names, operators=("laplace",),
                   nesting: int | None = None) -> tuple[list, list]:
    """The linear terms ``(sign, kind, factors)`` and the other terms ``(sign, function)``
    of the right-hand side ``node`` of ``d state/dt`` (linear: of at most ``nesting``
    of the ``operators``; ``None``: any)."""
    linear, other = [], []
    for sign, term in additive_terms(node):
        found = linear_term(term, state, names, operators)
        if found is not None and nesting is not None and len(found[0]) > nesting:
            found = None
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
    periodic = _periodic(grid)

    def laplace(u):
        return spectral_laplace(u, grid) if periodic else fd.laplace(u, grid, t=t)

    def derivative(axis):
        if periodic:
            return lambda u: spectral_derivative(u, grid, axis)
        return lambda u: fd.derivative(u, grid, axis, t=t)

    ops = {"laplace": laplace}
    ops.update({f"d_d{name}": derivative(axis) for axis, name in enumerate(grid.axis_names)})
    return ops


def _linear_sum(terms, env, u, operators):
    """The sum of the linear terms ``(sign, kind, factors)`` applied to the field ``u``."""
    total = jnp.zeros_like(u)
    for sign, kind, factors in terms:
        term = u
        for name in reversed(kind):
            term = operators[name](term)
        term = _coefficient(factors, env) * term
        total = total + term if sign > 0 else total - term
    return total


def fourier_multipliers(grid) -> dict:
    """Each operator a periodic grid's equations may nest, as its Fourier multiplier in
    ``rfftn``'s layout: ``-|k|^2``, and ``i k`` along each axis without its Nyquist mode
    (as ``spectral_derivative`` takes it)."""
    out = {"laplace": jnp.asarray(laplace_multiplier(grid))}
    out.update({f"d_d{name}": jnp.asarray(m)
                for name, m in zip(grid.axis_names, gradient_multipliers(grid), strict=True)})
    return out


def _at_rest(side):
    """``side`` with its wall value set to zero (a periodic side as it is)."""
    return side if side.periodic else dataclasses.replace(side, value=0.0)


@functools.lru_cache(maxsize=64)
def _second_difference_eigenvalues(extent, points: int, sides: tuple) -> np.ndarray:
    """The eigenvalues of ``operators.second_derivative`` on one axis with these sides."""
    line = Grid((extent,), (points,), sides)
    with jax.ensure_compile_time_eval():  # numbers, even while a run is being traced
        matrix = jax.jit(lambda unit: fd.second_derivative(unit, line, 0))(jnp.eye(points))
    return np.linalg.eigvals(np.asarray(matrix, dtype=float))


def difference_laplace_eigenvalues(grid) -> np.ndarray:
    """The eigenvalues of ``operators.laplace`` on ``grid`` (walls at rest), one per grid
    point: the Laplacian is a sum over axes, so they are sums of each axis's own."""
    total = np.zeros(grid.shape, dtype=complex)
    for axis in range(grid.ndim):
        sides = tuple(_at_rest(side) for side in grid.boundaries[axis])
        try:
            values = _second_difference_eigenvalues(grid.extent[axis], grid.points[axis], sides)
        except TypeError:  # a side that cannot be hashed (a Robin wall's array parameter)
            values = _second_difference_eigenvalues.__wrapped__(
                grid.extent[axis], grid.points[axis], sides)
        shape = [1] * grid.ndim
        shape[axis] = values.size
        total = total + values.reshape(shape)
    return total


def _sum(terms, env, shape):
    total = 0.0
    for sign, term in terms:
        total = total + term(env) if sign > 0 else total - term(env)
    return jnp.broadcast_to(jnp.asarray(total, jnp.result_type(float)), shape)


def _methods(parsed):
    states, params = tuple(parsed.rates), tuple(parsed.params)
    names = {*params, *CONSTANTS}
    aux = [(name, compile_expression(loc.node)) for name, (loc, _) in parsed.aux.items()]
    periodic = _periodic(parsed.grid)  # with walls: u and laplace(u) alone, as before
    operators = ("laplace", *(f"d_d{a}" for a in parsed.grid.axis_names)) if periodic \
        else ("laplace",)
    split = {s: split_equation(loc.node, s, names, operators, nesting=None if periodic else 1)
             for s, (loc, _) in parsed.rates.items()}
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

    def symbol(self, multipliers, shape):
        """The linear terms of each field, where each operator is its multiplier."""
        env, part = constants(self), {}
        for state in states:
            total = jnp.zeros(shape)
            for sign, kind, factors in split[state][0]:
                term = _coefficient(factors, env)
                for name in kind:
                    term = term * multipliers[name]
                total = total + term if sign > 0 else total - term
            part[state] = total
        return part

    def linear_part(self):
        if not _periodic(self.grid):
            return None
        return symbol(self, fourier_multipliers(self.grid), fourier_shape(self.grid))

    def linear_operator(self, t, fields):
        if _periodic(self.grid):  # the Fourier multiplier of linear_part
            return AbstractFieldModel.linear_operator(self, t, fields)
        env, ops = constants(self), grid_operators(self.grid, t)
        return {s: _linear_sum(split[s][0], env, fields[s], ops) for s in states}

    def linear_operator_is_multiplier(self):
        return _periodic(self.grid)

    def linear_eigenvalues(self):
        if _periodic(self.grid):
            return AbstractFieldModel.linear_eigenvalues(self)
        laplacian = difference_laplace_eigenvalues(self.grid)  # walls at rest
        return list(symbol(self, {"laplace": laplacian}, self.grid.shape).values())

    def nonlinear_part(self, t, fields):
        env = environment(self, t, fields)
        return {s: _sum(split[s][1], env, self.grid.shape) for s in states}

    def vector_field(self, t, fields):
        if _periodic(self.grid):
            return AbstractFieldModel.vector_field(self, t, fields)
        env = environment(self, t, fields)  # the right-hand side as written, in one piece
        return {s: _sum(whole[s], env, self.grid.shape) for s in states}

    def initial_fields(self):
        env = dict(constants(self), **dict(zip(self.grid.axis_names, self.grid.coordinates)))
        return {s: _sum([(1, inits[s])], env, self.grid.shape) for s in states}

    return {"linear_part": linear_part, "linear_operator": linear_operator,
            "linear_operator_is_multiplier": linear_operator_is_multiplier,
            "linear_eigenvalues": linear_eigenvalues,
            "nonlinear_part": nonlinear_part, "vector_field": vector_field,
            "initial_fields": initial_fields}


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
