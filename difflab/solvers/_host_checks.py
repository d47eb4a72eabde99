"""Checks that call back to the host, kept out of programs that must lower for any backend.

diffrax checks some arguments inside the compiled program with ``equinox.error_if``: a
``lax.cond`` whose error branch raises through a host callback. A host callback lowers
only for the backend that traces it, so such a program cannot be lowered for a GPU or a
TPU from a CPU (``jax.jit(f).trace(...).lower(lowering_platforms=("cuda",))``,
``jax.export``). :func:`without_host_checks` traces a function to a jaxpr and drops those
checks from it, for that call only: each ``cond`` one of whose branches calls the host
while the other passes its operands on becomes the pass-through (what ``EQX_ON_ERROR=off``
does for the whole process), and a call (``jit``, ``custom_jvp``) that is left passing
its operands on is dropped too, so no differentiation rule brings the check back.
DiffLab reports its own failures as result codes (``_result.py``).

The same pass makes the jaxpr smaller, since its derivatives, their batching and the
lowering each take time in proportion: it runs diffrax's long chains of one call as loops
(``_chains.py``), drops copies (equinox's loops make over a hundred) and equations whose
results nothing uses, and inlines calls of straight-line code (``jnp.where`` and the
like). A solve's jaxpr shrinks by a third and its derivative's by half, with the same
operations in the same order: the results are the same to the bit.
"""

import collections
import functools
import threading

import equinox as eqx
import jax
import jax.numpy as jnp
from jax.extend.core import (
    ClosedJaxpr,
    DropVar,
    Jaxpr,
    Literal,
    Var,
    jaxpr_as_fun,
    subjaxprs,
)

from ._chains import CALLS, folded

#: primitives that run Python on the host
CALLBACKS = frozenset({"pure_callback", "io_callback", "debug_callback"})


def without_host_checks(fn, *, reverse: bool = False):
    """``fn`` (any pytrees in and out) with the host-callback checks of its jaxpr dropped,
    and of its derivatives': ``jax.jvp`` of the result (``reverse=False``), or
    ``jax.vjp`` (``reverse=True``, for a ``fn`` that differentiates only in reverse mode,
    such as a solve under diffrax's ``RecursiveCheckpointAdjoint``; the backward pass
    then solves forward again).

    Every array ``fn`` depends on must be an argument: arrays it closes over would be
    constants to its derivatives.
    """

    @functools.wraps(fn)
    def checked_on_device(*args, **kwargs):
        closed, out_struct, out_static = _traced(fn, args, kwargs)
        flat = jax.tree.leaves(eqx.filter((args, kwargs), eqx.is_array))
        out = _dropping_checks(closed, reverse)(*flat)
        return eqx.combine(jax.tree.unflatten(jax.tree.structure(out_struct), out),
                           out_static)

    return checked_on_device


_TRACES: collections.OrderedDict = collections.OrderedDict()
_TRACES_KEPT = 64
_TRACES_LOCK = threading.Lock()


def _traced(fn, args, kwargs):
    """``eqx.filter_make_jaxpr(fn)(*args, **kwargs)`` with its jaxpr stripped, traced once
    per ``fn``, static arguments and array shapes: differentiating a solve traces it
    again for the derivative rule, and tracing diffrax costs a quarter of a second."""
    dynamic, static = eqx.partition((args, kwargs), eqx.is_array)
    key = (fn, jax.tree.structure(static), tuple((type(x), x) for x in jax.tree.leaves(static)),
           jax.tree.structure(dynamic), tuple(map(jax.typeof, jax.tree.leaves(dynamic))))
    try:
        with _TRACES_LOCK:
            _TRACES.move_to_end(key)
            return _TRACES[key]
    except KeyError:
        pass
    except TypeError:  # an unhashable static argument: trace every time
        return _stripped_trace(fn, args, kwargs)
    traced = _stripped_trace(fn, args, kwargs)
    with _TRACES_LOCK:
        _TRACES[key] = traced
        while len(_TRACES) > _TRACES_KEPT:
            _TRACES.popitem(last=False)
    return traced


def _stripped_trace(fn, args, kwargs):
    closed, *structure = eqx.filter_make_jaxpr(fn)(*args, **kwargs)
    return strip_closed(closed), *structure


