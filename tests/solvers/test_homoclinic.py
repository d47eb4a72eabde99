"""Homoclinic orbits: the period blow-up of a branch of cycles and the large-period
continuation of the homoclinic curve of the Bogdanov-Takens normal form, checked against
its closed form ``b1 = -(6/25) b2^2 + O(b2^3)`` (Kuznetsov, *Elements of Applied
Bifurcation Theory*, 8.4), the saddle's closed-form eigenvalues and scipy's integration
of the saddle's manifolds; and Lorenz's homoclinic explosion (published rho = 13.926)."""

import re

import jax.numpy as jnp
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import difflab as dl


class BogdanovTakens(dl.Model):
    """``x' = y``, ``y' = b1 + b2 x + x^2 - x y``: for ``b2 < 0`` a Hopf point at
    ``b1 = 0`` whose cycles end at an orbit homoclinic to the saddle
    ``x = (-b2 + sqrt(b2^2 - 4 b1)) / 2``, ``y = 0``."""

    b1: float = dl.param(0.0, bounds=(-1.0, 1.0))
    b2: float = dl.param(-0.2, bounds=(-1.0, 1.0))
    state_names = ("x", "y")

    def vector_field(self, t, y):
        x, v = y
        return jnp.stack([v, self.b1 + self.b2 * x + x**2 - x * v])

    def initial_state(self):
        return jnp.array([0.0, 0.0])


def _saddle(b1, b2):
    """The saddle's ``x`` and eigenvalues (roots of ``l^2 + x l - (b2 + 2 x)``)."""
    x = (-b2 + np.sqrt(b2**2 - 4 * b1)) / 2
    root = np.sqrt(x**2 + 4 * (b2 + 2 * x))
    return x, np.stack([(-x + root) / 2, (-x - root) / 2], axis=-1)


def _splitting(b1, b2):
    """Where the saddle's unstable and stable manifolds (the branches that go round the
    focus) cross ``y = 0``, ``x_u - x_s``, by scipy: it changes sign across a homoclinic
    orbit."""
    x, (unstable, stable) = _saddle(b1, b2)
    field = lambda t, y: [y[1], b1 + b2 * y[0] + y[0] ** 2 - y[0] * y[1]]  # noqa: E731

    def crossing(rate, direction):
        axis = lambda t, y: y[1]  # noqa: E731
        axis.terminal, axis.direction = True, direction
        start = np.array([x, 0.0]) - 1e-8 * np.array([1.0, rate])
        out = solve_ivp(field, (0, np.sign(rate) * 1e3), start, events=axis, rtol=1e-12,
                        atol=1e-14)
        return out.y_events[0][0][0]

    return crossing(unstable, 1) - crossing(stable, -1)


def _between(b1, b2, rel):
    """Whether the manifolds split with opposite signs at ``b1 (1 -+ rel)``."""
    return _splitting(b1 * (1 - rel), b2) * _splitting(b1 * (1 + rel), b2) < 0


@pytest.fixture(scope="module")
def hopf():
    branch = dl.continuation(BogdanovTakens(b1=0.005), "b1", 0.005, -0.005, state=[0.0, 0.0])
    (hopf,) = [s for s in branch.special if s.kind == "hopf"]
    return hopf


def test_a_branch_of_cycles_ends_where_its_period_grows_without_bound(hopf):
    cycles = dl.periodic_orbits(BogdanovTakens(), "b1", hopf, -0.05, 0.01, ds_max=0.05)
    found = re.match(r"period grows without bound: homoclinic orbit near b1=(\S+), to the "
                     r"saddle at \((\S+), (\S+)\) with eigenvalues (\S+), (\S+)$", cycles.status)
    assert found, cycles.status
    near, x, y, *rates = map(float, found.groups())
    assert cycles.periods[-1] > 2 * cycles.periods[0]
    assert _between(near, -0.2, 1e-4)  # to 1e-4 by scipy's manifolds
    assert abs(near + 6 / 25 * 0.2**2) < 0.05 * 0.2**3  # the closed form to O(b2^3)
    x_s, values = _saddle(cycles.values[-1], -0.2)  # the last orbit's saddle
    np.testing.assert_allclose([x, y], [x_s, 0.0], atol=1e-5)
    np.testing.assert_allclose(rates, values, rtol=1e-3)


