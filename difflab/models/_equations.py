"""Models typed as equations: ``dx/dt = v`` text compiled to a :class:`Model` subclass.

The text is parsed line by line with Python's :mod:`ast` and checked against an
allow-list: numbers, declared names, arithmetic, comparisons and a fixed table of
math functions mapped to :mod:`jax.numpy`. Nothing in the text is ever evaluated by
Python; the checked tree is turned into a tree of closures that call ``jax.numpy``
(the expression rules are in ``_expressions.py``; this module reads the lines).

    params: k = 1.0 in (0, 10), c = 0.1
    init: x = 1, v = 0
    F = -k*x - c*v          # an auxiliary quantity, usable below
    dx/dt = v
    dv/dt = F

A ``grid:`` line makes it a field model (``_fields/typed.py``): its states are fields
on the grid, its initial values are expressions of the coordinates ``x, y, z``, and its
right-hand sides may apply the operators ``laplace`` and ``d_dx``, ``d_dy``, ``d_dz``.
"""

import ast
import collections
import dataclasses
import hashlib
import keyword
import math
import re
import types

import jax.numpy as jnp

from ._base import Model, param
from ._expressions import (
    CONSTANTS,
    FUNCTIONS,
    TIME,
    Fail,
    Located,
    check_node,
    compile_expression,
    constant,
    parse_expression,
    walk_checked,
)
from ._fields.boundaries import Dirichlet, Neumann, Periodic
from ._fields.grid import AXIS_NAMES, Grid
from ._fields.typed import field_model_class

MAX_CHARS = 50_000  # the whole text; a line may be as long (a generated sum of 2000 terms)

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")
_DERIVATIVE = re.compile(r"\s*d\s*([^\s/]+)\s*/\s*dt\s*=(?!=)")
_ASSIGN = re.compile(r"\s*([^\s=<>!]+)\s*=(?!=)")
_SECTION = re.compile(r"\s*(params|parameters|init|initial|units|name|description|grid)\s*:")
_UNIT = re.compile(r"[A-Za-z0-9 ./^*()+-]{1,40}\Z")  # a UDUNITS string such as m/s^2 or 1


@dataclasses.dataclass(frozen=True)
class Problem:
    """One error in equation text; ``line`` and ``column`` count from 1 (``end_*`` exclusive)."""

    line: int
    column: int
    message: str
    end_line: int | None = None
    end_column: int | None = None

    def __str__(self):
        return f"line {self.line}, column {self.column}: {self.message}"


class EquationError(ValueError):
    """Equation text that does not compile; ``problems`` lists every error found."""

    def __init__(self, problems, path=None):
        self.problems = list(problems)
        self.path = None if path is None else str(path)
        first = self.problems[0]
        where = (f"{self.path}:{first.line}:{first.column}: " if self.path
                 else f"line {first.line}, column {first.column}: ")
        more = len(self.problems) - 1
        tail = f" (and {more} more error{'s' * (more > 1)})" if more else ""
        super().__init__(f"{where}{first.message}{tail}")


@dataclasses.dataclass
class _Parsed:
    name: str = "EquationModel"  # a "name:" line replaces it
    description: str = ""
    params: dict = dataclasses.field(default_factory=dict)  # name -> (default, bounds)
    init: dict = dataclasses.field(default_factory=dict)  # state -> (node, line)
    rates: dict = dataclasses.field(default_factory=dict)  # state -> (node, line)
    aux: dict = dataclasses.field(default_factory=dict)  # name -> (node, line)
    lines: dict = dataclasses.field(default_factory=dict)  # declared name -> line
    columns: dict = dataclasses.field(default_factory=dict)  # state or aux name -> column
    units: dict = dataclasses.field(default_factory=dict)  # t, state or param -> (unit, line, col)
    axes: list = dataclasses.field(default_factory=list)  # (name, (lo, hi), n, boundary)
    grid: Grid | None = None  # from a "grid:" line: a field model

    @property
    def operators(self) -> tuple[str, ...]:
        """The operators a field model's right-hand sides may apply."""
        if self.grid is None:
            return ()
        return ("laplace", *(f"d_d{axis}" for axis in self.grid.axis_names))


# --- lines -----------------------------------------------------------------------------

def _strip_comment(line: str) -> str:
    return line.split("#", 1)[0].rstrip()


