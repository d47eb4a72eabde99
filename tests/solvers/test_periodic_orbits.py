"""Periodic orbits from Hopf points: normal forms with known cycles, van der Pol's period,
the Bautin fold of cycles, a Neimark-Sacker point and Rossler's first period doubling,
checked against analytic values, published values and independent integrations."""

import json

import jax.numpy as jnp
import numpy as np
import pytest

import difflab as dl
from difflab.solvers._analysis import shooting  # white-box: counts compilations


class HopfNormalForm(dl.Model):
    """``z' = (mu + i w) z - z |z|^2``: stable cycles of radius ``sqrt(mu)`` and period
    ``2 pi / w`` for ``mu > 0``, nontrivial multiplier ``exp(-2 mu T)``."""

    mu: float = dl.param(-0.5, bounds=(-5.0, 5.0))
    w: float = dl.param(2.0, bounds=(0.1, 5.0))
    state_names = ("x", "y")

    def vector_field(self, t, y):
        x, v = y
        r2 = x**2 + v**2
        return jnp.stack([self.mu * x - self.w * v - x * r2, self.w * x + self.mu * v - v * r2])

    def initial_state(self):
        return jnp.array([0.0, 0.0])


class Bautin(dl.Model):
    """``r' = r (mu + r^2 - r^4)``, ``theta' = 1``: a subcritical Hopf point at ``mu = 0``
    whose cycles turn at a fold of cycles at ``mu = -1/4``, ``r^2 = 1/2``."""

    mu: float = dl.param(0.5, bounds=(-5.0, 5.0))
    state_names = ("x", "y")

    def vector_field(self, t, y):
        x, v = y
        r2 = x**2 + v**2
        g = self.mu + r2 - r2**2
        return jnp.stack([g * x - v, x + g * v])

    def initial_state(self):
        return jnp.array([0.0, 0.0])


class Rossler(dl.Model):
    """Rossler (1976): ``x' = -y - z``, ``y' = x + a y``, ``z' = b + z (x - c)``."""

    a: float = dl.param(0.2)
    b: float = dl.param(0.2)
    c: float = dl.param(1.0, bounds=(0.0, 10.0))
    state_names = ("x", "y", "z")

    def vector_field(self, t, y):
        x, v, z = y
        return jnp.stack([-v - z, x + self.a * v, self.b + z * (x - self.c)])

    def initial_state(self):
        return jnp.array([0.2, -1.0, 1.0])


class TorusNormalForm(dl.Model):
    """The Hopf normal form in ``(x, y)`` (``w = 1``) and a transverse rotation in ``(u, v)``
    at rate ``nu`` growing at ``s - r^2``: on the cycle ``r = sqrt(mu)`` the multipliers
    ``exp((s - mu) T +- i nu T)`` leave the unit circle at ``mu = s`` (Neimark-Sacker)."""

    mu: float = dl.param(-0.5, bounds=(-5.0, 5.0))
    s: float = 0.5
    nu: float = 0.7
    state_names = ("x", "y", "u", "v")

    def vector_field(self, t, y):
        x, v, p, q = y
        r2 = x**2 + v**2
        g = self.s - r2
        return jnp.stack([self.mu * x - v - x * r2, x + self.mu * v - v * r2,
                          g * p - self.nu * q, self.nu * p + g * q])

    def initial_state(self):
        return jnp.zeros(4)


def _hopf(branch):
    (hopf,) = [s for s in branch.special if s.kind == "hopf"]
    return hopf


