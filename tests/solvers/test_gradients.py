"""Exact derivatives through simulate against central finite differences."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difflab as dl
from tests.models_for_tests import Spring

pytestmark = pytest.mark.slow


def _central_difference(f, model, name, eps=1e-6):
    up = f(model.replace(**{name: getattr(model, name) + eps}))
    down = f(model.replace(**{name: getattr(model, name) - eps}))
    return (up - down) / (2 * eps)


@pytest.mark.parametrize("solver", ["rk4", "tsit5", "kvaerno5"])
def test_grad_wrt_parameters_matches_finite_differences(solver):
    def final_x(model):
        return dl.simulate(model, 10.0, dt=1e-2, solver=solver, rtol=1e-10, atol=1e-10).ys[-1, 0]

    grads = jax.grad(final_x)(Spring(k=2.0))
    for name in ("k", "c"):
        fd = _central_difference(final_x, Spring(k=2.0), name)
        np.testing.assert_allclose(getattr(grads, name), fd, rtol=1e-5)


def test_jacfwd_wrt_initial_state_matches_finite_differences():
    def final(y0):
        return dl.simulate(Spring(), 3.0, dt=1e-2, y0=y0).ys[-1]

    y0 = jnp.array([1.0, 0.5])
    jac = jax.jacfwd(final)(y0)
    eps = 1e-6
    fd = jnp.stack([(final(y0 + eps * e) - final(y0 - eps * e)) / (2 * eps) for e in jnp.eye(2)], -1)
    np.testing.assert_allclose(jac, fd, rtol=1e-6)
    np.testing.assert_allclose(jax.jacrev(final)(y0), jac, rtol=1e-12)


def test_grad_under_jit_and_vmap():
    @jax.jit
    @jax.vmap
    def dfinal_dk(k):
        return jax.grad(lambda m: dl.simulate(m, 5.0, dt=1e-2).ys[-1, 0])(Spring(k=k)).k

    ks = jnp.array([0.5, 1.0, 2.0])
    each = jnp.stack([dfinal_dk(k[None])[0] for k in ks])
    np.testing.assert_allclose(dfinal_dk(ks), each, rtol=1e-12)


def test_grad_of_a_model_with_an_mlp():
    class Neural(dl.Model):
        mlp: eqx.nn.MLP
        state_names = ("x", "v")

        def __init__(self, key):
            self.mlp = eqx.nn.MLP(2, 2, 8, 1, key=key)

        def vector_field(self, t, y):
            return jnp.stack([y[1], -y[0]]) + 0.1 * self.mlp(y)

        def initial_state(self):
            return jnp.array([1.0, 0.0])

    model = Neural(jax.random.key(0))
    loss = lambda m: jnp.sum(dl.simulate(m, 2.0, dt=1e-2).ys[-1] ** 2)
    grads = eqx.filter_grad(loss)(model)
    bias = model.mlp.layers[-1].bias
    eps = 1e-6
    shifted = lambda d: eqx.tree_at(lambda m: m.mlp.layers[-1].bias, model, bias + d)
    fd = (loss(shifted(jnp.array([eps, 0.0]))) - loss(shifted(jnp.array([-eps, 0.0])))) / (2 * eps)
    np.testing.assert_allclose(grads.mlp.layers[-1].bias[0], fd, rtol=1e-5)


# -- built-in models, both adjoints, long runs ------------------------------------------

BUILT_IN = [  # (model, solver, t1, dt): runs short enough that the dynamics stay smooth
    ("pendulum", "leapfrog", 5.0, 1e-2),
    ("lorenz", "rk4", 1.0, 1e-3),
    ("lotka_volterra", "rk4", 10.0, 1e-2),
    ("van_der_pol", "tsit5", 5.0, None),
    ("duffing", "heun", 5.0, 1e-3),
    ("sir", "rk4", 50.0, 0.1),
    ("fitzhugh_nagumo", "rk4", 20.0, 1e-2),
]


def _weighted_loss(solver, t1, dt, adjoint):
    def loss(model):
        ys = dl.simulate(model, t1, dt=dt, solver=solver, n_save=21, rtol=1e-10, atol=1e-10,
                         adjoint=adjoint).ys
        return jnp.sum(jnp.sin(ys) * jnp.linspace(0.5, 1.5, ys.shape[0])[:, None])

    return loss


@pytest.mark.parametrize("name, solver, t1, dt", BUILT_IN, ids=[b[0] for b in BUILT_IN])
def test_builtin_model_gradients_match_finite_differences(name, solver, t1, dt):
    model = dl.models.get(name)()
    loss = jax.jit(_weighted_loss(solver, t1, dt, "auto"))
    grads = jax.jit(jax.grad(_weighted_loss(solver, t1, dt, "auto")))(model)
    for p, value in model.parameters().items():
        eps = 1e-6 * max(1.0, abs(float(value)))
        fd = (loss(model.replace(**{p: value + eps})) - loss(model.replace(**{p: value - eps}))) / (2 * eps)
        np.testing.assert_allclose(getattr(grads, p), fd, rtol=2e-5, atol=1e-7, err_msg=p)


@pytest.mark.parametrize("name, solver, t1, dt", BUILT_IN[:1], ids=[b[0] for b in BUILT_IN[:1]])
def test_reverse_adjoint_equals_forward_sensitivities(name, solver, t1, dt):
    # leapfrog: the pullback of a step differentiates the energies' gradients again
    model = dl.models.get(name)()
    forward = jax.grad(_weighted_loss(solver, t1, dt, "forward"))(model)
    reverse = jax.grad(_weighted_loss(solver, t1, dt, "reverse"))(model)
    for p in model.parameters():
        np.testing.assert_allclose(getattr(reverse, p), getattr(forward, p), rtol=1e-9,
                                   atol=1e-12, err_msg=p)


def test_reverse_adjoint_of_an_adaptive_solve_uses_diffrax_checkpointing():
    def loss(adjoint):  # the run of test_grad_wrt_parameters_matches_finite_differences
        return lambda m: dl.simulate(m, 10.0, dt=1e-2, solver="tsit5", rtol=1e-10,
                                     atol=1e-10, adjoint=adjoint).ys[-1, 0]

    forward = jax.grad(loss("auto"))(Spring(k=2.0))
    reverse = jax.grad(loss("reverse"))(Spring(k=2.0))
    np.testing.assert_allclose([reverse.k, reverse.c], [forward.k, forward.c], rtol=1e-8)


def test_reverse_adjoint_differentiates_y0_t0_t1_under_vmap():
    def final(y0, t0, t1, adjoint):
        return jnp.sum(dl.simulate(Spring(k=2.0), t1, t0=t0, y0=y0, dt=0.013, n_save=7,
                                   adjoint=adjoint).ys ** 2)

    y0s = jnp.array([[1.0, 0.5], [0.3, -0.2]])
    grad = jax.vmap(jax.grad(final, argnums=(0, 1, 2)), in_axes=(0, None, None, None))
    fwd = grad(y0s, 0.1, 2.9, "forward")
    rev = grad(y0s, 0.1, 2.9, dl.solvers.CheckpointedAdjoint(block=8, levels=3))
    for a, b in zip(fwd, rev):
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12)


def test_auto_adjoint_uses_reverse_mode_for_large_models_only():
    hybrid = dl.models.get("hybrid_oscillator")(width=8)  # 37 parameters: more than 16
    hybrid = eqx.tree_at(lambda m: m.correction.layers[-1].weight, hybrid,
                         jnp.full((1, 8), 0.1))
    loss = lambda m: jnp.sum(dl.simulate(m, 1.0, dt=1e-2).ys ** 2)
    grads = eqx.filter_grad(loss)(hybrid)  # the checkpointed adjoint
    value = eqx.filter_jit(loss)
    eps = 1e-6
    w = hybrid.correction.layers[0].weight
    for name, shift in [
        ("omega", lambda d: hybrid.replace(omega=hybrid.omega + d)),
        ("weight", lambda d: eqx.tree_at(lambda m: m.correction.layers[0].weight, hybrid,
                                         w.at[3, 1].add(d))),
    ]:
        fd = (value(shift(eps)) - value(shift(-eps))) / (2 * eps)
        exact = grads.omega if name == "omega" else grads.correction.layers[0].weight[3, 1]
        np.testing.assert_allclose(exact, fd, rtol=1e-6, err_msg=name)
    # forward mode through the large model's custom VJP is refused (adjoint="forward"
    # supports it, as for every model: see the jacfwd tests above)
    final_x = lambda w: dl.simulate(hybrid.replace(omega=w), 1.0, dt=1e-2).ys[-1, 0]
    with pytest.raises(TypeError, match="custom_vjp"):
        jax.jacfwd(final_x)(1.0)
    # a small model under "auto" supports forward mode
    assert np.isfinite(jax.jacfwd(lambda k: dl.simulate(Spring(k=k), 3.0).ys[-1, 0])(2.0))


def test_checkpointed_adjoint_refuses_too_long_save_intervals():
    loss = lambda m: dl.simulate(m, 1.0, dt=1e-3, n_save=2,
                                 adjoint=dl.solvers.CheckpointedAdjoint(block=4, levels=2)).ys[-1, 0]
    with pytest.raises(Exception, match="block \\*\\* levels"):
        jax.block_until_ready(jax.grad(loss)(Spring()))
    with pytest.raises(ValueError, match="adjoint must be"):
        dl.simulate(Spring(), 1.0, adjoint="backward")


def _pendulum_gradient(adjoint, n_save):
    def loss(model, dt):
        return jnp.sum(dl.simulate(model, 1000.0, dt=dt, n_save=n_save, adjoint=adjoint).ys ** 2)

    return jax.jit(jax.grad(loss))


@pytest.mark.parametrize("adjoint, n_save", [("forward", 101), ("reverse", 1001)])
def test_a_million_steps_of_the_pendulum_in_constant_memory(adjoint, n_save):
    # the step count is a traced value: one compiled gradient serves 10^3 and 10^6 steps,
    # so its memory (XLA's buffer assignment) cannot depend on the step count
    pendulum = dl.models.get("pendulum")()
    grad = _pendulum_gradient(adjoint, n_save)
    compiled = grad.lower(pendulum, 1.0).compile()
    memory = compiled.memory_analysis()
    assert memory.temp_size_in_bytes < 4 * 2**20  # a few MB, for any number of steps
    g_million = grad(pendulum, 1e-3)
    g_thousand = grad(pendulum, 1.0)
    assert grad._cache_size() == 1
    assert all(np.isfinite(v) for v in jax.tree.leaves(g_million))
    assert not np.allclose(g_million.g, g_thousand.g)  # the runs differ; one program
