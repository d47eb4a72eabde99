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
    with pytest.raises(ValueError, match="locate takes a fold, Hopf or branch point.*'object'"):
        dl.locate(Brusselator(), object(), "b")
    torus = dl.solvers.CycleSpecialPoint(
        kind="neimark-sacker", value=2.0, period=6.0, state=np.ones(2), minimum=np.zeros(2),
        maximum=np.ones(2), multipliers=np.ones(2))
    with pytest.raises(ValueError, match="not 'neimark-sacker'"):
        dl.locate(Brusselator(), torus, "b")
    flip = dl.solvers.CodimTwoPoint(kind="fold-flip", values=np.zeros(2), state=np.zeros(2))
    with pytest.raises(ValueError, match="fold-flip point has no period"):
        dl.locate(Brusselator(), flip, ("a", "b"))
    with pytest.raises(ValueError, match="no parameter 'c'"):
        dl.locate(Brusselator(), hopf, "c")


class ShiftedCusp(dl.Model):
    """``x' = r + (a - c^2) x - x^3``: the fold curve ``27 r^2 = 4 (a - c^2)^3`` has its
    cusp at ``r = 0``, ``a = c^2``, ``x = 0``."""

    r: float = dl.param(0.0, bounds=(-5.0, 5.0))
    a: float = dl.param(1.25, bounds=(-5.0, 5.0))
    c: float = dl.param(0.5, bounds=(-5.0, 5.0))
    state_names = ("x",)

    def vector_field(self, t, y):
        return self.r + (self.a - self.c**2) * y - y**3

    def initial_state(self):
        return jnp.array([-1.3])


def test_grad_through_a_cusp_of_a_fold_curve_is_the_closed_form():
    branch = dl.continuation(ShiftedCusp(), "r", -1.0, 1.0)
    fold = [s for s in branch.special if s.kind == "fold"][0]
    curve = dl.continuation(ShiftedCusp(), ("r", "a"), -1.0, 2.0, from_point=fold)
    (cusp,) = curve.special

    def located(c):
        point = dl.locate(ShiftedCusp(c=c), cusp, ("r", "a"))
        return jnp.concatenate([point.values, point.state])

    slopes, values = jax.jit(jax.jacfwd(lambda c: (located(c),) * 2, has_aux=True))(0.6)
    np.testing.assert_allclose(values, [0, 0.36, 0], atol=1e-10)
    np.testing.assert_allclose(slopes, [0, 1.2, 0], atol=1e-9)  # d(c^2)/dc = 2c
    with pytest.raises(ValueError, match=r"located in two parameters \(p, q\), got 'r'"):
        dl.locate(ShiftedCusp(), cusp, "r")


class ShiftedBogdanovTakens(dl.Model):
    """``x' = y``, ``y' = b1 + (b2 - c) x + x^2 + x y``: the folds
    ``b1 = (b2 - c)^2 / 4`` have a double zero eigenvalue, a Bogdanov-Takens point, at
    ``b1 = 0``, ``b2 = c``, ``(x, y) = (0, 0)``."""

    b1: float = dl.param(0.25, bounds=(-5.0, 5.0))
    b2: float = dl.param(-0.5, bounds=(-5.0, 5.0))
    c: float = dl.param(0.5, bounds=(-5.0, 5.0))
    state_names = ("x", "y")

    def vector_field(self, t, u):
        x, y = u
        return jnp.stack([y, self.b1 + (self.b2 - self.c) * x + x**2 + x * y])

    def initial_state(self):
        return jnp.array([0.5, 0.0])


def test_grad_through_a_bogdanov_takens_point_is_the_closed_form():
    branch = dl.continuation(ShiftedBogdanovTakens(), "b1", -1.0, 1.0)
    fold = [s for s in branch.special if s.kind == "fold"][0]
    curve = dl.continuation(ShiftedBogdanovTakens(), ("b1", "b2"), -2.0, 2.0, from_point=fold)
    bt = [s for s in curve.special if s.kind == "bogdanov-takens"][0]

    def located(c):
        point = dl.locate(ShiftedBogdanovTakens(c=c), bt, ("b1", "b2"))
        return jnp.concatenate([point.values, point.state])

    slopes, values = jax.jit(jax.jacfwd(lambda c: (located(c),) * 2, has_aux=True))(0.6)
    np.testing.assert_allclose(values, [0, 0.6, 0, 0], atol=1e-10)
    np.testing.assert_allclose(slopes, [0, 1, 0, 0], atol=1e-9)  # b2 = c


class ShiftedBautin(dl.Model):
    """``z' = (b1 + i w) z + (b2 - c) z |z|^2 - z |z|^4``: Hopf points on ``b1 = 0`` with
    first Lyapunov coefficient of the sign of ``b2 - c``, a Bautin point at ``b1 = 0``,
    ``b2 = c``."""

    b1: float = dl.param(-1.0, bounds=(-5.0, 5.0))
    b2: float = dl.param(-1.0, bounds=(-5.0, 5.0))
    c: float = dl.param(0.5, bounds=(-5.0, 5.0))
    w: float = dl.param(1.0, bounds=(0.1, 5.0))
    state_names = ("x", "y")

    def vector_field(self, t, u):
        x, y = u
        r2 = x**2 + y**2
        g = self.b1 + (self.b2 - self.c) * r2 - r2**2
        return jnp.stack([g * x - self.w * y, self.w * x + g * y])

    def initial_state(self):
        return jnp.array([0.0, 0.0])


@pytest.mark.exhaustive  # compiles for half a minute: run with -m exhaustive
def test_grad_through_a_bautin_point_is_the_closed_form():
    hopf = [s for s in dl.continuation(ShiftedBautin(), "b1", -1.0, 1.0).special
            if s.kind == "hopf"][0]
    curve = dl.continuation(ShiftedBautin(), ("b1", "b2"), -1.0, 1.0, from_point=hopf)
    bautin = [s for s in curve.special if s.kind == "bautin"][0]

    def located(cw):
        point = dl.locate(ShiftedBautin(c=cw[0], w=cw[1]), bautin, ("b1", "b2"))
        return point.values

    slopes, values = jax.jit(jax.jacfwd(lambda cw: (located(cw),) * 2, has_aux=True))(
        jnp.array([0.6, 1.3]))
    np.testing.assert_allclose(values, [0, 0.6], atol=1e-10)
    np.testing.assert_allclose(slopes, [[0, 0], [1, 0]], atol=1e-9)  # b2 = c, whatever w
