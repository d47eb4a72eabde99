"""Models typed as equations: ``dx/dt = v`` text compiled to a :class:`Model` subclass.

The text is parsed line by line with Python's :mod:`ast` and checked against an
allow-list: numbers, declared names, arithmetic, comparisons and a fixed table of
math functions mapped to :mod:`jax.numpy`. Nothing in the text is ever evaluated by
Python; the checked tree is turned into a tree of closures that call ``jax.numpy``.

    params: k = 1.0 in (0, 10), c = 0.1
    init: x = 1, v = 0
    F = -k*x - c*v          # an auxiliary quantity, usable below
    dx/dt = v
    dv/dt = F
"""

import ast
import collections
import dataclasses
import difflib
import hashlib
import keyword
import math
import operator
import re
import types

import jax
import jax.numpy as jnp
import jax.scipy.special

from ._base import Model, param

MAX_CHARS = 50_000
MAX_LINE = 1_000
MAX_NESTING = 30
MAX_NODES = 2_000
MAX_EXPONENT = 1_000.0

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")
_DERIVATIVE = re.compile(r"\s*d\s*([^\s/]+)\s*/\s*dt\s*=(?!=)")
_ASSIGN = re.compile(r"\s*([^\s=<>!]+)\s*=(?!=)")
_SECTION = re.compile(r"\s*(params|parameters|init|initial|name|description)\s*:")

FUNCTIONS = {
    "sin": (jnp.sin, 1), "cos": (jnp.cos, 1), "tan": (jnp.tan, 1),
    "asin": (jnp.arcsin, 1), "acos": (jnp.arccos, 1), "atan": (jnp.arctan, 1),
    "arcsin": (jnp.arcsin, 1), "arccos": (jnp.arccos, 1), "arctan": (jnp.arctan, 1),
    "atan2": (jnp.arctan2, 2), "arctan2": (jnp.arctan2, 2), "hypot": (jnp.hypot, 2),
    "sinh": (jnp.sinh, 1), "cosh": (jnp.cosh, 1), "tanh": (jnp.tanh, 1),
    "asinh": (jnp.arcsinh, 1), "acosh": (jnp.arccosh, 1), "atanh": (jnp.arctanh, 1),
    "exp": (jnp.exp, 1), "expm1": (jnp.expm1, 1), "log": (jnp.log, 1),
    "log1p": (jnp.log1p, 1), "log10": (jnp.log10, 1), "log2": (jnp.log2, 1),
    "sqrt": (jnp.sqrt, 1), "cbrt": (jnp.cbrt, 1), "abs": (jnp.abs, 1),
    "sign": (jnp.sign, 1), "floor": (jnp.floor, 1), "ceil": (jnp.ceil, 1),
    "min": (jnp.minimum, 2), "max": (jnp.maximum, 2), "clip": (jnp.clip, 3),
    "where": (jnp.where, 3), "heaviside": (lambda x: jnp.heaviside(x, 0.5), 1),
    "sigmoid": (jax.nn.sigmoid, 1), "erf": (jax.scipy.special.erf, 1),
}
CONSTANTS = {"pi": math.pi}
TIME = "t"

_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv, ast.Pow: operator.pow, ast.Mod: jnp.mod}
_COMPARE = {ast.Lt: jnp.less, ast.LtE: jnp.less_equal, ast.Gt: jnp.greater,
            ast.GtE: jnp.greater_equal, ast.Eq: jnp.equal, ast.NotEq: jnp.not_equal}
_FORBIDDEN = {
    ast.Attribute: "attribute access ('.') is not allowed",
    ast.Subscript: "subscripts ('[...]') are not allowed; use the state names",
    ast.Lambda: "lambda is not allowed",
    ast.ListComp: "comprehensions are not allowed", ast.SetComp: "comprehensions are not allowed",
    ast.DictComp: "comprehensions are not allowed",
    ast.GeneratorExp: "comprehensions are not allowed",
    ast.JoinedStr: "strings are not allowed", ast.NamedExpr: "':=' is not allowed",
    ast.IfExp: "'a if c else b' is not allowed; use where(c, a, b)",
    ast.Starred: "'*' unpacking is not allowed",
    ast.Tuple: "tuples are not allowed", ast.List: "lists are not allowed",
    ast.Dict: "dicts are not allowed", ast.Set: "sets are not allowed",
}


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


