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
    assert set(data) == {"param", "points", "special", "status"} and data["param"] == "mu"
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
        (lambda: dl.periodic_orbits(model, "mu", 3.0, -1, 1),
         "Hopf SpecialPoint, a period-doubling"),
        (lambda: dl.periodic_orbits(model, "mu", ([1, 0], -2.0), -1, 1), "positive"),
        (lambda: dl.periodic_orbits(model, "mu", ({"q": 1}, 2.0), -1, 1), "no state 'q'"),
        (lambda: dl.periodic_orbits(model, "mu", hopf, -1, 1, segments=0), "segments"),
        (lambda: dl.periodic_orbits(vdp(), "mu", centre, -1, 1), "degenerate"),
    ]
    for call, message in cases:
        with pytest.raises(ValueError, match=message) as error:
            call()
        assert "\n" not in str(error.value)


class HodgkinHuxley(dl.Model):
    """Hodgkin & Huxley (1952), standard parameters, voltage from rest, current ``I``:
    Hopf points at I = 9.7796 (subcritical) and 154.5266 (supercritical)."""

    I: float = dl.param(0.0, bounds=(-50.0, 300.0))  # noqa: E741
    state_names = ("V", "m", "h", "n")

    def vector_field(self, t, y):
        v, m, h, n = y
        am = 0.1 * (25 - v) / (jnp.exp((25 - v) / 10) - 1)
        an = 0.01 * (10 - v) / (jnp.exp((10 - v) / 10) - 1)
        ah, bh = 0.07 * jnp.exp(-v / 20), 1 / (jnp.exp((30 - v) / 10) + 1)
        bm, bn = 4 * jnp.exp(-v / 18), 0.125 * jnp.exp(-v / 80)
        dv = self.I - 120 * m**3 * h * (v - 115) - 36 * n**4 * (v + 12) - 0.3 * (v - 10.599)
        return jnp.stack([dv, am * (1 - m) - bm * m, ah * (1 - h) - bh * h,
                          an * (1 - n) - bn * n])

    def initial_state(self):
        return jnp.array([0.0, 0.053, 0.596, 0.318])


def test_multipliers_of_a_product_spanning_many_orders_of_magnitude():
    from difflab.solvers._analysis.periodic import floquet
    rng = np.random.default_rng(0)
    m, spread = 16, np.array([40.0, 0.0, -40.0])  # multipliers e^40, 1, e^-40
    qs = [np.linalg.qr(rng.normal(size=(3, 3)))[0] for _ in range(m)]
    blocks = [qs[(i + 1) % m] @ np.diag(np.exp(spread / m)) @ qs[i].T for i in range(m)]
    np.testing.assert_allclose(floquet(blocks), np.exp(spread), rtol=1e-8)
    product = np.linalg.multi_dot(blocks[::-1])  # formed, the small one is lost
    assert not np.allclose(np.sort(np.abs(np.linalg.eigvals(product)))[0], np.exp(-40.0),
                           rtol=1e-3)


def test_hodgkin_huxley_from_either_hopf_point_to_the_other():
    # from I = 154.5266 the branch used to turn back near I = 7.876 and retrace (33 special
    # points, 16 repeats), from I = 9.7796 it stopped after 2 orbits; the unstable orbits'
    # multipliers (up to 1e9) were NaN. Published: folds of cycles at I = 6.2645, 7.85 and
    # 7.92 (Guckenheimer & Labouriau 1993), the branch joining the two Hopf points.
    model = HodgkinHuxley()
    sub, sup = [s for s in dl.continuation(model, "I", 0.0, 200.0).special if s.kind == "hopf"]
    assert sub.value == pytest.approx(9.7796, abs=1e-4) and sub.criticality == "subcritical"
    assert sup.value == pytest.approx(154.5266, abs=1e-4)
    expected = [("fold-of-cycles", 6.2645), ("fold-of-cycles", 7.8465),
                ("fold-of-cycles", 7.922), ("period-doubling", 7.8495),
                ("period-doubling", 7.922)]
    for start, end in ((sub, sup), (sup, sub)):
        orbits = dl.periodic_orbits(model, "I", start, 0.0, 200.0, rtol=1e-4)
        assert orbits.status.startswith("shrank to an equilibrium")
        value = float(orbits.status.split("I=")[1].split()[0])
        assert value == pytest.approx(end.value, abs=2e-3)
        assert np.isfinite(orbits.multipliers).all()
        assert np.abs(orbits.multipliers[:, 0]).max() > 1e6  # the strongly unstable orbits
        found = sorted((s.kind, s.value) for s in orbits.special)
        assert [kind for kind, _ in found] == [kind for kind, _ in expected]
        np.testing.assert_allclose([v for _, v in found], [v for _, v in expected], atol=1e-3)


def test_a_branch_ends_at_the_hopf_point_it_shrinks_onto():
    fhn = dl.models.get("fitzhugh_nagumo")()
    first, second = [s for s in dl.continuation(fhn, "current", 0.0, 1.5).special
                     if s.kind == "hopf"]
    orbits = dl.periodic_orbits(fhn, "current", second, 0.0, 1.5)  # from the right this time
    end = float(orbits.status.split("current=")[1].split()[0])
    assert orbits.status.startswith("shrank to an equilibrium")
    assert end == pytest.approx(first.value, abs=1e-5)
    assert [s.kind for s in orbits.special] == ["fold-of-cycles"] * 2


def test_van_der_pol_period_at_mu_10_to_1e_6_with_default_settings():
    # with the fixed mesh the period came out 19.10434 (1.4e-3 off), silently
    vdp, exact = dl.models.get("van_der_pol"), 19.0783696  # published: T(10) = 19.0784
    start = ({"x": 2.0, "v": 0.0}, 6.66)
    compiled = shooting.correct._cached._cache_size()
    orbits = dl.periodic_orbits(vdp(mu=1.0), "mu", start, 1.0, 10.0)
    error = abs(orbits.periods[-1] / exact - 1)
    assert shooting.correct._cached._cache_size() <= compiled + 1  # each refinement alike
    assert orbits.values[-1] == 10.0 and orbits.status == "left the range at 10"
    assert error < 1e-6 and orbits.errors.max() <= 1e-6 and orbits.steps > 400
    assert orbits.errors[-1] == pytest.approx(error, rel=0.2)  # the estimate is the error
    capped = dl.periodic_orbits(vdp(mu=1.0), "mu", start, 1.0, 10.0, max_steps=800)
    error = abs(capped.periods[-1] / exact - 1)
    assert error > 1e-5 and capped.errors[-1] == pytest.approx(error, rel=0.2)
    assert "short of rtol=1e-06 with 800 steps" in capped.status
