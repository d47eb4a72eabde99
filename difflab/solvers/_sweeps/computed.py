"""Python observables keyed by what they compute, so that a sweep run again with an equal
function reuses its compiled program (a notebook cell run again defines a new ``lambda``).

The key is a digest of the observable's jaxpr on a point's trajectory, every input
abstract: its equations and their parameters, the literals in them, and the values of
the arrays it closes over. Equal digests mean equal computations, so a changed constant
gives a new key (and a new program). An observable whose jaxpr refers to a Python object
by its name alone (a ``pure_callback``, ``jax.debug.print``) keeps being keyed by itself.
"""

import hashlib

import jax
import numpy as np
from jax.extend.core import ClosedJaxpr, Jaxpr, Literal

from .spec import SpecObservable


class Computed:
    """An observable equal to any other whose computation has the same ``digest``."""

    def __init__(self, fn, digest: bytes):
        self.fn, self.digest = fn, digest

    def __call__(self, traj):
        return self.fn(traj)

    def __eq__(self, other):
        return isinstance(other, Computed) and other.digest == self.digest

    def __hash__(self):
        return hash(self.digest)

    def __repr__(self):
        return f"Computed({self.fn!r}, {self.digest.hex()[:12]})"


def keyed(fn, trace, structs):
    """``fn`` keyed by what it computes, and the shape and dtype of its result.

    ``trace(fn, *structs)`` applies ``fn`` to the trajectory made of ``structs`` (shapes
    and dtypes). An observable made from a spec is returned as it is (its spec is its key).
    """
    closed, shape = jax.make_jaxpr(lambda *a: trace(fn, *a), return_shape=True)(*structs)
    if isinstance(fn, SpecObservable):
        return fn, shape
    digest = _digest(closed, jax.tree.structure(shape))
    return (fn if digest is None else Computed(fn, digest)), shape


def _digest(closed: ClosedJaxpr, out_tree) -> bytes | None:
    """A digest of everything ``closed`` computes (``None`` where its text names a Python
    object by its address, which printing hides)."""
    text = str(closed.jaxpr)
    if " at 0x" in text:
        return None
    h = hashlib.sha256(text.encode())
    h.update(repr(out_tree).encode())
    try:
        for value in _values(closed):
            array = np.asarray(value)
            h.update(f"{array.dtype}{array.shape}".encode())
            h.update(np.ascontiguousarray(array).tobytes())
    except (TypeError, ValueError):  # a value NumPy cannot hold (a PRNG key, an object)
        return None
    return h.digest()


def _values(closed: ClosedJaxpr):
    """The constants of ``closed`` and of the jaxprs inside it, and every literal."""
    yield from closed.consts
    yield from _literals(closed.jaxpr)


def _literals(jaxpr: Jaxpr):
    for eqn in jaxpr.eqns:
        yield from (v.val for v in eqn.invars if isinstance(v, Literal))
        for param in eqn.params.values():
            yield from _inner(param)
    yield from (v.val for v in jaxpr.outvars if isinstance(v, Literal))


def _inner(param):
    """The values inside an equation's parameter (a sub-jaxpr, or a tuple of them)."""
    if isinstance(param, ClosedJaxpr):
        yield from _values(param)
    elif isinstance(param, Jaxpr):
        yield from _literals(param)
    elif isinstance(param, (tuple, list)):
        for item in param:
            yield from _inner(item)