class _Fail(Exception):
    def __init__(self, column, message, end_column=None):
        self.column, self.message, self.end_column = column, message, end_column


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


# --- expressions ---------------------------------------------------------------------

def _parse_expression(text: str, start: int):
    """The ast of ``text`` (found at 0-based ``start`` in its line), checked for size first."""
    if not text.strip():
        raise _Fail(start + 1, "expected an expression")
    depth = deepest = 0
    for i, ch in enumerate(text):
        depth += ch in "([{"
        depth -= ch in ")]}"
        if depth > MAX_NESTING:
            raise _Fail(start + i + 1, f"expression nested too deeply (more than {MAX_NESTING} "
                                       "levels of brackets)")
        deepest = max(deepest, depth)
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as error:
        lead = len(text) - len(text.lstrip())
        raise _Fail(start + lead + max(error.offset or 1, 1), f"syntax error: {error.msg}") from None
    except (RecursionError, MemoryError, ValueError):
        raise _Fail(start + 1, "expression too complex") from None
    return _Located(tree.body, text.strip(), start + len(text) - len(text.lstrip()))


@dataclasses.dataclass
class _Located:
    node: ast.AST
    text: str
    start: int

    def column(self, node) -> int:
        """1-based character column of ``node`` in its line (ast counts UTF-8 bytes)."""
        prefix = self.text.encode()[: node.col_offset].decode(errors="ignore")
        return self.start + len(prefix) + 1

    def end_column(self, node) -> int:
        prefix = self.text.encode()[: node.end_col_offset].decode(errors="ignore")
        return self.start + len(prefix) + 1

    def fail(self, node, message):
        return _Fail(self.column(node), message, self.end_column(node))


def _walk_checked(loc: _Located):
    """Every node of ``loc``, refusing over-deep or over-large trees (iteratively)."""
    stack, count = [(loc.node, 1)], 0
    while stack:
        node, depth = stack.pop()
        count += 1
        if depth > MAX_NESTING:
            raise loc.fail(node, f"expression nested too deeply (more than {MAX_NESTING} levels)")
        if count > MAX_NODES:
            raise loc.fail(loc.node, f"expression too long (more than {MAX_NODES} terms)")
        yield node
        children = ast.iter_child_nodes(node)
        if isinstance(node, ast.Call):  # the function's name is checked by _check_call
            children = (*node.args, *(k.value for k in node.keywords))
        stack.extend((child, depth + 1) for child in children)


def _check_number(loc, node):
    value = node.value
    if isinstance(value, str | bytes):
        raise loc.fail(node, "strings are not allowed")
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise loc.fail(node, f"{value!r} is not allowed; use a real number")
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if not math.isfinite(number):
        raise loc.fail(node, "number too large")


