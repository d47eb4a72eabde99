"""Exact derivatives through simulate against central finite differences."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difflab as dl


class Spring(dl.Model):
    k: float = 1.0
    c: float = 0.1
    state_names = ("x", "v")

    def vector_field(self, t, y):
        x, v = y
        return jnp.stack([v, -self.k * x - self.c * v])

    def initial_state(self):
        return jnp.array([1.0, 0.0])


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