def _check_declared_name(name: str, column: int, parsed: _Parsed, line: int):
    end = column + len(name)
    if not _NAME.match(name) or keyword.iskeyword(name):
        raise Fail(column, f"{name!r} is not a valid name: use letters, digits and '_', "
                           "starting with a letter", end)
    reserved = (TIME, "equations", *CONSTANTS, *FUNCTIONS, *OPERATORS)
    if name in reserved:
        raise Fail(column, f"{name!r} is reserved (time, constants and functions)", end)
    if hasattr(Model, name):
        raise Fail(column, f"{name!r} is reserved by difflab.Model", end)
    if name in parsed.lines:
        raise Fail(column, f"{name!r} is already declared on line {parsed.lines[name]}", end)
    parsed.lines[name] = line


def _split_items(text: str, start: int):
    """``(item, start)`` for each top-level comma-separated item of ``text``."""
    depth, begin = 0, 0
    for i, ch in enumerate(text + ","):
        depth += (ch in "([{") - (ch in ")]}")
        if ch == "," and depth == 0:
            if text[begin:i].strip():
                yield text[begin:i], start + begin
            begin = i + 1


def _assignment(text: str, start: int):
    match = _ASSIGN.match(text)
    if not match:
        raise Fail(start + 1, "expected NAME = VALUE")
    return match.group(1), start + match.start(1) + 1, text[match.end():], start + match.end()


def _number_expression(loc: Located, what: str) -> float:
    for node in walk_checked(loc):
        check_node(loc, node, {name: None for name in CONSTANTS})
    value = constant(loc.node)
    if value is None:
        raise loc.fail(loc.node, f"{what} must be a number")
    if not math.isfinite(value):
        raise loc.fail(loc.node, f"{what} is not a finite number")
    return value


def _param_item(text, start, parsed, line):
    name, column, value, offset = _assignment(text, start)
    _check_declared_name(name, column, parsed, line)
    loc = parse_expression(value, offset)
    bounds = None
    node = loc.node
    if (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.In)
            and isinstance(node.comparators[0], ast.Tuple | ast.List)):
        pair = node.comparators[0]
        if len(pair.elts) != 2:
            raise loc.fail(pair, "bounds are written (low, high)")
        low, high = (_number_expression(Located(e, loc.text, loc.start), "a bound")
                     for e in pair.elts)
        if not low <= high:
            raise loc.fail(pair, f"the low bound {low:g} is above the high bound {high:g}")
        bounds, node = (low, high), node.left
    default = _number_expression(Located(node, loc.text, loc.start), f"the default of {name}")
    if bounds and not bounds[0] <= default <= bounds[1]:
        raise loc.fail(node, f"default {default:g} lies outside the bounds {bounds}")
    parsed.params[name] = (default, bounds)


def _init_item(text, start, parsed, line):
    name, column, value, offset = _assignment(text, start)
    if name in parsed.init:
        raise Fail(column, f"{name!r} already has an initial value", column + len(name))
    parsed.init[name] = (None, line, column)
    parsed.init[name] = (parse_expression(value, offset), line, column)


def _unit_item(text, start, parsed, line):
    name, column, value, offset = _assignment(text, start)
    unit = value.strip()
    if not _UNIT.match(unit):
        raise Fail(offset + len(value) - len(value.lstrip()) + 1, "a unit is letters, digits, spaces and . / ^ * ( ) + - "
                               "(at most 40), such as m/s^2 or 1 (dimensionless)")
    if name in parsed.units:
        raise Fail(column, f"{name!r} already has a unit", column + len(name))
    parsed.units[name] = (unit, line, column)


OPERATORS = ("laplace", "d_dx", "d_dy", "d_dz")
_BOUNDARIES = {"periodic": (3, 3), "dirichlet": (3, 4), "neumann": (3, 4)}  # arguments


