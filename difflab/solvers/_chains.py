"""Long chains of one function, run as a loop instead of written out.

diffrax computes, in every adaptive solve, the time 100 floating-point numbers below
``t1`` by calling ``equinox.internal.prevbefore`` 100 times in a Python loop. With ``t1``
traced, XLA receives the 100 calls written out, about 1,700 scalar instructions, and
compiles them in about 0.2 s: a sixth of a first ``simulate``; a derivative traces each
call's rule 100 times too. :func:`folded` finds such chains in a jaxpr (calls of one
function with the same derivative rule, each taking the previous one's result, which
nothing else uses) and runs them in a ``fori_loop`` binding the same call: the same
operations in the same order, so the result is the same to the last bit, and the loop
differentiates by the call's own rule.
"""

import collections

import jax
from jax.extend.core import ClosedJaxpr, Jaxpr, Literal

#: chains shorter than this are left written out
MIN_LENGTH = 16
#: call primitives and the parameter holding the jaxpr they call with their own operands
CALLS = {"pjit": "jaxpr", "jit": "jaxpr", "closed_call": "call_jaxpr",
         "custom_jvp_call": "call_jaxpr", "custom_vjp_call": "call_jaxpr"}


def folded(eqns: list, outvars: list) -> list:
    """``eqns`` with each chain of ``MIN_LENGTH`` or more calls of one function run as a
    loop; ``outvars``: the results of the jaxpr the equations belong to."""
    uses = collections.Counter(v for e in eqns for v in e.invars if not isinstance(v, Literal))
    uses.update(v for v in outvars if not isinstance(v, Literal))
    out, i = [], 0
    while i < len(eqns):
        n = _chain_length(eqns, i, uses)
        looped = _looped(eqns[i], n, eqns[i + n - 1].outvars[0]) if n >= MIN_LENGTH else None
        out.extend(eqns[i:i + n] if looped is None else looped)
        i += n
    return out


def _body(eqn) -> ClosedJaxpr | None:
    """The closed jaxpr a one-in, one-out call without constants calls; else ``None``."""
    body = eqn.params.get(CALLS.get(eqn.primitive.name, ""))
    if not isinstance(body, ClosedJaxpr) or body.consts:
        return None
    if len(eqn.invars) != 1 or len(eqn.outvars) != 1 or isinstance(eqn.invars[0], Literal):
        return None
    return body


def _chain_length(eqns: list, start: int, uses: collections.Counter) -> int:
    """How many calls from ``eqns[start]`` on call one function, each on the last's result."""
    first = _body(eqns[start])
    if first is None:
        return 1
    n = 1
    for prev, eqn in zip(eqns[start:], eqns[start + 1:]):
        body = _body(eqn)
        if (body is None or eqn.primitive is not prev.primitive
                or eqn.invars[0] is not prev.outvars[0] or uses[prev.outvars[0]] != 1
                or not _same(first.jaxpr, body.jaxpr, {})):
            break
        n += 1
    return n


def _same(a: Jaxpr, b: Jaxpr, names: dict) -> bool:
    """Whether jaxprs ``a`` and ``b`` compute the same, equation by equation (``names``:
    ``b``'s variable for each of ``a``'s known so far)."""
    if (len(a.eqns) != len(b.eqns) or len(a.invars) != len(b.invars)
            or a.constvars or b.constvars):
        return False
    names.update(zip(a.invars, b.invars))
    for x, y in zip(a.eqns, b.eqns):
        if (x.primitive is not y.primitive or len(x.outvars) != len(y.outvars)
                or not _same_atoms(x.invars, y.invars, names)
                or x.params.keys() != y.params.keys()
                or not all(_same_param(x.params[k], y.params[k]) for k in x.params)):
            return False
        names.update(zip(x.outvars, y.outvars))
    return _same_atoms(a.outvars, b.outvars, names)


def _same_atoms(xs, ys, names: dict) -> bool:
    return len(xs) == len(ys) and all(
        (isinstance(x, Literal) and isinstance(y, Literal) and _same_param(x.val, y.val)
         and x.aval == y.aval) if isinstance(x, Literal) else names.get(x) is y
        for x, y in zip(xs, ys))


def _same_param(x, y) -> bool:
    if isinstance(x, ClosedJaxpr) and isinstance(y, ClosedJaxpr):
        return not x.consts and not y.consts and _same(x.jaxpr, y.jaxpr, {})
    if isinstance(x, tuple) and isinstance(y, tuple):
        return len(x) == len(y) and all(map(_same_param, x, y))
    try:
        return type(x) is type(y) and bool(x == y)
    except (TypeError, ValueError):  # arrays, and values that do not compare
        return x is y


def _looped(eqn, n: int, result):
    """The equations of ``fori_loop`` applying ``eqn`` ``n`` times to its operand, writing
    ``result``; ``None`` where the loop would need constants. The loop binds ``eqn``
    itself, so it differentiates by ``eqn``'s own rule."""
    operand = eqn.invars[0]
    params = eqn.primitive.get_bind_params(eqn.params)
    step = lambda _, v: eqn.primitive.bind(v, **params)[0]  # noqa: E731
    loop = jax.make_jaxpr(lambda x: jax.lax.fori_loop(0, n, step, x))(
        jax.ShapeDtypeStruct(operand.aval.shape, operand.aval.dtype,
                             weak_type=operand.aval.weak_type))
    if loop.consts or isinstance(loop.jaxpr.outvars[0], Literal):
        return None
    renamed = {loop.jaxpr.invars[0]: operand, loop.jaxpr.outvars[0]: result}
    return [e.replace(invars=[renamed.get(v, v) if not isinstance(v, Literal) else v
                              for v in e.invars],
                      outvars=[renamed.get(v, v) for v in e.outvars])
            for e in loop.jaxpr.eqns]
