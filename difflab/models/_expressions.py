"""The expression allow-list of typed equations, over Python's :mod:`ast`.

An expression is parsed with :func:`ast.parse` and every node is checked: numbers,
declared names, arithmetic, comparisons, ``and``/``or``/``not`` and calls of the fixed
:data:`FUNCTIONS`, which map to :mod:`jax.numpy`. Anything else is refused with the
column where it starts. A checked tree becomes a tree of closures over ``jax.numpy``
(:func:`compile_expression`); Python never evaluates the text.
"""

import ast
import dataclasses
import difflib
import math
import operator

import jax
import jax.numpy as jnp

MAX_NESTING = 30
MAX_NODES = 2_000
MAX_EXPONENT = 1_000.0


def _erf(x):
    from jax.scipy.special import erf  # imported on use: it is slow to import

    return erf(x)


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
    "sigmoid": (jax.nn.sigmoid, 1), "erf": (_erf, 1),
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


class Fail(Exception):
    """An error at a 1-based ``column`` of the line being read."""

    def __init__(self, column, message, end_column=None):
        self.column, self.message, self.end_column = column, message, end_column


def parse_expression(text: str, start: int):
    """The ast of ``text`` (found at 0-based ``start`` in its line), checked for size first."""
    if not text.strip():
        raise Fail(start + 1, "expected an expression")
    depth = 0
    for i, ch in enumerate(text):  # before ast.parse, which may recurse deeply
        depth += (ch in "([{") - (ch in ")]}")
        if depth > MAX_NESTING:
            raise Fail(start + i + 1, f"expression nested too deeply (more than {MAX_NESTING} "
                                      "levels of brackets)")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as error:
        column = start + len(text) - len(text.lstrip()) + max(error.offset or 1, 1)
        raise Fail(column, f"syntax error: {error.msg}") from None
    except (RecursionError, MemoryError, ValueError):
        raise Fail(start + 1, f"expression too complex (a sum has at most {MAX_NODES} "
                              "terms)") from None
    return Located(tree.body, text.strip(), start + len(text) - len(text.lstrip()))


@dataclasses.dataclass
class Located:
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
        if not hasattr(node, "col_offset"):  # an operator or a Load: no position of its own
            node = self.node
        return Fail(self.column(node), message, self.end_column(node))


_CHAINS = {ast.Add: "sum", ast.Sub: "sum", ast.Mult: "product", ast.Div: "product",
           ast.Mod: "product", ast.Pow: "power"}
_PLAIN = (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)


def walk_checked(loc: Located):
    """Every node of ``loc``, refusing over-deep trees and over-long chains (iteratively).

    A chain ``a + b - c ...`` nests on its left in the tree but not for the reader: its
    left operands do not count as deeper, and it may hold up to :data:`MAX_NODES` terms
    (the text's length bounds the rest).
    """
    stack = [(loc.node, 1, 1, None)]
    while stack:
        node, depth, terms, chain = stack.pop()
        if isinstance(node, _PLAIN):  # no position, nothing below: the parent's check covers it
            yield node
            continue
        if depth > MAX_NESTING:
            raise loc.fail(node, f"expression nested too deeply (more than {MAX_NESTING} levels)")
        if terms > MAX_NODES:
            raise loc.fail(loc.node, f"expression too long (more than {MAX_NODES} terms)")
        yield node
        if isinstance(node, ast.BinOp):  # a chain goes on, or (a product in a sum) begins
            kind = _CHAINS.get(type(node.op))
            terms = terms if kind is not None and kind == chain else 1
            stack.extend([(node.left, depth, terms + 1, kind), (node.op, depth + 1, 1, None),
                          (node.right, depth + 1, 1, None)])
            continue
        children = ast.iter_child_nodes(node)
        if isinstance(node, ast.Call):  # the function's name is checked by _check_call
            children = (*node.args, *(k.value for k in node.keywords))
        stack.extend((child, depth + 1, 1, None) for child in children)


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