@pytest.fixture(scope="module")
def curve(hopf):
    """The cycles held at period 50 from b2 = -0.2 to -0.1."""
    cycles = dl.periodic_orbits(BogdanovTakens(), "b1", hopf, -0.05, 0.01, ds_max=0.05,
                                max_period=50.0, rtol=1e-2, segments=8)
    return cycles, dl.homoclinic(BogdanovTakens(), ("b1", "b2"), cycles, -0.2, -0.1,
                                 segments=8)


@pytest.mark.slow
def test_the_homoclinic_curve_is_the_normal_form_s(curve):
    _, homoclinic = curve
    b1, b2 = homoclinic.values.T
    assert homoclinic.kind == "homoclinic" and len(b1) > 10
    assert homoclinic.status == "left the range at -0.2; left the range at -0.1"
    assert b2.min() == pytest.approx(-0.2) and b2.max() == pytest.approx(-0.1)
    ratio = b1 / b2**2  # -6/25 + O(b2): the line through it meets the axis at -6/25
    slope, intercept = np.polyfit(-b2, ratio, 1)
    assert intercept == pytest.approx(-6 / 25, abs=5e-4) and 0 < slope < 0.1
    np.testing.assert_allclose(homoclinic.periods, homoclinic.periods[0], rtol=1e-12)
    for i in (0, len(b1) // 2, -1):  # scipy's manifolds split either side of each point
        assert _between(b1[i], b2[i], 1e-3)


@pytest.mark.slow
def test_the_saddle_and_its_eigenvalues_are_reported(curve):
    _, homoclinic = curve
    b1, b2 = homoclinic.values.T
    x, values = _saddle(b1, b2)
    np.testing.assert_allclose(homoclinic.saddles, np.stack([x, 0 * x], axis=1), atol=1e-9)
    np.testing.assert_allclose(homoclinic.saddle_eigenvalues, values, rtol=1e-9)
    # the orbit passes within 1% of its size of the saddle
    size = np.linalg.norm(homoclinic.maxima - homoclinic.minima, axis=1)
    assert np.all(homoclinic.maxima[:, 0] > x - 0.01 * size)


@pytest.mark.slow
def test_the_curve_reads_back_in_xarray(curve):
    _, homoclinic = curve
    ds = homoclinic.to_xarray()
    assert ds.attrs["analysis"] == "cycle_curve" and ds.attrs["kind"] == "homoclinic"
    np.testing.assert_array_equal(ds["values"].values, homoclinic.values)
    np.testing.assert_array_equal(ds["saddle_eigenvalues_real"].values,
                                  homoclinic.saddle_eigenvalues.real)
    np.testing.assert_array_equal(ds["errors"].values, homoclinic.errors)
    assert np.all(homoclinic.errors > 0) and np.all(np.isfinite(homoclinic.errors))


@pytest.mark.slow
def test_an_orbit_far_from_any_saddle_is_refused(curve):
    cycles, _ = curve
    state, period = cycles.states[1], cycles.periods[1]  # a small cycle by the Hopf point
    with pytest.raises(ValueError, match="passes no saddle"):
        dl.homoclinic(BogdanovTakens(b1=float(cycles.values[1])), ("b1", "b2"),
                      (state, period), -0.3, -0.1)
    with pytest.raises(ValueError, match="branch of cycles is in 'b1'"):
        dl.homoclinic(BogdanovTakens(), ("b2", "b1"), cycles, -0.3, -0.1)


@pytest.mark.slow
def test_lorenz_cycles_end_at_the_homoclinic_explosion():
    lorenz = dl.models.get("lorenz")()  # sigma = 10, beta = 8/3
    hopf = dl.continuation(lorenz, "rho", 2.0, 30.0, state={"x": 1.4, "y": 1.4, "z": 1.0})
    cycles = dl.periodic_orbits(lorenz, "rho", hopf.special[0], 0.0, 30.0)
    found = re.match(r"period grows without bound: homoclinic orbit near rho=(\S+), to the "
                     r"saddle at \((\S+), (\S+), (\S+)\) with eigenvalues (\S+), (\S+), (\S+)$",
                     cycles.status)
    assert found, cycles.status
    near, *rest = map(float, found.groups())
    assert near == pytest.approx(13.926, abs=1e-3)  # published: 13.926 (Sparrow 1982)
    np.testing.assert_allclose(rest[:3], 0.0, atol=1e-9)  # the origin
    rho, root = cycles.values[-1], np.sqrt(11**2 + 40 * (cycles.values[-1] - 1))
    assert rho == pytest.approx(near, abs=0.1)
    np.testing.assert_allclose(rest[3:], [(-11 + root) / 2, -8 / 3, (-11 - root) / 2],
                               rtol=1e-3)
