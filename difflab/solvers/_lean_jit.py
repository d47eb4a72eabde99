"""A jit for the runs a user calls again and again (a field run of a few milliseconds).

It compiles as ``equinox.filter_jit`` does (array leaves traced, every other leaf static
and part of the key), but a call costs one flatten, one dictionary lookup and
``jax.jit``'s own dispatch: about a tenth of a millisecond less than ``filter_jit``.
"""

import functools

import equinox as eqx
import jax


def lean_jit(fun):
    """``fun(*args)`` compiled once per structure and static leaves of ``args``; its
    array leaves are traced. Keyword arguments are not taken."""
    compiled = {}

    @functools.wraps(fun)
    def call(*args):
        leaves, treedef = jax.tree.flatten(args)
        traced = tuple(map(eqx.is_array, leaves))
        statics = tuple(None if t else leaf for t, leaf in zip(traced, leaves))
        key = (treedef, statics)
        run = compiled.get(key)
        if run is None:
            run = compiled[key] = jax.jit(_rebuilding(fun, treedef, statics))
        return run([leaf for t, leaf in zip(traced, leaves) if t])

    return call


def _rebuilding(fun, treedef, statics):
    """``fun`` taking only the traced leaves, the static ones put back in their places."""
    def run(arrays):
        given = iter(arrays)
        leaves = [next(given) if static is None else static for static in statics]
        return fun(*jax.tree.unflatten(treedef, leaves))

    return run
