"""Branch switching at period doublings: a normal form whose doubled orbits are known in
closed form, and Rossler's Feigenbaum cascade through three doublings, checked against
published values and monodromy matrices from independent scipy integrations."""

import jax.numpy as jnp
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import difflab as dl


class MobiusDoubling(dl.Model):
    """The unit circle ``z = e^{i theta}`` (``theta' = 1``) carries a plane ``zeta`` whose
    components along ``e^{i theta / 2}`` (``a``) and across it (``b``) obey
    ``a' = s a - |zeta|^2 a``, ``b' = -c b - |zeta|^2 b``. Once round the circle
    ``e^{i theta / 2}`` turns into its negative: the cycle ``zeta = 0`` (period ``2 pi``)
    has multipliers ``-e^{2 pi s}`` and ``-e^{-2 pi c}`` and doubles at ``s = 0``, into
    the orbit ``a = sqrt(s)``, ``b = 0`` of period ``4 pi``, with multipliers
    ``e^{-8 pi s}`` and ``e^{-4 pi (c + s)}``. The projection on ``e^{i theta / 2}`` is
    ``(zeta + z conj(zeta)) / 2``: polynomial, though ``theta / 2`` is not."""

    s: float = dl.param(-0.5, bounds=(-5.0, 5.0))
    c: float = 1.0
    state_names = ("x", "y", "u", "v")

    def vector_field(self, t, y):
        x, w, u, v = y
        r2, q2 = x**2 + w**2, u**2 + v**2
        pu, pv = (u + x * u + w * v) / 2, (v + w * u - x * v) / 2
        return jnp.stack([x * (1 - r2) - w, w * (1 - r2) + x,
                          -v / 2 + self.s * pu - self.c * (u - pu) - q2 * u,
                          u / 2 + self.s * pv - self.c * (v - pv) - q2 * v])

    def initial_state(self):
        return jnp.array([1.0, 0.0, 0.0, 0.0])


@pytest.fixture(scope="module")
def doubling():
    model = MobiusDoubling()
    cycles = dl.periodic_orbits(model, "s", ([1.0, 0.0, 0.0, 0.0], 2 * np.pi), -0.5, 0.5)
    return model, cycles


def test_the_doubling_is_found_where_a_multiplier_is_minus_one(doubling):
    _, cycles = doubling
    (point,) = cycles.special
    assert point.kind == "period-doubling" and point.value == pytest.approx(0.0, abs=1e-8)
    assert point.period == pytest.approx(2 * np.pi, rel=1e-8)
    mu = np.sort(point.multipliers.real)
    np.testing.assert_allclose(mu[[0, 1]], [-1.0, -np.exp(-2 * np.pi)], atol=1e-8)


def test_the_doubled_branch_is_the_closed_form_one(doubling):
    model, cycles = doubling
    doubled = dl.periodic_orbits(model, "s", cycles.special[0], -0.5, 0.5)
    s = doubled.values
    assert doubled.status == "left the range at 0.5" and not doubled.special
    assert s[0] == pytest.approx(0.0, abs=1e-8) and s.min() > -1e-8 and s[-1] == 0.5
    np.testing.assert_allclose(doubled.periods, 4 * np.pi, rtol=1e-8)
    on_circle = np.hypot(doubled.states[:, 0], doubled.states[:, 1])
    np.testing.assert_allclose(on_circle, 1.0, atol=1e-9)
    np.testing.assert_allclose(np.sum(doubled.states[:, 2:] ** 2, axis=1), s, rtol=1e-6,
                               atol=1e-8)  # |zeta|^2 = s
    for extreme, sign in ((doubled.maxima, 1), (doubled.minima, -1)):  # u, v reach sqrt(s)
        np.testing.assert_allclose(extreme[1:, 2:], sign * np.sqrt(s[1:, None]) * [1, 1],
                                   rtol=1e-3)
    mu = doubled.multipliers[1:]
    np.testing.assert_allclose(mu[:, 0], 1.0, atol=1e-8)
    np.testing.assert_allclose(mu[:, 1], np.exp(-8 * np.pi * s[1:]), rtol=1e-5, atol=1e-12)
    np.testing.assert_allclose(mu[:, 2], np.exp(-4 * np.pi * (1 + s[1:])), rtol=1e-5)
    assert doubled.stable.all()


