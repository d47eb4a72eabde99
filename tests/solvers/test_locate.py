"""Fold and Hopf points located again as differentiable functions of the model: jax.grad,
jacfwd and vmap through dl.locate against closed forms and finite differences."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difflab as dl


class Brusselator(dl.Model):
    """``x' = a - (b + 1) x + x^2 y``, ``y' = b x - x^2 y``: the equilibrium ``(a, b / a)``
    loses stability at the Hopf point ``b = 1 + a^2`` with frequency ``a``."""

    a: float = dl.param(1.0, bounds=(0.1, 5.0))
    b: float = dl.param(1.5, bounds=(0.0, 10.0))
    state_names = ("x", "y")

    def vector_field(self, t, y):
        x, v = y
        return jnp.stack([self.a - (self.b + 1) * x + x**2 * v, self.b * x - x**2 * v])

    def initial_state(self):
        return jnp.array([1.0, 1.5])


class Cusp(dl.Model):
    """``x' = r + a x - x^3``: folds at ``x = +-sqrt(a / 3)``, ``r = -+2 (a / 3)^(3/2)``."""

    r: float = dl.param(-1.0, bounds=(-5.0, 5.0))
    a: float = dl.param(1.0, bounds=(0.0, 5.0))
    state_names = ("x",)

    def vector_field(self, t, y):
        return jnp.stack([self.r + self.a * y[0] - y[0] ** 3])

    def initial_state(self):
        return jnp.array([-1.3])


@pytest.fixture(scope="module")
def hopf():
    branch = dl.continuation(Brusselator(), "b", 1.5, 3.0)
    (point,) = [s for s in branch.special if s.kind == "hopf"]
    return point


def test_grad_through_a_hopf_point_is_the_closed_form(hopf):
    def b_hopf(a):
        return dl.locate(Brusselator(a=a), hopf, "b").value

    located = jax.jit(lambda a: dl.locate(Brusselator(a=a), hopf, "b"))(1.0)
    assert float(located.value) == pytest.approx(2.0, abs=1e-12)
    assert float(located.frequency) == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(located.state, [1.0, 2.0], atol=1e-12)
    slope, value = jax.jit(jax.grad(b_hopf)), jax.jit(b_hopf)
    for a in (0.8, 1.0, 1.3):  # b_H = 1 + a^2, db_H/da = 2a
        assert float(slope(a)) == pytest.approx(2 * a, rel=1e-9)
    h = 1e-6
    assert float(slope(1.1)) == pytest.approx(
        (float(value(1.1 + h)) - float(value(1.1 - h))) / (2 * h), rel=1e-6)
    values = jax.vmap(b_hopf)(jnp.array([0.9, 1.0, 1.1]))
    np.testing.assert_allclose(values, 1 + np.array([0.9, 1.0, 1.1]) ** 2, rtol=1e-10)
    # the state (a, b_H / a) = (a, 1/a + a): d/da = (1, 1 - 1/a^2); the frequency is a

    def state_and_frequency(a):
        point = dl.locate(Brusselator(a=a), hopf, "b")
        return jnp.concatenate([point.state, point.frequency[None]])

    np.testing.assert_allclose(jax.jacfwd(state_and_frequency)(2.0), [1.0, 0.75, 1.0],
                               rtol=1e-9)


def test_grad_through_a_fold_is_the_closed_form():
    branch = dl.continuation(Cusp(), "r", -1.0, 1.0)
    fold = [s for s in branch.special if s.kind == "fold"][0]

    def r_fold(a):
        return dl.locate(Cusp(a=a), fold, "r").value

    x = float(np.asarray(fold.state)[0])
    sign = np.sign(x)  # r = -2 sign (a/3)^(3/2), dr/da = -sign (a/3)^(1/2)
    assert float(r_fold(1.0)) == pytest.approx(-2 * sign * (1 / 3) ** 1.5, abs=1e-12)
    assert float(jax.grad(r_fold)(1.5)) == pytest.approx(-sign * 0.5 ** 0.5, rel=1e-9)


def test_analysis_under_a_transformation_points_to_locate():
    calls = [lambda a: dl.equilibria(Brusselator(a=a)).states.sum(),
             lambda a: dl.continuation(Brusselator(a=a), "b", 1.5, 3.0).values.sum(),
             lambda a: dl.lyapunov(Brusselator(a=a), 1.0).exponents.sum(),
             lambda a: dl.periodic_orbits(Brusselator(a=a), "b", ([1.0, 2.0], 6.0), 1.0,
                                          3.0).periods.sum()]
    for call in calls:
        with pytest.raises(TypeError, match=r"cannot be traced.*dl\.locate") as error:
            jax.grad(call)(1.0)
        assert "\n" not in str(error.value)


def test_locate_refuses_other_points(hopf):
    with pytest.raises(ValueError, match="fold or Hopf"):
        dl.locate(Brusselator(), object(), "b")
    with pytest.raises(ValueError, match="no parameter 'c'"):
        dl.locate(Brusselator(), hopf, "c")