def constant(node):
    """The value of a numbers-only expression as a Python float, else None.

    A result that is no real number (``1/0``, ``(-8)**0.5``) is NaN, one too large
    for a float is ``inf``.
    """
    chain = []  # a chain a + b - c nests on its left: walk it without recursing
    while isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        chain.append(node)
        node = node.left
    value = _leaf_constant(node)
    for binop in reversed(chain):
        right = None if value is None else constant(binop.right)
        if right is None:
            return None
        value = _python_binary(binop.op, value, right)
    return value


def _leaf_constant(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        try:
            return float(node.value)
        except OverflowError:
            return math.inf
    if isinstance(node, ast.Name) and node.id in CONSTANTS:
        return CONSTANTS[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = constant(node.operand)
        return None if value is None else (-value if isinstance(node.op, ast.USub) else value)
    return None


def _python_binary(op, left: float, right: float) -> float:
    try:
        return float(_PYTHON_BINARY[type(op)](left, right))
    except OverflowError:
        return math.inf
    except (ZeroDivisionError, ValueError, TypeError):
        return math.nan


_PYTHON_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
                  ast.Div: operator.truediv, ast.Pow: math.pow, ast.Mod: operator.mod}


def check_node(loc, node, known, operators=None):
    """Refuse ``node`` unless the allow-list admits it; ``known`` maps usable names to
    None, or to the message explaining why that name cannot be used here. ``operators``
    (field models) maps each operator's name, such as ``laplace``, to the names of the
    fields it may act on."""
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
            exponent = constant(node.right)
            if exponent is not None and not abs(exponent) <= MAX_EXPONENT:
                raise loc.fail(node.right, f"exponent too large (at most {MAX_EXPONENT:g})")
        _check_constant(loc, node)
    elif isinstance(node, ast.UnaryOp):
        if not isinstance(node.op, ast.USub | ast.UAdd | ast.Not):
            raise loc.fail(node, f"operator {_op_text(node.op)} is not allowed")
    elif isinstance(node, ast.Compare):
        bad = [op for op in node.ops if type(op) not in _COMPARE]
        if bad:
            raise loc.fail(node, f"comparison {_op_text(bad[0])} is not allowed")
    elif isinstance(node, ast.Call):
        _check_call(loc, node, operators or {})
    elif not isinstance(node, ast.BoolOp | ast.operator | ast.unaryop | ast.cmpop
                        | ast.boolop | ast.expr_context):
        raise loc.fail(node, f"{type(node).__name__} is not allowed in an equation")


def _check_constant(loc, node):
    """Refuse a numbers-only ``node`` whose value is no finite real number (``1/0``)."""
    left, right = constant(node.left), constant(node.right)
    if left is None or right is None or not (math.isfinite(left) and math.isfinite(right)):
        return  # not constant, or an operand already refused (it is checked on its own)
    value = _python_binary(node.op, left, right)
    if math.isinf(value):
        raise loc.fail(node, "this constant is too large for a float")
    if math.isnan(value):
        by_zero = (isinstance(node.op, ast.Div | ast.Mod) and right == 0
                   or isinstance(node.op, ast.Pow) and left == 0 and right < 0)
        raise loc.fail(node, "division by zero" if by_zero
                       else "this constant is not a real number")


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
        usable = sorted(k for k, why in known.items() if why is None)
        hint = f"; did you mean {' or '.join(close)}?" if close else \
            f"; the names here are {', '.join(usable)}" if usable else ""
        raise loc.fail(node, f"unknown name {name!r}{hint}")
    if known[name] is not None:
        raise loc.fail(node, known[name])


def _unknown_function(name: str, operators) -> str:
    """Why ``name`` cannot be called: the axis a derivative names is not the grid's, or a
    close match (a typo), and what can be called."""
    derivatives = [op for op in operators if op.startswith("d_d")]
    if name.startswith("d_d") and derivatives:
        return (f"unknown function {name!r}: the grid has no axis {name[3:]!r}; its "
                f"derivatives are {', '.join(derivatives)}")
    close = difflib.get_close_matches(name, [*FUNCTIONS, *operators], n=2)
    hint = f" (did you mean {' or '.join(close)}?)" if close else ""
    also = f" and the operators {', '.join(operators)}" if operators else ""
    return (f"unknown function {name!r}{hint}; the functions are "
            f"{', '.join(sorted(FUNCTIONS))}{also}")


def _check_call(loc, node, operators):
    func = node.func
    if not isinstance(func, ast.Name):
        raise loc.fail(func, _FORBIDDEN.get(type(func), "only the math functions can be called"))
    if func.id.startswith("_"):
        raise loc.fail(func, f"names starting with '_' are not allowed ({func.id!r})")
    if func.id not in FUNCTIONS and func.id not in operators:
        raise loc.fail(func, _unknown_function(func.id, operators))
    if node.keywords:
        raise loc.fail(node.keywords[0].value, "keyword arguments are not allowed")
    if func.id in operators:
        _check_operator(loc, node, operators[func.id])
        return
    arity = FUNCTIONS[func.id][1]
    if len(node.args) != arity:
        raise loc.fail(node, f"{func.id} takes {arity} argument{'s' * (arity > 1)}, "
                             f"got {len(node.args)}")


def _check_operator(loc, node, fields):
    """An operator takes one argument, which depends on a field (``laplace(u)``)."""
    name = node.func.id
    if len(node.args) != 1:
        raise loc.fail(node, f"{name} takes 1 argument, got {len(node.args)}")
    argument = node.args[0]
    if not any(isinstance(n, ast.Name) and n.id in fields for n in ast.walk(argument)):
        text = ast.get_source_segment(loc.text, argument) or "it"
        raise loc.fail(argument, f"{name} acts on a field ({', '.join(fields)}), "
                                 f"not on {text}")


def compile_expression(node):
    """A function ``env -> value`` computing ``node`` with jax.numpy (node already checked).

    Numbers-only parts are computed here, once; a chain ``a + b - c ...`` becomes one
    loop (it nests on its left, as deep as it is long).
    """
    value = constant(node)
    if value is not None:
        return lambda env: value
    if isinstance(node, ast.Name):
        name = node.id
        return lambda env: env[name]
    if isinstance(node, ast.BinOp):
        chain = []
        while isinstance(node, ast.BinOp):
            chain.append((_operation(node), compile_expression(node.right)))
            node = node.left
        first, chain = compile_expression(node), chain[::-1]
        return lambda env: _fold(first(env), chain, env)
    if isinstance(node, ast.UnaryOp):
        operand = compile_expression(node.operand)
        op = {ast.USub: operator.neg, ast.UAdd: operator.pos,
              ast.Not: jnp.logical_not}[type(node.op)]
        return lambda env: op(operand(env))
    if isinstance(node, ast.Compare):
        terms = [compile_expression(n) for n in (node.left, *node.comparators)]
        ops = [_COMPARE[type(op)] for op in node.ops]
        return lambda env: _chain(env, terms, ops)
    if isinstance(node, ast.BoolOp):
        values = [compile_expression(n) for n in node.values]
        op = jnp.logical_and if isinstance(node.op, ast.And) else jnp.logical_or
        return lambda env: _reduce(op, [v(env) for v in values])
    args = [compile_expression(n) for n in node.args]
    if node.func.id not in FUNCTIONS:  # an operator of a field model: env holds it
        name = node.func.id
        return lambda env: env[name](*(a(env) for a in args))
    func = FUNCTIONS[node.func.id][0]
    return lambda env: func(*(a(env) for a in args))


def _operation(node: ast.BinOp):
    """The function of a binary node; ``x ** n`` with a whole number ``n`` multiplies
    (``lax.integer_pow``), so its derivatives at ``x = 0`` are exact, not NaN."""
    exponent = constant(node.right) if isinstance(node.op, ast.Pow) else None
    if exponent is not None and float(exponent).is_integer() and abs(exponent) <= 64:
        return lambda base, _: jax.lax.integer_pow(jnp.asarray(base), int(exponent))
    return _BINARY[type(node.op)]


def _fold(value, chain, env):
    for op, right in chain:
        value = op(value, right(env))
    return value


def _chain(env, terms, ops):
    values = [term(env) for term in terms]
    return _reduce(jnp.logical_and, [op(a, b) for op, a, b in zip(ops, values, values[1:])])


def _reduce(op, values):
    out = values[0]
    for value in values[1:]:
        out = op(out, value)
    return out