def error_if_on_cpu(x, pred, msg: str):
    """``eqx.error_if(x, pred, msg)`` in a program for the CPU; in one for another backend,
    ``x`` with its floating-point leaves NaN where ``pred`` holds (no host callback)."""
    def nan_where(x, pred):
        return jax.tree.map(lambda v: jnp.where(pred, jnp.nan, v)
                            if jnp.issubdtype(v.dtype, jnp.inexact) else v, x)

    return jax.lax.platform_dependent(x, pred, cpu=lambda x, pred: eqx.error_if(x, pred, msg),
                                      default=nan_where)


def _stripped(f, *flat) -> ClosedJaxpr:
    """The jaxpr of ``f`` (arrays in, a list of arrays out) at ``flat``, stripped."""
    return strip_closed(jax.make_jaxpr(f)(*flat))


def _dropping_checks(closed: ClosedJaxpr, reverse: bool):
    """``closed`` (stripped) as a function, with a derivative rule that strips the checks
    of the derivative."""
    f = jaxpr_as_fun(closed)
    call = (jax.custom_vjp if reverse else jax.custom_jvp)(f)
    if reverse:
        call.defvjp(lambda *flat: (call(*flat), flat), _stripped_vjp(f))
    else:
        call.defjvp(_stripped_jvp(f))
    return call