def _grid_item(text, start, parsed, line):
    """One axis of a ``grid:`` line: ``x = periodic(0, 1, 128)``."""
    name, column, value, offset = _assignment(text, start)
    axis = len(parsed.axes)
    expected = AXIS_NAMES[axis] if axis < len(AXIS_NAMES) else None
    if name != expected:
        raise Fail(column, f"the grid's axes are x, y, z in that order; expected "
                           f"{expected or 'at most 3 axes'}, not {name!r}", column + len(name))
    _check_declared_name(name, column, parsed, line)
    loc = parse_expression(value, offset)
    node = loc.node
    kinds = ("periodic(low, high, points), dirichlet(low, high, points[, value]) or "
             "neumann(low, high, points[, flux])")
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in _BOUNDARIES and not node.keywords):
        raise loc.fail(node, f"an axis is one of {kinds}")
    low_args, high_args = _BOUNDARIES[node.func.id]
    if not low_args <= len(node.args) <= high_args:
        raise loc.fail(node, f"{node.func.id} takes low, high, points"
                             f"{', value' * (high_args > low_args)}")
    low, high, points, *rest = (_number_expression(Located(a, loc.text, loc.start), what)
                                for a, what in zip(node.args, ("low", "high", "the points",
                                                               "the boundary value")))
    if not points.is_integer() or points < 2:
        raise loc.fail(node.args[2], f"axis {name} needs a whole number of points, at "
                                     f"least 2, not {points:g}")
    if not high > low:
        raise loc.fail(node, f"axis {name} runs from low to high, with high > low")
    boundary = {"periodic": Periodic, "dirichlet": Dirichlet, "neumann": Neumann}[node.func.id]
    parsed.axes.append((name, (low, high), int(points), boundary(*rest)))


def _grid_line(rest, start, parsed, number):
    if parsed.grid is not None:
        raise Fail(start + 1, "the grid is already given on an earlier line")
    for item, offset in _split_items(rest, start):
        _grid_item(item, offset, parsed, number)
    if not parsed.axes:
        raise Fail(start + 1, "a grid has 1 to 3 axes, such as x = periodic(0, 1, 64)")
    _, extent, points, boundaries = zip(*parsed.axes)
    parsed.grid = Grid(extent, points, boundaries)


def _parse_line(raw: str, number: int, parsed: _Parsed):
    line = _strip_comment(raw)
    if not line.strip():
        return
    section = _SECTION.match(line)
    if section:
        key, rest, start = section.group(1), line[section.end():], section.end()
        if key in ("params", "parameters", "init", "initial", "units"):
            add = (_param_item if key.startswith("param") else
                   _unit_item if key == "units" else _init_item)
            for item, offset in _split_items(rest, start):
                add(item, offset, parsed, number)
        elif key == "grid":
            _grid_line(rest, start, parsed, number)
        elif key == "name":
            name = rest.strip()
            if not _NAME.match(name) or keyword.iskeyword(name):
                raise Fail(start + 1, "the model name must be letters, digits and '_', "
                                      "starting with a letter")
            parsed.name = name
        else:
            parsed.description = rest.strip()
        return
    derivative = _DERIVATIVE.match(line)
    match = derivative or _ASSIGN.match(line)
    if not match:
        raise Fail(len(line) - len(line.lstrip()) + 1,
                   "expected 'dX/dt = ...', 'NAME = ...', 'params: ...' or 'init: ...'")
    name, column = match.group(1), match.start(1) + 1
    _check_declared_name(name, column, parsed, number)
    target = parsed.rates if derivative else parsed.aux
    target[name], parsed.columns[name] = (None, number), column
    target[name] = (parse_expression(line[match.end():], match.end()), number)


# --- checking names across lines -------------------------------------------------------

def _check_uses(parsed: _Parsed, problems: list):
    params = {name: None for name in (*parsed.params, *CONSTANTS)}
    later = {name: f"{name!r} is used before it is defined (line {line})"
             for name, (_, line) in parsed.aux.items()}
    coordinates = {a: None for a in (parsed.grid.axis_names if parsed.grid else ())}
    dynamic = dict(params, **later, **{s: None for s in parsed.rates}, **{TIME: None},
                   **coordinates)
    fields = (*parsed.rates, *parsed.aux)
    operators = {op: fields for op in parsed.operators}
    for name, (loc, number) in parsed.aux.items():
        _check_expression(loc, number, dynamic, problems, operators)
        dynamic[name] = None
    for loc, number in parsed.rates.values():
        _check_expression(loc, number, dynamic, problems, operators)
    allowed = "parameters and coordinates" if parsed.grid else "parameters"
    not_here = {s: f"an initial value may use {allowed} only, not the state "
                   f"{s!r}" for s in parsed.rates}
    not_here.update({a: f"an initial value may use {allowed} only, not {a!r}"
                     for a in parsed.aux})
    not_here[TIME] = f"an initial value may use {allowed} only, not the time t"
    params = dict(params, **coordinates)
    for state, (loc, number, column) in parsed.init.items():
        if state not in parsed.rates:
            problems.append(Problem(number, column, f"{state!r} is not a state (no d{state}/dt "
                                                    "equation)", None, column + len(state)))
            continue
        _check_expression(loc, number, dict(not_here, **params), problems)
    for name, (_, number, column) in parsed.units.items():
        if name != TIME and name not in parsed.rates and name not in parsed.params:
            problems.append(Problem(number, column, f"units: {name!r} is not the time t, a "
                                                    "state or a parameter", number,
                                    column + len(name)))


