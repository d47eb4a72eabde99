"""A one-point program run on a block of points, one vector of the block per scalar.

A kernel that keeps a block of trajectories in registers cannot hold a state of three
floats as an array of shape ``(3, block)`` on every backend (Triton wants each array's
size a power of two, and has no ``y[0]`` or ``jnp.stack`` of three), so the one-point
program (a stepper's step of the model, traced once) is run *element by element*.
A value of shape ``S`` becomes a NumPy object array of shape ``S`` whose elements are:
vectors of shape ``(block,)`` (one number per point: states, swept parameters),
0-d arrays (one number for the whole block: time, step, fixed parameters), or NumPy
scalars (constants). Elementwise primitives are bound on each element; slicing,
stacking, reshaping and padding only rearrange elements; sums and dot products are
unrolled. Each point's arithmetic is the traced program's, operation for operation.
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.extend.core import ClosedJaxpr, Jaxpr, Literal

ELEMENTWISE = frozenset("""
    abs acos acosh add add_any and asin asinh atan atan2 atanh cbrt ceil clamp
    convert_element_type cos cosh div eq erf erf_inv erfc exp exp2 expm1 floor ge gt
    integer_pow is_finite le log log1p logistic lt max min mul ne neg nextafter not or
    pow rem round rsqrt select_n sign sin sinh sqrt square sub tan tanh xor
