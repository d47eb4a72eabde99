"""``throw=True`` under ``jax.jit`` and ``jax.vmap``: an error that says why the run failed
and, for a batch, which member failed first.

Inside a transformation the result code is only known when the program runs, so the check
is an ``equinox.branched_error_if`` whose index encodes the first failed member (counted
over the whole batch, through a ``custom_vmap`` rule) and its result code.
"""

import dataclasses
import functools
import math
from collections.abc import Sequence

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ._result import Result, message

_CODES = len(Result)


@dataclasses.dataclass(frozen=True)
class FailureMessages(Sequence):
    """The error text for each index ``member * len(Result) + code`` (``member``: the
    flat position in a batch of ``shape``; ``()`` for a single run)."""

    model: str
    shape: tuple[int, ...]

    def __len__(self) -> int:
        return _CODES * math.prod(self.shape)

    def __getitem__(self, index: int) -> str:
        member, code = divmod(int(index), _CODES)
        text = f"{self.model}: {message(code)}"
        if not self.shape:
            return text
        where = tuple(int(i) for i in np.unravel_index(member, self.shape))
        axes = "" if len(where) == 1 else " (an index per vmapped axis, outermost first)"
        where = where[0] if len(where) == 1 else where
        return (f"{text}; batch member {where}{axes} is the first that failed (simulate "
                "with throw=False to keep the batch and read each member's result)")


def error_if_failed(name: str, ys, result):
    """``ys``, with an error at run time naming the reason when ``result`` is a failure."""
    return _check(ys, result, name)


@functools.partial(jax.custom_jvp, nondiff_argnums=(2,))
def _check(ys, result, name):
    return _batch_aware(name)(ys, result)


@_check.defjvp
def _check_jvp(name, primals, tangents):
    ys, result = primals
    return _check(ys, result, name), tangents[0]


def _batch_aware(name: str):
    """The check, which under ``vmap`` sees the whole batch of result codes at once."""

    @jax.custom_batching.custom_vmap
    def check(ys, result):
        return _error_if(ys, result, name)

    @check.def_vmap
    def _rule(axis_size, in_batched, ys, result):
        ys, result = (x if batched else jnp.broadcast_to(x, (axis_size, *x.shape))
                      for x, batched in zip((ys, result), in_batched))
        return check(ys, result), True

    return check


def _error_if(ys, result, name: str):
    failed = result != Result.SUCCESS
    first = jnp.argmax(failed.reshape(-1))
    index = first * _CODES + result.reshape(-1)[first]
    return eqx.branched_error_if(ys, jnp.any(failed), index,
                                 FailureMessages(name, tuple(result.shape)))