def _constant(node):
    """The value of a numbers-only expression as a Python float, else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        try:
            return float(node.value)
        except OverflowError:
            return math.inf
    if isinstance(node, ast.Name) and node.id in CONSTANTS:
        return CONSTANTS[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _constant(node.operand)
        return None if value is None else (-value if isinstance(node.op, ast.USub) else value)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _constant(node.left), _constant(node.right)
        if left is None or right is None:
            return None
        try:
            return float(_PYTHON_BINARY[type(node.op)](left, right))
        except OverflowError:
            return math.inf
        except (ZeroDivisionError, ValueError, TypeError):
            return math.nan
    return None


_PYTHON_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
                  ast.Div: operator.truediv, ast.Pow: math.pow, ast.Mod: math.fmod}


def _check_node(loc, node, known):
    if type(node) in _FORBIDDEN:
        raise loc.fail(node, _FORBIDDEN[type(node)])
    if isinstance(node, ast.Constant):
        _check_number(loc, node)
    elif isinstance(node, ast.Name):
        _check_name_use(loc, node, known)
    elif isinstance(node, ast.BinOp):
        if type(node.op) not in _BINARY:
            raise loc.fail(node, f"operator {_op_text(node.op)} is not allowed")
        if isinstance(node.op, ast.Pow):
            exponent = _constant(node.right)
            if exponent is not None and not abs(exponent) <= MAX_EXPONENT:
                raise loc.fail(node.right, f"exponent too large (at most {MAX_EXPONENT:g})")
    elif isinstance(node, ast.UnaryOp):
        if not isinstance(node.op, ast.USub | ast.UAdd | ast.Not):
            raise loc.fail(node, f"operator {_op_text(node.op)} is not allowed")
    elif isinstance(node, ast.Compare):
        bad = [op for op in node.ops if type(op) not in _COMPARE]
        if bad:
            raise loc.fail(node, f"comparison {_op_text(bad[0])} is not allowed")
    elif isinstance(node, ast.Call):
        _check_call(loc, node)
    elif not isinstance(node, ast.BoolOp | ast.operator | ast.unaryop | ast.cmpop
                        | ast.boolop | ast.expr_context):
        raise loc.fail(node, f"{type(node).__name__} is not allowed in an equation")


def _op_text(op) -> str:
    return {ast.FloorDiv: "'//'", ast.MatMult: "'@'", ast.BitAnd: "'&'", ast.BitOr: "'|'",
            ast.BitXor: "'^' (use ** for powers)", ast.LShift: "'<<'", ast.RShift: "'>>'",
            ast.Invert: "'~'", ast.In: "'in'", ast.NotIn: "'not in'", ast.Is: "'is'",
            ast.IsNot: "'is not'"}.get(type(op), type(op).__name__)


def _check_name_use(loc, node, known):
    name = node.id
    if name.startswith("_"):
        raise loc.fail(node, f"names starting with '_' are not allowed ({name!r})")
    if name in FUNCTIONS:
        raise loc.fail(node, f"{name} is a function; call it as {name}(...)")
    if name not in known:
        close = difflib.get_close_matches(name, list(known), n=2)
        hint = f"; did you mean {' or '.join(close)}?" if close else ""
        raise loc.fail(node, f"unknown name {name!r}{hint}")
    if known[name] is not None:
        raise loc.fail(node, known[name])


def _check_call(loc, node):
    func = node.func
    if not isinstance(func, ast.Name):
        raise loc.fail(func, _FORBIDDEN.get(type(func), "only the math functions can be called"))
    if func.id.startswith("_"):
        raise loc.fail(func, f"names starting with '_' are not allowed ({func.id!r})")
    if func.id not in FUNCTIONS:
        raise loc.fail(func, f"unknown function {func.id!r}; the functions are "
                             f"{', '.join(sorted(FUNCTIONS))}")
    if node.keywords:
        raise loc.fail(node.keywords[0].value, "keyword arguments are not allowed")
    arity = FUNCTIONS[func.id][1]
    if len(node.args) != arity:
        raise loc.fail(node, f"{func.id} takes {arity} argument{'s' * (arity > 1)}, "
                             f"got {len(node.args)}")


def _compile(node):
    """A function ``env -> value`` computing ``node`` with jax.numpy (node already checked)."""
    if isinstance(node, ast.Constant):
        value = float(node.value)
        return lambda env: value
    if isinstance(node, ast.Name):
        name = node.id
        return lambda env: env[name]
    if isinstance(node, ast.BinOp):
        op, left, right = _BINARY[type(node.op)], _compile(node.left), _compile(node.right)
        return lambda env: op(left(env), right(env))
    if isinstance(node, ast.UnaryOp):
        operand = _compile(node.operand)
        op = {ast.USub: operator.neg, ast.UAdd: operator.pos,
              ast.Not: jnp.logical_not}[type(node.op)]
        return lambda env: op(operand(env))
    if isinstance(node, ast.Compare):
        terms = [_compile(n) for n in (node.left, *node.comparators)]
        ops = [_COMPARE[type(op)] for op in node.ops]
        return lambda env: _chain(env, terms, ops)
    if isinstance(node, ast.BoolOp):
        values = [_compile(n) for n in node.values]
        op = jnp.logical_and if isinstance(node.op, ast.And) else jnp.logical_or
        return lambda env: _reduce(op, [v(env) for v in values])
    func, args = FUNCTIONS[node.func.id][0], [_compile(n) for n in node.args]
    return lambda env: func(*(a(env) for a in args))


def _chain(env, terms, ops):
    values = [term(env) for term in terms]
    return _reduce(jnp.logical_and, [op(a, b) for op, a, b in zip(ops, values, values[1:])])


def _reduce(op, values):
    out = values[0]
    for value in values[1:]:
        out = op(out, value)
    return out


# --- lines -----------------------------------------------------------------------------

def _strip_comment(line: str) -> str:
    return line.split("#", 1)[0].rstrip()


def _check_declared_name(name: str, column: int, parsed: _Parsed, line: int):
    end = column + len(name)
    if not _NAME.match(name) or keyword.iskeyword(name):
        raise _Fail(column, f"{name!r} is not a valid name: use letters, digits and '_', "
                            "starting with a letter", end)
    reserved = (TIME, "equations", *CONSTANTS, *FUNCTIONS)
    if name in reserved:
        raise _Fail(column, f"{name!r} is reserved (time, constants and functions)", end)
    if hasattr(Model, name):
        raise _Fail(column, f"{name!r} is reserved by difflab.Model", end)
    if name in parsed.lines:
        raise _Fail(column, f"{name!r} is already declared on line {parsed.lines[name]}", end)
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
        raise _Fail(start + 1, "expected NAME = VALUE")
    return match.group(1), start + match.start(1) + 1, text[match.end():], start + match.end()


def _number_expression(loc: _Located, what: str) -> float:
    for node in _walk_checked(loc):
        _check_node(loc, node, {name: None for name in CONSTANTS})
    value = _constant(loc.node)
    if value is None:
        raise loc.fail(loc.node, f"{what} must be a number")
    if not math.isfinite(value):
        raise loc.fail(loc.node, f"{what} is not a finite number")
    return value


def _param_item(text, start, parsed, line):
    name, column, value, offset = _assignment(text, start)
    _check_declared_name(name, column, parsed, line)
    loc = _parse_expression(value, offset)
    bounds = None
    node = loc.node
    if (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.In)
            and isinstance(node.comparators[0], ast.Tuple | ast.List)):
        pair = node.comparators[0]
        if len(pair.elts) != 2:
            raise loc.fail(pair, "bounds are written (low, high)")
        low, high = (_number_expression(_Located(e, loc.text, loc.start), "a bound")
                     for e in pair.elts)
        if not low <= high:
            raise loc.fail(pair, f"the low bound {low:g} is above the high bound {high:g}")
        bounds, node = (low, high), node.left
    default = _number_expression(_Located(node, loc.text, loc.start), f"the default of {name}")
    if bounds and not bounds[0] <= default <= bounds[1]:
        raise loc.fail(node, f"default {default:g} lies outside the bounds {bounds}")
    parsed.params[name] = (default, bounds)


def _init_item(text, start, parsed, line):
    name, column, value, offset = _assignment(text, start)
    if name in parsed.init:
        raise _Fail(column, f"{name!r} already has an initial value", column + len(name))
    parsed.init[name] = (None, line, column)
    parsed.init[name] = (_parse_expression(value, offset), line, column)


def _parse_line(raw: str, number: int, parsed: _Parsed):
    if len(raw) > MAX_LINE:
        raise _Fail(MAX_LINE + 1, f"line too long (more than {MAX_LINE} characters)")
    line = _strip_comment(raw)
    if not line.strip():
        return
    section = _SECTION.match(line)
    if section:
        key, rest, start = section.group(1), line[section.end():], section.end()
        if key in ("params", "parameters", "init", "initial"):
            add = _param_item if key.startswith("param") else _init_item
            for item, offset in _split_items(rest, start):
                add(item, offset, parsed, number)
        elif key == "name":
            name = rest.strip()
            if not _NAME.match(name) or keyword.iskeyword(name):
                raise _Fail(start + 1, "the model name must be letters, digits and '_', "
                                       "starting with a letter")
            parsed.name = name
        else:
            parsed.description = rest.strip()
        return
    derivative = _DERIVATIVE.match(line)
    match = derivative or _ASSIGN.match(line)
    if not match:
        raise _Fail(len(line) - len(line.lstrip()) + 1,
                    "expected 'dX/dt = ...', 'NAME = ...', 'params: ...' or 'init: ...'")
    name, column = match.group(1), match.start(1) + 1
    _check_declared_name(name, column, parsed, number)
    target = parsed.rates if derivative else parsed.aux
    target[name], parsed.columns[name] = (None, number), column
    target[name] = (_parse_expression(line[match.end():], match.end()), number)


# --- checking names across lines -------------------------------------------------------

def _check_uses(parsed: _Parsed, problems: list):
    params = {name: None for name in (*parsed.params, *CONSTANTS)}
    later = {name: f"{name!r} is used before it is defined (line {line})"
             for name, (_, line) in parsed.aux.items()}
    dynamic = dict(params, **later, **{s: None for s in parsed.rates}, **{TIME: None})
    for name, (loc, number) in parsed.aux.items():
        _check_expression(loc, number, dynamic, problems)
        dynamic[name] = None
    for loc, number in parsed.rates.values():
        _check_expression(loc, number, dynamic, problems)
    not_here = {s: "an initial value may use parameters only, not the state "
                   f"{s!r}" for s in parsed.rates}
    not_here.update({a: f"an initial value may use parameters only, not {a!r}"
                     for a in parsed.aux})
    not_here[TIME] = "an initial value may use parameters only, not the time t"
    for state, (loc, number, column) in parsed.init.items():
        if state not in parsed.rates:
            problems.append(Problem(number, column, f"{state!r} is not a state (no d{state}/dt "
                                                    "equation)", None, column + len(state)))
            continue
        _check_expression(loc, number, dict(not_here, **params), problems)


def _check_expression(loc, number, known, problems):
    if loc is None:  # its line failed to parse, and said so
        return
    try:
        for node in _walk_checked(loc):
            _check_node(loc, node, known)
    except _Fail as fail:
        problems.append(Problem(number, fail.column, fail.message, number, fail.end_column))


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
    parsed, problems = _Parsed(), []
    lines = text.splitlines()
    for number, raw in enumerate(lines, start=1):
        try:
            _parse_line(raw, number, parsed)
        except _Fail as fail:
            problems.append(Problem(number, fail.column, fail.message, number, fail.end_column))
    _check_uses(parsed, problems)
    problems.sort(key=lambda p: (p.line, p.column))
    _check_complete(parsed, problems, len(lines))
    return parsed, problems


def check_equations(text: str) -> list[Problem]:
    """Every error in equation ``text`` with its line and column (``[]``: it compiles).

    Cheap enough to call on every keystroke: it parses and checks, builds nothing.
    """
    return _parse(text)[1]


# --- the model class -------------------------------------------------------------------

def _methods(parsed: _Parsed):
    states = tuple(parsed.rates)
    params = tuple(parsed.params)
    aux = [(name, _compile(loc.node)) for name, (loc, _) in parsed.aux.items()]
    rates = [_compile(loc.node) for loc, _ in parsed.rates.values()]
    inits = [_compile(parsed.init[s][0].node) for s in states]

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
    vector_field, initial_state = _methods(parsed)
    namespace = {
        "__annotations__": {name: float for name in parsed.params},
        "__module__": "difflab.equations",
        "__doc__": f"A model typed as equations: {_summary(parsed)}.",
        "state_names": tuple(parsed.rates),
        "description": parsed.description or f"Equations: {_summary(parsed)}",
        "equations": text,
        "vector_field": vector_field,
        "initial_state": initial_state,
    }
    for name, (default, bounds) in parsed.params.items():
        namespace[name] = param(default, bounds=bounds)
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