""".split())
CALLS = ("jaxpr", "call_jaxpr", "fun_jaxpr")  # the parameter holding a call's program
REDUCTIONS = {"reduce_sum": lax.add_p, "reduce_max": lax.max_p, "reduce_min": lax.min_p,
              "reduce_prod": lax.mul_p}


class Unsupported(ValueError):
    """The program uses something the element-by-element evaluation cannot run."""


def elements(shape, fill) -> np.ndarray:
    """An object array of ``shape`` whose element at ``index`` is ``fill(index)``."""
    out = np.empty(shape, dtype=object)
    for index in np.ndindex(*shape):
        out[index] = fill(index)
    return out


def constant(value, dtype=None) -> np.ndarray:
    """A concrete array as an object array of NumPy scalars."""
    array = np.asarray(value, dtype=dtype)
    return elements(array.shape, lambda i: array[i])


class Lanes:
    """Runs jaxprs on blocks of ``width`` points, refusing past ``budget`` operations."""

    def __init__(self, width: int, budget: int = 20_000):
        self.width = width
        self.budget = budget
        self.operations = 0

    def run(self, closed: ClosedJaxpr, *args: np.ndarray) -> list[np.ndarray]:
        """The outputs of ``closed`` for inputs given as object arrays."""
        consts = [constant(c) for c in closed.consts]
        return self._jaxpr(closed.jaxpr, consts, args)

    def _jaxpr(self, jaxpr: Jaxpr, consts, args) -> list[np.ndarray]:
        env = dict(zip(jaxpr.constvars, consts))
        env.update(zip(jaxpr.invars, args))

        def read(var):
            if isinstance(var, Literal):
                return constant(var.val, var.aval.dtype)
            return env[var]

        for eqn in jaxpr.eqns:
            outs = self._equation(eqn, [read(v) for v in eqn.invars])
            env.update(zip(eqn.outvars, outs))
        return [read(v) for v in jaxpr.outvars]

    def _equation(self, eqn, args) -> list[np.ndarray]:
        name = eqn.primitive.name
        if name in ELEMENTWISE:
            primitive = lax.add_p if name == "add_any" else eqn.primitive
            shape = eqn.outvars[0].aval.shape
            return [self._elementwise(primitive, args, shape, eqn.params)]
        if name in REDUCTIONS:
            return [self._reduce(REDUCTIONS[name], args[0], eqn.params["axes"])]
        if name == "dot_general":
            return [self._dot(*args, eqn.params["dimension_numbers"])]
        rule = _REARRANGE.get(name)
        if rule is not None:
            return rule(eqn.params, *args)
        inner = next((eqn.params[k] for k in CALLS if k in eqn.params), None)
        if inner is not None:
            if isinstance(inner, ClosedJaxpr):
                return self.run(inner, *args)
            return self._jaxpr(inner, [], args)
        raise Unsupported(f"its step uses `{name}`, which is not unrolled lane by lane")

    def bind(self, primitive, operands, params):
        """``primitive`` on one element of each operand, scalars widened to the block."""
        self.operations += 1
        if self.operations > self.budget:
            raise Unsupported(f"its step takes more than {self.budget} scalar operations")
        operands = [jnp.asarray(x) for x in operands]
        if any(x.ndim for x in operands):
            operands = [x if x.ndim else lax.broadcast_in_dim(x, (self.width,), ())
                        for x in operands]
        return primitive.bind(*operands, **params)

    def widen(self, x, dtype) -> jax.Array:
        """``x`` as a vector of the block (a scalar repeated) of ``dtype``."""
        x = jnp.asarray(x, dtype)
        return x if x.ndim else lax.broadcast_in_dim(x, (self.width,), ())

    def _elementwise(self, primitive, args, shape, params) -> np.ndarray:
        parts = np.broadcast_arrays(*args)
        return elements(shape, lambda i: self.bind(primitive, [p[i] for p in parts], params))

    def _fold(self, primitive, items):
        total = items[0]
        for item in items[1:]:
            total = self.bind(primitive, [total, item], {})
        return total

    def _reduce(self, primitive, x, axes) -> np.ndarray:
        if any(x.shape[a] == 0 for a in axes):
            raise Unsupported("its step reduces over an empty axis")
        kept = [d for d in range(x.ndim) if d not in axes]
        rows = np.transpose(x, kept + list(axes)).reshape(*[x.shape[d] for d in kept], -1)
        return elements(rows.shape[:-1], lambda i: self._fold(primitive, list(rows[i])))

    def _dot(self, lhs, rhs, dimension_numbers) -> np.ndarray:
        (lc, rc), (lb, rb) = dimension_numbers
        left = _arrange(lhs, lb, lc)
        right = _arrange(rhs, rb, rc)

        def entry(index):
            b, i, j = index
            products = [self.bind(lax.mul_p, [left[b, i, k], right[b, j, k]], {})
                        for k in range(left.shape[2])]
            return self._fold(lax.add_p, products)

        out = elements((left.shape[0], left.shape[1], right.shape[1]), entry)
        shape = ([lhs.shape[d] for d in lb] + _free(lhs, lb, lc) + _free(rhs, rb, rc))
        return out.reshape(shape)


def _free(x, batch, contract) -> list[int]:
    return [x.shape[d] for d in range(x.ndim) if d not in (*batch, *contract)]


def _arrange(x, batch, contract) -> np.ndarray:
    """``x`` as (batch, free, contracted), each axis flattened."""
    free = [d for d in range(x.ndim) if d not in (*batch, *contract)]
    size = int(np.prod([x.shape[d] for d in contract]))
    arranged = np.transpose(x, [*batch, *free, *contract])
    batch_size = int(np.prod([x.shape[d] for d in batch]))
    return arranged.reshape(batch_size, -1, size)


def _slice(params, x):
    strides = params["strides"] or (1,) * x.ndim
    index = tuple(slice(*s) for s in zip(params["start_indices"], params["limit_indices"],
                                         strides))
    return [x[index]]


def _broadcast(params, x, *dynamic):
    if dynamic:
        raise Unsupported("its step broadcasts to a shape known only at run time")
    shape, dims = params["shape"], params["broadcast_dimensions"]
    expanded = x.reshape([x.shape[dims.index(d)] if d in dims else 1
                          for d in range(len(shape))])
    return [np.broadcast_to(expanded, shape)]


def _reshape(params, x, *dynamic):
    if params.get("dimensions") is not None or dynamic:
        raise Unsupported("its step reshapes with a transposition")
    return [x.reshape(params["new_sizes"])]


def _pad(params, x, value):
    config = params["padding_config"]
    shape = tuple(lo + hi + n + max(n - 1, 0) * inner
                  for (lo, hi, inner), n in zip(config, x.shape))
    out = np.empty(shape, dtype=object)
    out.fill(value[()])
    source, target = [], []
    for (lo, _, inner), n, size in zip(config, x.shape, shape):
        at = lo + np.arange(n) * (inner + 1)
        keep = (at >= 0) & (at < size)
        source.append(np.arange(n)[keep])
        target.append(at[keep])
    out[np.ix_(*target)] = x[np.ix_(*source)]
    return [out]


def _take(x, i, axis) -> np.ndarray:
    """Index ``i`` of ``axis``, as an object array (also when it holds one element)."""
    return np.take(x, [i], axis=axis).reshape(tuple(np.delete(x.shape, axis)))


def _iota(params):
    shape, dim = params["shape"], params["dimension"]
    return [elements(shape, lambda i: np.asarray(i[dim], params["dtype"])[()])]


_REARRANGE = {
    "slice": _slice,
    "squeeze": lambda p, x: [x.reshape([n for d, n in enumerate(x.shape)
                                        if d not in p["dimensions"]])],
    "reshape": _reshape,
    "broadcast_in_dim": _broadcast,
    "concatenate": lambda p, *xs: [np.concatenate(xs, axis=p["dimension"])],
    "stack": lambda p, *xs: [np.stack(xs, axis=p["axis"])],
    "unstack": lambda p, x: [_take(x, i, p["axis"]) for i in range(x.shape[p["axis"]])],
    "split": lambda p, x: np.split(x, np.cumsum(p["sizes"])[:-1], axis=p["axis"]),
    "transpose": lambda p, x: [np.transpose(x, p["permutation"])],
    "rev": lambda p, x: [np.flip(x, p["dimensions"])],
    "pad": _pad,
    "iota": _iota,
    "copy": lambda p, x: [x],
    "copy_p": lambda p, x: [x],
}