def test_supercritical_hopf_cycles_match_the_normal_form():
    hopf = _hopf(dl.continuation(HopfNormalForm(), "mu", -0.5, 1.0))
    orbits = dl.periodic_orbits(HopfNormalForm(), "mu", hopf, -0.5, 1.0)
    mu, period = orbits.values[1:], orbits.periods[1:]
    assert orbits.values[0] == hopf.value and orbits.status == "left the range at 1"
    assert mu.min() > 0 and mu[-1] == 1.0 and orbits.stable.all() and not orbits.special
    np.testing.assert_allclose(np.linalg.norm(orbits.states[1:], axis=1), np.sqrt(mu), rtol=1e-6)
    np.testing.assert_allclose(orbits.maxima[1:], np.sqrt(mu)[:, None] * [1, 1], rtol=1e-6)
    np.testing.assert_allclose(orbits.minima[1:], -np.sqrt(mu)[:, None] * [1, 1], rtol=1e-6)
    np.testing.assert_allclose(orbits.periods, np.pi, rtol=1e-6)
    np.testing.assert_allclose(orbits.multipliers[1:, 0], 1.0, atol=1e-8)  # the trivial one
    np.testing.assert_allclose(orbits.multipliers[1:, 1], np.exp(-2 * mu * period), rtol=1e-6)
    ts, ys = orbits.orbit(-1)
    assert ts[-1] == pytest.approx(np.pi, rel=1e-6)
    np.testing.assert_allclose(np.linalg.norm(ys, axis=1), 1.0, rtol=1e-6)


def test_changing_the_model_does_not_recompile():
    model = HopfNormalForm(w=1.5)
    hopf = _hopf(dl.continuation(model, "mu", -0.5, 0.5))
    dl.periodic_orbits(model, "mu", hopf, -0.5, 0.5, max_points=4)
    compiled = shooting.correct._cached._cache_size()
    model = HopfNormalForm(w=3.0)
    hopf = _hopf(dl.continuation(model, "mu", -0.5, 0.5))
    orbits = dl.periodic_orbits(model, "mu", hopf, -0.5, 0.5, max_points=4)
    assert shooting.correct._cached._cache_size() == compiled
    np.testing.assert_allclose(orbits.periods, 2 * np.pi / 3.0, rtol=1e-6)


def test_bautin_fold_of_cycles():
    hopf = _hopf(dl.continuation(Bautin(), "mu", 0.5, -0.5))
    assert hopf.criticality == "subcritical"
    orbits = dl.periodic_orbits(Bautin(), "mu", hopf, -0.5, 0.5)
    (fold,) = orbits.special
    assert fold.kind == "fold-of-cycles"
    assert fold.value == pytest.approx(-0.25, abs=1e-6)
    assert fold.state @ fold.state == pytest.approx(0.5, abs=1e-6)
    assert fold.period == pytest.approx(2 * np.pi, rel=1e-6)
    r2 = np.sum(orbits.states**2, axis=1)
    np.testing.assert_allclose(orbits.values, r2**2 - r2, atol=1e-6)  # on the branch
    assert not orbits.stable[r2 < 0.49].any() and orbits.stable[r2 > 0.51].all()
    assert orbits.values[-1] == 0.5  # back past the Hopf point on the big cycles


def test_rossler_first_period_doubling():
    branch = dl.continuation(Rossler(c=1.0), "c", 1.0, 0.3, state=[0.04, -0.2, 0.2])
    hopf = _hopf(branch)  # where the inner equilibrium is born (a fold-Hopf point, c = 0.4)
    assert hopf.value == pytest.approx(0.4, abs=1e-8)
    orbits = dl.periodic_orbits(Rossler(), "c", hopf, 0.3, 3.0)
    (doubling,) = orbits.special
    assert doubling.kind == "period-doubling"
    assert doubling.value == pytest.approx(2.832, abs=0.01)  # published: c = 2.832
    assert np.min(np.abs(doubling.multipliers + 1.0)) < 1e-6
    assert orbits.stable[orbits.values < doubling.value].all()
    assert not orbits.stable[orbits.values > doubling.value + 1e-6].any()

    model = Rossler(c=doubling.value)  # an independent check: one long integration with
    state, period = np.asarray(doubling.state), float(doubling.period)  # ten times the steps

    def flow(x):
        return np.asarray(dl.simulate(model, period, y0=jnp.asarray(x), solver="rk4",
                                      dt=period / 4000, n_save=2).ys[-1])

    np.testing.assert_allclose(flow(state), state, atol=1e-6)
    h = 1e-5
    columns = [(flow(state + h * e) - flow(state - h * e)) / (2 * h) for e in np.eye(3)]
    assert np.min(np.abs(np.linalg.eigvals(np.array(columns).T) + 1.0)) < 1e-4


