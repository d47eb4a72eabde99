"""Branch points, folds of cycles, period doublings and branch points of cycles located
again as differentiable functions of the model: jax.grad, jacfwd and vmap through
dl.locate against closed forms and finite differences."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difflab as dl
from tests.models_for_tests import BautinCycles as Bautin
from tests.models_for_tests import MobiusDoubling

MESH = {"segments": 8, "steps": 200}


class Transcritical(dl.Model):
    """``x' = x (p - a^2 - x)``, ``y' = x - y``: the branches ``x = 0`` and
    ``x = p - a^2`` cross at the branch point ``p = a^2``, ``(x, y) = (0, 0)``."""

    p: float = dl.param(-1.0, bounds=(-5.0, 5.0))
    a: float = dl.param(0.5, bounds=(-5.0, 5.0))
    state_names = ("x", "y")

    def vector_field(self, t, y):
        x, v = y
        return jnp.stack([x * (self.p - self.a**2 - x), x - v])

    def initial_state(self):
        return jnp.array([0.0, 0.0])


class SymmetricPitchfork(dl.Model):
    """The unit circle turning at ``w + a^2`` carries ``a`` with
    ``a' = a (s - c^2 + a^2 - a^4 + 1 - r^2)``: the cycle ``a = 0`` (period ``2 pi / w``)
    has a pitchfork of cycles, a branch point, at ``s = c^2``."""

    s: float = dl.param(-0.1, bounds=(-5.0, 5.0))
    c: float = dl.param(0.5, bounds=(-5.0, 5.0))
    w: float = dl.param(1.0, bounds=(0.1, 5.0))
    state_names = ("x", "y", "a")

    def vector_field(self, t, y):
        x, v, a = y
        r2, turn = x**2 + v**2, self.w + a**2
        return jnp.stack([x * (1 - r2) - v * turn, v * (1 - r2) + x * turn,
                          a * (self.s - self.c**2 + a**2 - a**4 + 1 - r2)])

    def initial_state(self):
        return jnp.array([1.0, 0.0, 0.0])


def _with_slopes(located):
    """``x -> (d located / dx, located(x))``, compiled once for both."""
    return jax.jit(jax.jacfwd(lambda x: (located(x),) * 2, has_aux=True))


def _only(result, kind):
    (point,) = [s for s in result.special if s.kind == kind]
    return point


def test_a_branch_point_moves_as_the_closed_form_does():
    bp = _only(dl.continuation(Transcritical(), "p", -1.0, 1.0), "branch")

    def located(a):
        point = dl.locate(Transcritical(a=a), bp, "p")
        return jnp.concatenate([point.value[None], point.state])

    np.testing.assert_allclose(jax.jit(located)(0.5), [0.25, 0, 0], atol=1e-12)
    a = jnp.array([0.3, 0.7])  # d(a^2)/da = 2a; the state stays at the origin
    slopes = jax.jit(jax.vmap(jax.jacfwd(located)))(a)
    np.testing.assert_allclose(slopes, [[0.6, 0, 0], [1.4, 0, 0]], rtol=1e-9, atol=1e-12)
    assert float(jax.grad(lambda a: located(a)[0])(0.4)) == pytest.approx(0.8, rel=1e-9)


@pytest.fixture(scope="module")
def fold_of_cycles():
    cycles = dl.periodic_orbits(Bautin(), "b1", ([0.0, np.sqrt(0.5)], 2 * np.pi), -0.5, 0.5,
                                max_points=12, direction=-1, **MESH)
    return _only(cycles, "fold-of-cycles")


@pytest.mark.slow
def test_a_fold_of_cycles_moves_as_the_closed_form_does(fold_of_cycles):
    def located(b2):
        point = dl.locate(Bautin(b2=b2), fold_of_cycles, "b1", **MESH)
        return jnp.stack([point.value, point.period, jnp.linalg.norm(point.state)])

    both = _with_slopes(located)
    b2 = 1.05  # b1 = -b2^2 / 4, T = 2 pi, the radius sqrt(b2 / 2)
    slopes, values = both(b2)
    np.testing.assert_allclose(values, [-b2**2 / 4, 2 * np.pi, np.sqrt(b2 / 2)], rtol=1e-7)
    np.testing.assert_allclose(slopes, [-b2 / 2, 0, 0.25 / np.sqrt(b2 / 2)], rtol=1e-6,
                               atol=1e-7)
    h = 1e-5
    differences = (both(b2 + h)[1] - both(b2 - h)[1]) / (2 * h)
    np.testing.assert_allclose(slopes, differences, rtol=1e-5, atol=1e-6)


@pytest.mark.slow
def test_a_period_doubling_moves_as_the_closed_form_does():
    cycles = dl.periodic_orbits(MobiusDoubling(s=-0.1, k=0.5), "s",
                                ([1.0, 0.0, 0.0, 0.0], 1.6 * np.pi),
                                -0.2, 0.5, **MESH)
    doubling = _only(cycles, "period-doubling")
    assert float(doubling.value) == pytest.approx(0.25, abs=1e-6)

    def located(k):
        point = dl.locate(MobiusDoubling(s=-0.1, k=k), doubling, "s", **MESH)
        return jnp.stack([point.value, point.period])

    k = 0.55  # s = k^2, T = 2 pi / (1 + k^2)
    slopes, values = _with_slopes(located)(k)
    np.testing.assert_allclose(values, [k**2, 2 * np.pi / (1 + k**2)], rtol=1e-7)
    np.testing.assert_allclose(slopes, [2 * k, -4 * np.pi * k / (1 + k**2) ** 2], rtol=1e-6)


@pytest.mark.slow
def test_a_branch_point_of_cycles_moves_as_the_closed_form_does():
    cycles = dl.periodic_orbits(SymmetricPitchfork(), "s", ([1.0, 0.0, 0.0], 2 * np.pi),
                                -0.2, 0.5, **MESH)
    bpc = _only(cycles, "branch-point-of-cycles")

    def located(cw):
        point = dl.locate(SymmetricPitchfork(c=cw[0], w=cw[1]), bpc, "s", **MESH)
        return jnp.stack([point.value, point.period])

    slopes, values = _with_slopes(located)(jnp.array([0.55, 1.1]))  # s = c^2, T = 2 pi / w
    np.testing.assert_allclose(values, [0.3025, 2 * np.pi / 1.1], rtol=1e-7)
    np.testing.assert_allclose(slopes, [[1.1, 0], [0, -2 * np.pi / 1.21]], rtol=1e-6,
                               atol=1e-8)
