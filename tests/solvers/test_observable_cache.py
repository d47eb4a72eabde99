"""Observables given as Python functions are cached by what they compute: a notebook cell
run again (a new ``lambda`` of the same code) reuses the compiled sweep; a changed one
compiles again and gives its own result."""

import jax
import jax.numpy as jnp
import numpy as np

import difflab as dl

# white-box: the keys of observables (one that calls back into Python has its own)
from difflab.solvers._sweeps import computed
from tests.models_for_tests import Decay

RATES = np.linspace(0.5, 2.0, 8)
T1 = 1.0
LOWERING = "/jax/core/compile/jaxpr_to_mlir_module_duration"
COMPILING = "/jax/core/compile/backend_compile_duration"


class Fresh(Decay):  # a class of its own: no other test has compiled its sweeps
    pass


class Compiles:
    """Counts the programs JAX lowers and compiles while it is open."""

    def __enter__(self):
        self.count = 0
        jax.monitoring.register_event_duration_secs_listener(self._heard)
        return self

    def _heard(self, event, duration, **_):
        self.count += event in (LOWERING, COMPILING)

    def __exit__(self, *_):
        jax.monitoring.unregister_event_duration_listener(self._heard)


def cell(source: str, **names):
    """The sweep of a notebook cell: ``source`` compiled afresh, as running a cell does."""
    namespace = {"jnp": jnp, **names}
    exec(compile(f"observable = {source}", "<cell>", "exec"), namespace)
    return dl.sweep(Fresh(), {"rate": RATES}, T1, dt=1e-2,
                    observables={"obs": namespace["observable"]})


def decayed(rates=RATES):
    return np.exp(-rates * T1)  # u(t1) of u' = -rate u, u(0) = 1


def test_a_cell_run_again_with_the_same_lambda_compiles_nothing():
    first = cell("lambda traj: 2.0 * traj['u'][-1]")
    with Compiles() as compiles:
        again = cell("lambda traj: 2.0 * traj['u'][-1]")
    assert first.stats["compile_time"] > 0
    assert compiles.count == 0 and again.stats["compile_time"] == 0
    np.testing.assert_allclose(again.observables["obs"], 2.0 * decayed(), rtol=1e-7)


def test_a_changed_constant_compiles_again_and_gives_the_new_result():
    cell("lambda traj: 4.0 * traj['u'][-1]")
    changed = cell("lambda traj: 5.0 * traj['u'][-1]")
    assert changed.stats["compile_time"] > 0
    np.testing.assert_allclose(changed.observables["obs"], 5.0 * decayed(), rtol=1e-7)


def test_closed_over_arrays_are_part_of_the_key():
    source = "lambda traj: traj['u'][-1] * weights"
    first = cell(source, weights=jnp.array([1.0, 10.0]))
    with Compiles() as compiles:
        same = cell(source, weights=jnp.array([1.0, 10.0]))
    other = cell(source, weights=jnp.array([3.0, 7.0]))
    assert compiles.count == 0 and other.stats["compile_time"] > 0
    np.testing.assert_allclose(first.observables["obs"], same.observables["obs"])
    np.testing.assert_allclose(other.observables["obs"], np.outer(decayed(), [3.0, 7.0]),
                               rtol=1e-7)  # a vector per point: two values


def test_the_key_does_not_hold_the_models_values():
    """An observable of the point's model reuses the program for other model values."""
    source = "lambda traj: traj.model.rate * traj['u'][-1]"
    cell(source)
    with Compiles() as compiles:
        again = dl.sweep(Fresh(rate=9.0), {"rate": RATES}, T1, dt=1e-2,
                         observables={"obs": eval(source, {"jnp": jnp})})
    assert compiles.count == 0
    np.testing.assert_allclose(again.observables["obs"], RATES * decayed(), rtol=1e-7)


def _called_back(factor):
    def read(u):
        return np.asarray(factor * u)

    return lambda traj: jax.pure_callback(read, jax.ShapeDtypeStruct((), traj.ys.dtype),
                                          traj["u"][-1], vmap_method="sequential")


STRUCTS = (jax.ShapeDtypeStruct((3,), float), jax.ShapeDtypeStruct((3, 1), float))


def trace(fn, ts, ys):
    return fn(dl.Trajectory(ts, ys, jnp.int32(0), jnp.int64(0), ("u",)))


def test_an_observable_calling_python_keeps_its_own_key():
    """A callback is printed by name only, so equal jaxprs may call different code."""
    one, shape = computed.keyed(_called_back(2.0), trace, STRUCTS)
    two, _ = computed.keyed(_called_back(3.0), trace, STRUCTS)
    assert not isinstance(one, computed.Computed) and one != two and shape.shape == ()


def test_equal_computations_are_equal_keys_and_others_are_not():
    keys = [computed.keyed(fn, trace, STRUCTS)[0] for fn in (
        lambda t: jnp.max(t["u"]), lambda t: jnp.max(t["u"]), lambda t: jnp.min(t["u"]),
        lambda t: jnp.max(t["u"]) + 1e-12, lambda t: jnp.max(t["u"]) + 2e-12,
        lambda t: jax.debug.print("{}", 1.0) or jnp.max(t["u"]),  # printing is computing
        lambda t: jax.debug.print("{}", 2.0) or jnp.max(t["u"]))]
    assert keys[0] == keys[1] and hash(keys[0]) == hash(keys[1])
    assert len({keys[0], *keys[2:]}) == 6
