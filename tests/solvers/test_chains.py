"""diffrax's 100 calls of ``prevbefore`` on ``t1`` reach XLA as one loop, same to the bit.

diffrax computes the time 100 floating-point numbers below ``t1`` by calling
``equinox.internal.prevbefore`` 100 times; with ``t1`` traced XLA received them written
out (about 1,700 scalar instructions, 0.2 s of a first solve's compilation). The
reference here is that chain written out, evaluated call by call.
"""

import equinox.internal as eqxi
import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import jaxpr_as_fun

import difflab as dl
from difflab.solvers._host_checks import strip_closed

VALUES = [2.0, 1.0, 0.0, -0.0, -3.5, 1e-310, 5e-324, -5e-324, 1e308, np.inf, -np.inf, np.nan]


def _hundred_before(x):
    for _ in range(100):
        x = eqxi.prevbefore(x)
    return x


def _folded(f, x):
    closed = strip_closed(jax.make_jaxpr(f)(jnp.float64(x)))
    return closed, lambda v: jaxpr_as_fun(closed)(v)[0]


def _calls(closed) -> int:
    return sum(e.primitive.name == "custom_jvp_call" for e in closed.jaxpr.eqns)


def test_an_adaptive_run_with_a_traced_end_compiles_one_ulp_step():
    model = dl.models.get("lorenz")()
    lowered = jax.jit(lambda t1: dl.simulate(model, t1, solver="tsit5").ys).trace(3.0).lower()
    assert lowered.as_text().count("next_after") == 1  # was 100


def test_the_folded_chain_gives_the_written_out_chain_to_the_bit():
    closed, folded = _folded(_hundred_before, 1.0)
    assert _calls(closed) == 0 and len(closed.jaxpr.eqns) < 5
    for value in VALUES:
        x = jnp.float64(value)
        expected = x
        for _ in range(100):
            expected = eqxi.prevbefore(expected)  # call by call, outside any trace
        assert np.asarray(folded(x)).tobytes() == np.asarray(expected).tobytes(), value


def test_the_folded_chain_differentiates_by_the_calls_own_rule():
    _, folded = _folded(lambda x: 2.0 * _hundred_before(x), 1.0)
    primal, tangent = jax.jvp(folded, (3.0,), (1.5,))
    assert tangent == 3.0  # prevbefore passes its tangent on
    assert float(jax.grad(folded)(3.0)) == 2.0


def test_a_chain_is_cut_where_a_link_is_used_elsewhere_and_kept_where_links_differ():
    def kept(x):
        steps = [x]
        for _ in range(40):
            steps.append(eqxi.prevbefore(steps[-1]))
        return steps[-1] - steps[20]

    def alternating(x):
        for i in range(40):
            x = eqxi.prevbefore(x) if i % 2 else eqxi.nextafter(x)
        return x

    for f, calls in ((kept, 0), (alternating, 40)):  # kept: two loops of 20
        closed, folded = _folded(f, 1.0)
        assert _calls(closed) == calls
        assert float(folded(1.0)) == float(f(jnp.float64(1.0)))
