"""``lean_jit``: compiled as ``equinox.filter_jit`` compiles (array leaves traced, the other
leaves static), counted by how often the function is traced."""

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from difflab.solvers._lean_jit import lean_jit


class _Scaled(eqx.Module):
    factor: jnp.ndarray
    power: int
    name: str = eqx.field(static=True)


def test_arrays_are_traced_and_every_other_leaf_is_static():
    traces = []

    @lean_jit
    def apply(module, x, times):
        traces.append(module.power)
        return module.factor * x ** module.power * times

    x = jnp.arange(3.0)
    first = apply(_Scaled(jnp.asarray(2.0), 2, "a"), x, 1)
    again = apply(_Scaled(jnp.asarray(3.0), 2, "a"), np.ones(3), 1)  # new arrays: no trace
    assert len(traces) == 1
    np.testing.assert_allclose(first, [0.0, 2.0, 8.0])
    np.testing.assert_allclose(again, [3.0, 3.0, 3.0])
    cubed = apply(_Scaled(jnp.asarray(1.0), 3, "a"), x, 2)  # a new int: traced anew
    apply(_Scaled(jnp.asarray(1.0), 3, "b"), x, 2)  # a new static field: traced anew
    assert traces == [2, 3, 3]
    np.testing.assert_allclose(cubed, [0.0, 2.0, 16.0])


def test_only_the_most_recently_used_programs_are_kept(monkeypatch):
    from difflab.solvers import _lean_jit

    monkeypatch.setattr(_lean_jit, "KEPT", 2)
    traces = []

    @lean_jit
    def power(x, n):
        traces.append(n)
        return x ** n

    for n in (1, 2, 2, 3, 1):  # 1 was let go of when 3 came
        power(jnp.asarray(2.0), n)
    assert traces == [1, 2, 3, 1]