def _check_expression(loc, number, known, problems, operators=None):
    """Add every problem of one expression; inside a refused part nothing more is said."""
    if loc is None:  # its line failed to parse, and said so
        return
    fails, refused = [], []
    try:
        for node in walk_checked(loc):  # a node comes before what lies inside it
            if any(_inside(node, bad) for bad in refused):
                continue
            try:
                check_node(loc, node, known, operators)
            except Fail as fail:
                fails.append(fail)
                refused.append(node)
    except Fail as fail:  # too deep or too long: the walk itself stops
        fails.append(fail)
    problems.extend(Problem(number, f.column, f.message, number, f.end_column) for f in fails)


def _inside(node, outer) -> bool:
    """Whether ``node`` lies within the text of ``outer`` (both in one expression)."""
    if not hasattr(node, "col_offset") or not hasattr(outer, "col_offset"):
        return False
    return outer.col_offset <= node.col_offset and node.end_col_offset <= outer.end_col_offset


def _check_complete(parsed: _Parsed, problems: list, last_line: int):
    if not parsed.rates:
        problems.append(Problem(max(last_line, 1), 1, "no equations: write one 'dX/dt = ...' "
                                                      "line per state"))
    for state, (_, number) in parsed.rates.items():
        if state not in parsed.init:
            column = parsed.columns[state]
            problems.append(Problem(number, column, f"state {state!r} has no initial value; add "
                                                    f"'init: {state} = ...'",
                                    number, column + len(state)))


def _parse(text: str) -> tuple[_Parsed, list[Problem]]:
    if not isinstance(text, str):
        raise TypeError(f"equation text must be a str, not {type(text).__name__}")
    if len(text) > MAX_CHARS:
        return _Parsed(), [Problem(1, 1, f"text too long ({len(text)} characters; at most "
                                         f"{MAX_CHARS})")]
    parsed, problems, uses, complete = _Parsed(), [], [], []
    lines = text.splitlines()
    for number, raw in enumerate(lines, start=1):
        try:
            _parse_line(raw, number, parsed)
        except Fail as fail:
            problems.append(Problem(number, fail.column, fail.message, number, fail.end_column))
    _check_uses(parsed, uses)
    _check_complete(parsed, complete, len(lines))
    # A line that does not parse declares nothing, and the checks across lines may then
    # blame its names: the causes come first, then what may follow from them.
    key = (lambda p: (p.line, p.column))
    return parsed, sorted(problems, key=key) + sorted(uses, key=key) + complete


def check_equations(text: str) -> list[Problem]:
    """Every error in equation ``text`` with its line and column (``[]``: it compiles).

    Cheap enough to call on every keystroke: it parses and checks, builds nothing.
    """
    return _parse(text)[1]


# --- the model class -------------------------------------------------------------------

def _methods(parsed: _Parsed):
    states = tuple(parsed.rates)
    params = tuple(parsed.params)
    aux = [(name, compile_expression(loc.node)) for name, (loc, _) in parsed.aux.items()]
    rates = [compile_expression(loc.node) for loc, _ in parsed.rates.values()]
    inits = [compile_expression(parsed.init[s][0].node) for s in states]

    def vector_field(self, t, y):
        env = dict(CONSTANTS, **{p: getattr(self, p) for p in params}, t=t)
        env.update(zip(states, (y[i] for i in range(len(states)))))
        for name, value in aux:
            env[name] = value(env)
        return jnp.stack([jnp.broadcast_to(jnp.asarray(rate(env), y.dtype), ())
                          for rate in rates])

    def initial_state(self):
        env = dict(CONSTANTS, **{p: getattr(self, p) for p in params})
        dtype = jnp.result_type(float)
        return jnp.stack([jnp.broadcast_to(jnp.asarray(v(env), dtype), ()) for v in inits])

    return vector_field, initial_state