def test_neimark_sacker_of_a_torus_normal_form():
    model = TorusNormalForm()
    hopf = _hopf(dl.continuation(model, "mu", -0.5, 1.0))
    orbits = dl.periodic_orbits(model, "mu", hopf, -0.5, 1.0)
    (torus,) = orbits.special
    assert torus.kind == "neimark-sacker" and torus.value == pytest.approx(0.5, abs=1e-6)
    pair = torus.multipliers[np.abs(torus.multipliers.imag) > 1e-3]
    np.testing.assert_allclose(np.abs(pair), 1.0, atol=1e-6)
    turn = abs(np.angle(np.exp(2j * np.pi * 0.7)))  # nu T with T = 2 pi
    np.testing.assert_allclose(np.sort(np.angle(pair)), [-turn, turn], atol=1e-6)
    assert not orbits.stable[orbits.values < 0.5].any() and orbits.stable[orbits.values > 0.5].all()


def test_van_der_pol_period_for_small_mu():
    vdp = dl.models.get("van_der_pol")
    orbits = dl.periodic_orbits(vdp(mu=0.05), "mu", ({"x": 2.0, "v": 0.0}, 2 * np.pi), 0.05,
                                0.4)
    mu, ratio = orbits.values, orbits.periods / (2 * np.pi)
    assert mu[0] == 0.05 and mu[-1] == 0.4 and orbits.stable.all()
    np.testing.assert_allclose(ratio, 1 + mu**2 / 16, atol=np.max(mu) ** 4 / 300)
    # the next term of the expansion: 2 pi (1 + mu^2/16 - 5 mu^4/3072 + O(mu^6))
    assert np.all(np.abs(ratio - (1 + mu**2 / 16 - 5 * mu**4 / 3072)) < 1e-3 * mu**6 + 1e-8)
    np.testing.assert_allclose(orbits.maxima[:, 0], 2.0, atol=0.01)  # amplitude about 2


def test_results_are_dicts_and_json():
    hopf = _hopf(dl.continuation(HopfNormalForm(), "mu", -0.5, 0.5))
    orbits = dl.periodic_orbits(HopfNormalForm(), "mu", hopf, -0.5, 0.5, max_points=5)
    data = json.loads(orbits.to_json())
    assert set(data) == {"param", "points", "special"} and data["param"] == "mu"
    point = data["points"][-1]
    assert set(point) == {"value", "period", "min", "max", "stable", "multipliers"}
    assert set(point["max"]) == {"x", "y"} and len(point["multipliers"]) == 2
    assert point["period"] == pytest.approx(np.pi, rel=1e-6)
    assert isinstance(orbits, dl.PeriodicOrbits) and len(data["points"]) == 5


def test_bad_input_is_refused_in_one_line():
    model = HopfNormalForm()
    hopf = _hopf(dl.continuation(model, "mu", -0.5, 0.5))
    vdp = dl.models.get("van_der_pol")  # at mu = 0 a linear centre: l1 = 0
    centre = dl.solvers.SpecialPoint(kind="hopf", value=0.0, state=np.zeros(2), frequency=1.0,
                                     lyapunov_coefficient=0.0)
    cases = [
        (lambda: dl.periodic_orbits(model, "nope", hopf, -1, 1), "no parameter 'nope'"),
        (lambda: dl.periodic_orbits(model, "mu", hopf, 1, -1), "lo < hi"),
        (lambda: dl.periodic_orbits(model, "mu", hopf, 0.2, 1), "outside"),
        (lambda: dl.periodic_orbits(model, "mu", 3.0, -1, 1), "Hopf SpecialPoint or a pair"),
        (lambda: dl.periodic_orbits(model, "mu", ([1, 0], -2.0), -1, 1), "positive"),
        (lambda: dl.periodic_orbits(model, "mu", ({"q": 1}, 2.0), -1, 1), "no state 'q'"),
        (lambda: dl.periodic_orbits(model, "mu", hopf, -1, 1, segments=0), "segments"),
        (lambda: dl.periodic_orbits(vdp(), "mu", centre, -1, 1), "degenerate"),
    ]
    for call, message in cases:
        with pytest.raises(ValueError, match=message) as error:
            call()
        assert "\n" not in str(error.value)