def _stripped_jvp(f):
    def jvp(primals, tangents):
        n = len(primals)
        both = _dropping_checks(_stripped(lambda *pt: [*sum(jax.jvp(f, pt[:n], pt[n:]), [])],
                                          *primals, *tangents), False)(*primals, *tangents)
        return both[:len(both) // 2], both[len(both) // 2:]

    return jvp


def _stripped_vjp(f):
    def vjp(flat, cts):
        n = len(flat)
        backward = _stripped(lambda *pc: list(jax.vjp(f, *pc[:n])[1](list(pc[n:]))),
                             *flat, *cts)
        return tuple(jaxpr_as_fun(backward)(*flat, *cts))

    return vjp


def calls_host(jaxpr) -> bool:
    """Whether ``jaxpr`` (open or closed) shows a host callback anywhere inside."""
    jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
    return any(eqn.primitive.name in CALLBACKS
               or any(calls_host(sub) for sub in _subjaxprs(eqn.params))
               for eqn in jaxpr.eqns)


def strip_closed(closed: ClosedJaxpr) -> ClosedJaxpr:
    """``closed`` without its host-callback checks (itself if it has none)."""
    jaxpr = strip(closed.jaxpr)
    return closed if jaxpr is closed.jaxpr else ClosedJaxpr(jaxpr, closed.consts)


def strip(jaxpr: Jaxpr) -> Jaxpr:
    """``jaxpr`` without its host-callback checks, copies and dead equations, and with
    its long chains of one function run as loops (``_chains.py``); itself if it has none
    of these."""
    renamed = {}
    eqns = []
    for eqn in jaxpr.eqns:
        invars = [_renamed(v, renamed) for v in eqn.invars]
        passed = _passed_on(eqn, invars)
        if passed is not None:
            renamed.update(zip(eqn.outvars, passed))
            continue
        inlined = _inlined(eqn, invars, renamed)
        eqns.extend([_with_stripped_params(eqn, invars)] if inlined is None else inlined)
    outvars = [_renamed(v, renamed) for v in jaxpr.outvars]
    eqns = folded(_live(eqns, outvars), outvars)
    if len(eqns) == len(jaxpr.eqns) and all(a is b for a, b in zip(eqns, jaxpr.eqns)):
        return jaxpr
    return jaxpr.replace(eqns=eqns, outvars=outvars)


def _inlined(eqn, invars, renamed: dict) -> list | None:
    """The stripped equations of a plain ``jit`` call of straight-line code, in fresh
    variables, with its results recorded in ``renamed``; ``None`` for any other equation.
    A nested call costs every transformation and the lowering a step; XLA inlines it."""
    if eqn.primitive.name != "jit" or not _plain(eqn.params):
        return None
    body = eqn.params["jaxpr"]
    if body.consts or next(subjaxprs(body.jaxpr), None) is not None:
        return None  # a loop moved into its caller may compile to other roundings
    body = strip_closed(body)
    env = dict(zip(body.jaxpr.invars, invars))
    eqns = []
    for inner in body.jaxpr.eqns:
        outvars = [v if isinstance(v, DropVar) else env.setdefault(v, Var(v.aval))
                   for v in inner.outvars]
        eqns.append(inner.replace(invars=[_renamed(v, env) for v in inner.invars],
                                  outvars=outvars))
    renamed.update(zip(eqn.outvars, (_renamed(v, env) for v in body.jaxpr.outvars)))
    return eqns


def _plain(params: dict) -> bool:
    """Whether a ``jit`` call only groups equations: no shardings, layouts, donations or
    compiler options of its own."""
    def get(key):  # a key a later JAX drops reads as empty
        return tuple(params.get(key, ()))

    return (all(type(s).__name__ == "UnspecifiedValue"
                for s in get("in_shardings") + get("out_shardings"))
            and all(x is None for x in get("in_layouts") + get("out_layouts"))
            and not any(get("donated_invars")) and not get("compiler_options_kvs"))


def _live(eqns: list, outvars: list) -> list:
    """``eqns`` without those whose results nothing uses (and that have no effects)."""
    used = {v for v in outvars if not isinstance(v, Literal)}
    kept = []
    for eqn in reversed(eqns):
        if eqn.effects or any(v in used for v in eqn.outvars):
            kept.append(eqn)
            used.update(v for v in eqn.invars if not isinstance(v, Literal))
    return kept[::-1]


def _passed_on(eqn, invars):
    """The operands a check passes on as its results, or ``None`` if ``eqn`` is no check."""
    name = eqn.primitive.name
    if name == "copy":  # arrays are values: a copy is its operand
        return invars
    if name == "cond" and len(eqn.params["branches"]) == 2:
        kept = [b for b in eqn.params["branches"] if not calls_host(b)]
        if len(kept) == 1:
            return _forwarded(kept[0], invars[1:])
    elif name in CALLS and CALLS[name] in eqn.params:
        body = eqn.params[CALLS[name]]
        stripped = _stripped_param(body)
        if stripped is not body:
            return _forwarded(stripped, invars)
    return None


def _with_stripped_params(eqn, invars):
    params = {k: _stripped_param(v) for k, v in _quiet(eqn.primitive.name, eqn.params).items()}
    if all(params[k] is v for k, v in eqn.params.items()) and invars == eqn.invars:
        return eqn
    return eqn.replace(invars=invars, params=params)


def _quiet(name: str, params: dict) -> dict:
    """``params`` of lineax's ``linear_solve`` (alone or batched by equinox's ``vprim``)
    with ``throw=True`` turned off: its rule would raise through the host when lowered
    (``optimistix`` solves so in the implicit derivative of a root find)."""
    if name == "vprim":
        inner = dict(params["params"])
        quiet = _quiet(params["prim"].name, inner)
        return params if quiet is inner else {**params, "params": tuple(quiet.items())}
    if name == "linear_solve" and params["static"][-1] is True:  # its last argument
        return {**params, "static": (*params["static"][:-1], False)}
    return params


def _forwarded(body, operands):
    """What ``body`` returns when it only passes ``operands`` on; ``None`` otherwise."""
    jaxpr = getattr(body, "jaxpr", body)
    if jaxpr.eqns:
        return None
    position = {v: i for i, v in enumerate(jaxpr.invars)}
    if not all(isinstance(v, Literal) or v in position for v in jaxpr.outvars):
        return None
    return [v if isinstance(v, Literal) else operands[position[v]] for v in jaxpr.outvars]


def _renamed(var, renamed: dict):
    return var if isinstance(var, Literal) else renamed.get(var, var)


def _stripped_param(value):
    if isinstance(value, ClosedJaxpr):
        return strip_closed(value)
    if isinstance(value, Jaxpr):
        return strip(value)
    if isinstance(value, tuple) and any(isinstance(v, (ClosedJaxpr, Jaxpr)) for v in value):
        stripped = tuple(_stripped_param(v) for v in value)
        return value if all(a is b for a, b in zip(stripped, value)) else stripped
    return value


def _subjaxprs(params: dict):
    for value in params.values():
        values = value if isinstance(value, tuple) else (value,)
        yield from (v for v in values if isinstance(v, (ClosedJaxpr, Jaxpr)))