def test_neither_a_fold_nor_a_torus_starts_a_branch():
    fold = dl.solvers.CycleSpecialPoint(kind="fold-of-cycles", value=0.1, period=1.0,
                                state=np.zeros(4), minimum=np.zeros(4), maximum=np.zeros(4),
                                multipliers=np.ones(4, complex))
    torus = dl.solvers.CycleSpecialPoint(kind="neimark-sacker", value=0.1, period=1.0,
                                 state=np.zeros(4), minimum=np.zeros(4), maximum=np.zeros(4),
                                 multipliers=np.ones(4, complex))
    for point, message in ((fold, "not at a fold-of-cycles point"),
                           (torus, "torus is born.*out of reach")):
        with pytest.raises(ValueError, match=message) as error:
            dl.periodic_orbits(MobiusDoubling(), "s", point, -0.5, 0.5)
        assert "\n" not in str(error.value)


class Rossler(dl.Model):
    """Rossler (1976): ``x' = -y - z``, ``y' = x + a y``, ``z' = b + z (x - c)``."""

    a: float = dl.param(0.2)
    b: float = dl.param(0.2)
    c: float = dl.param(2.7, bounds=(0.0, 10.0))
    state_names = ("x", "y", "z")

    def vector_field(self, t, y):
        x, v, z = y
        return jnp.stack([-v - z, x + self.a * v, self.b + z * (x - self.c)])

    def initial_state(self):
        return jnp.array([0.2, -1.0, 1.0])


def _scipy_multipliers(c, state, period):
    """The monodromy matrix's eigenvalues, from the variational equations integrated
    by scipy's DOP853."""
    def rhs(t, y):
        (x, v, z), m = y[:3], y[3:].reshape(3, 3)
        jac = np.array([[0.0, -1.0, -1.0], [1.0, 0.2, 0.0], [z, 0.0, x - c]])
        return np.concatenate([[-v - z, x + 0.2 * v, 0.2 + z * (x - c)], (jac @ m).ravel()])

    y0 = np.concatenate([state, np.eye(3).ravel()])
    end = solve_ivp(rhs, (0, period), y0, method="DOP853", rtol=1e-12, atol=1e-12).y[:, -1]
    return np.linalg.eigvals(end[3:].reshape(3, 3))


@pytest.mark.slow
def test_rossler_feigenbaum_cascade():
    model = Rossler()
    state = np.asarray(dl.simulate(model, 200.0, solver="tsit5", n_save=2).ys[-1])
    cycles = dl.periodic_orbits(model, "c", (state, 5.9), 2.7, 2.9, rtol=1e-8)
    doublings = [p for p in cycles.special if p.kind == "period-doubling"]
    for lo, hi in ((2.8, 3.86), (3.83, 4.135), (4.12, 4.195)):  # periods 2, 4 and 8
        branch = dl.periodic_orbits(model, "c", doublings[-1], lo, hi, rtol=1e-8)
        assert branch.periods[0] == pytest.approx(2 * doublings[-1].period, rel=1e-6)
        assert branch.stable[1:-1][branch.values[1:-1] < branch.special[0].value].all()
        doublings.append(branch.special[0])
    c = np.array([p.value for p in doublings])
    assert [p.kind for p in doublings] == ["period-doubling"] * 4
    # published (a = b = 0.2): c = 2.832, 3.837, 4.123, 4.186
    np.testing.assert_allclose(c, [2.832, 3.837, 4.123, 4.186], atol=2e-3)
    ratios = (c[1:-1] - c[:-2]) / (c[2:] - c[1:-1])
    assert abs(ratios[1] - 4.669) < abs(ratios[0] - 4.669) < 1.5  # towards Feigenbaum's
    for point in doublings:
        mu = _scipy_multipliers(point.value, np.asarray(point.state), point.period)
        assert np.min(np.abs(mu + 1.0)) < 1e-4