def _summary(parsed: _Parsed) -> str:
    text = ", ".join(f"d{s}/dt = {loc.text}" for s, (loc, _) in parsed.rates.items())
    return text if len(text) <= 100 else text[:97] + "..."


def _build_class(parsed: _Parsed, text: str):
    if parsed.grid is not None:
        return field_model_class(parsed, text)
    vector_field, initial_state = _methods(parsed)
    units = {name: unit for name, (unit, _, _) in parsed.units.items()}
    namespace = {
        "__annotations__": {name: float for name in parsed.params},
        "time_unit": units.get(TIME),
        "state_units": {s: units[s] for s in parsed.rates if s in units} or None,
        "__module__": "difflab.equations",
        "__doc__": f"A model typed as equations: {_summary(parsed)}.",
        "state_names": tuple(parsed.rates),
        "description": parsed.description or f"Equations: {_summary(parsed)}",
        "equations": text,
        "vector_field": vector_field,
        "initial_state": initial_state,
    }
    for name, (default, bounds) in parsed.params.items():
        namespace[name] = param(default, bounds=bounds, unit=units.get(name, ""))
    return types.new_class(parsed.name, (Model,), exec_body=lambda ns: ns.update(namespace))


_CACHE: collections.OrderedDict = collections.OrderedDict()
_CACHE_SIZE = 64


def _default_name(name, path) -> str:
    if name is None and path is not None:
        name = "".join(w[:1].upper() + w[1:] for w in re.split(r"[^A-Za-z0-9]+", str(path)
                       .replace("\\", "/").rsplit("/", 1)[-1].removesuffix(".eqn")))
    return name if isinstance(name, str) and _NAME.match(name) else "EquationModel"


def from_equations(text: str, *, name: str | None = None, path=None) -> type[Model]:
    """The :class:`difflab.Model` subclass that equation ``text`` describes.

    The class is named by a ``name:`` line, else ``name``, else after ``path`` (a
    ``.eqn`` file's name), else ``EquationModel``. Equal texts give the same class (so
    jitted code is reused). Errors raise :class:`EquationError`, naming the line and
    column (and ``path`` if given). The class's ``equations`` attribute holds the text.
    """
    default = _default_name(name, path)
    key = (hashlib.sha256(text.encode()).hexdigest() if isinstance(text, str) else "", default)
    if key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    parsed, problems = _parse(text)
    if problems:
        raise EquationError(problems, path)
    if parsed.name == "EquationModel":
        parsed.name = default
    cls = _build_class(parsed, text)
    _CACHE[key] = cls
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return cls


def is_equation_model(cls) -> bool:
    """True for a class made by :func:`from_equations`."""
    return isinstance(cls, type) and issubclass(cls, Model) and "equations" in vars(cls)


# --- one expression --------------------------------------------------------------------

MAX_FORMULA = 1_000  # characters


def compile_formula(text: str, names):
    """A function ``env -> value`` for the one-line expression ``text`` over ``names``.

    The same allow-list as equations: numbers, ``names``, ``pi``, arithmetic,
    comparisons and the math functions; ``env`` maps every name used to a value (a
    number or an array: the operations are elementwise). Bad text raises
    :class:`EquationError` naming the column (line 1), with close names suggested.
    """
    if not isinstance(text, str):
        raise TypeError(f"an expression must be a str, not {type(text).__name__}")
    if len(text) > MAX_FORMULA:
        raise EquationError([Problem(1, MAX_FORMULA + 1, "expression too long (more than "
                                                         f"{MAX_FORMULA} characters)")])
    known = dict.fromkeys((*CONSTANTS, *names))
    try:
        loc = parse_expression(text, 0)
        for node in walk_checked(loc):
            check_node(loc, node, known)
    except Fail as fail:
        raise EquationError([Problem(1, fail.column, fail.message, 1, fail.end_column)]) from None
    return compile_expression(loc.node)
