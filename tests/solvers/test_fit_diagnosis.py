"""Fits that say what their statistics say, keep their run, and refuse what cannot end.

``x' = -a b x`` determines only the product ``a b``: moving along ``(da, db) = (a, -b)``
keeps ``b da + a db = 0``, so that is the direction the data cannot see (analytic), and
the correlation of ``a`` and ``b`` along it is -1.
"""

import importlib

import h5py
import jax.numpy as jnp
import numpy as np
import pytest

import difflab as dl


def fit_module():
    """The module of ``dl.fit`` (white-box: its ``simulate`` and ``Runner``)."""
    return importlib.import_module(dl.solvers.fit.__module__)


class Product(dl.Model):
    """dx/dt = -a b x: only a*b is identifiable."""

    a: float = dl.param(0.5, bounds=(0.01, 10.0))
    b: float = dl.param(1.5, bounds=(0.01, 10.0))
    c: float = dl.param(1.0, bounds=(0.1, 10.0))
    state_names = ("x",)

    def vector_field(self, t, y):
        return -self.a * self.b * y

    def initial_state(self):
        return jnp.array([self.c])


T = np.linspace(0.1, 2.0, 20)
SIGMA = 0.01


def decay(t=T, sigma=SIGMA, seed=0, rate=0.6):
    y = np.exp(-rate * t) + sigma * np.random.default_rng(seed).standard_normal(t.shape)
    return dl.io.Observations(t, y[:, None], ("x",), np.full((len(t), 1), sigma))


@pytest.fixture(scope="module")
def product_fit():
    return dl.fit(Product(), decay(), ["a", "b"], solver="rk4", dt=0.01, throw=False)


def test_only_the_product_is_identifiable_and_the_fit_says_so(product_fit):
    res = product_fit
    a, b = res.params["a"], res.params["b"]
    np.testing.assert_allclose(a * b, 0.6, rtol=0.05)
    assert np.isinf(res.stderr["a"]) and np.isinf(res.stderr["b"])
    np.testing.assert_allclose(res.correlation, [[1.0, -1.0], [-1.0, 1.0]], atol=1e-9)
    (direction,) = res.null_directions
    expected = np.array([a, -b]) / np.hypot(a, b)
    np.testing.assert_allclose(abs(direction @ expected), 1.0, atol=1e-6)
    assert res.ok and not res.good  # the optimizer stopped; the statistics object
    assert "only a*b is determined" in res.message
    assert "0.71*Δa/a - 0.71*Δb/b is not determined by the data" in res.message
    stats = dl.solvers.fit_statistics(res)
    assert "only a*b" in stats.describe()
    np.testing.assert_allclose(stats.correlation[0, 1], -1.0, atol=1e-9)


def test_a_parameter_outside_the_null_direction_keeps_its_error():
    res = dl.fit(Product(), decay(), ["a", "b", "c"], solver="rk4", dt=0.01, throw=False)
    assert np.isfinite(res.stderr["c"]) and 0 < res.stderr["c"] < 0.05
    np.testing.assert_allclose(res.correlation[0, 1], -1.0, atol=1e-9)
    assert res.correlation[0, 2] == 0.0 and res.correlation[1, 2] == 0.0


def test_more_parameters_than_data_is_named():
    data = decay(t=np.array([0.5, 1.0]))
    res = dl.fit(Product(), data, ["a", "b", "c"], solver="rk4", dt=0.01, throw=False)
    assert res.dof == -1
    assert "more parameters (3) than data values (2)" in res.message and not res.good
    assert "converged" not in res.notes[0]


def test_a_poor_local_minimum_with_known_noise_is_named():
    # a fit of a decay to data that rise and fall: the best decay is far off the data
    t = np.linspace(0.1, 4.0, 40)
    y = t * np.exp(1.0 - t) + SIGMA * np.random.default_rng(1).standard_normal(t.shape)
    data = dl.io.Observations(t, y[:, None], ("x",), np.full((40, 1), SIGMA))
    res = dl.fit(Product(), data, ["a", "c"], solver="rk4", dt=0.01, throw=False)
    assert res.chi2 / res.dof > 10
    assert any(n.startswith(f"reduced χ² = {res.chi2 / res.dof:.3g} with the noise given")
               for n in res.notes)
    assert not res.good


def test_a_good_fit_has_nothing_against_it():
    res = dl.fit(Product(), decay(seed=3), ["a", "c"], solver="rk4", dt=0.01)
    assert res.good and res.notes == () and res.message == "converged"


def test_saving_a_fit_never_simulates(product_fit, tmp_path, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("saving a fit simulated")

    monkeypatch.setattr(fit_module(), "simulate", refuse)
    path = tmp_path / "fit.h5"
    dl.io.save(path, product_fit)
    with h5py.File(path, "r") as f:
        run = f["fits/fit0"].attrs["run"]
        run = run.decode() if isinstance(run, bytes) else run
        np.testing.assert_array_equal(f["runs"][run]["y"][:], np.asarray(product_fit.run.ys))
        np.testing.assert_allclose(f["fits/fit0"].attrs["correlation"], [1, -1, -1, 1])
    back = dl.open(path).fits[0]
    assert back.message == product_fit.message
    np.testing.assert_array_equal(np.asarray(back.trajectory().ys), np.asarray(product_fit.run.ys))


def test_a_fit_over_too_many_steps_is_refused_before_any_work(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the fit started working")

    monkeypatch.setattr(fit_module(), "Runner", refuse)
    data = decay(t=np.array([1.0, 1e12]))
    with pytest.raises(ValueError, match="more than the 1,000,000,000 allowed"):
        dl.fit(Product(), data, ["a"], solver="rk4", dt=0.01)


def test_many_starts_per_device_finish(monkeypatch):
    # batched LAPACK QR (one per start) wedged the CPU's thread pool; the fit's methods
    # solve their linear least squares without it
    def refuse(*args, **kwargs):
        raise AssertionError("a LAPACK QR in the fit")

    monkeypatch.setattr(jnp.linalg, "qr", refuse)
    res = dl.fit(Product(b=1.0), decay(), ["a"], solver="rk4", dt=0.01, starts=12,
                 devices=2)
    assert res.ok and len(res.start_losses) == 12
    np.testing.assert_allclose(res.params["a"], 0.6, rtol=0.05)
