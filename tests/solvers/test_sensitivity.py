"""Time-resolved forward sensitivities: against finite differences, normalised, saved."""

import h5py
import numpy as np
import pytest

import difflab as dl

LV = dl.models.get("lotka_volterra")


@pytest.fixture(scope="module")
def lv_sensitivity():
    return dl.sensitivity(LV(), 15.0, params=["alpha", "beta", "prey0"], n_save=151)


def test_sensitivities_match_finite_differences(lv_sensitivity):
    sens = lv_sensitivity
    assert sens.raw.shape == (151, 2, 3) and sens.ys.shape == (151, 2)
    assert sens.parameters == ("alpha", "beta", "prey0") and sens.state_names == ("prey", "predator")
    model = LV()
    for k, name in enumerate(sens.parameters):
        value = float(getattr(model, name))
        eps = 1e-6 * max(1.0, abs(value))
        up = dl.simulate(model.replace(**{name: value + eps}), 15.0, n_save=151).ys
        down = dl.simulate(model.replace(**{name: value - eps}), 15.0, n_save=151).ys
        fd = (np.asarray(up) - np.asarray(down)) / (2 * eps)
        np.testing.assert_allclose(sens.raw[:, :, k], fd, rtol=1e-5, atol=1e-5 * np.abs(fd).max())
    # the initial state depends on prey0 only
    np.testing.assert_allclose(sens.raw[0], [[0, 0, 1], [0, 0, 0]], atol=1e-15)


def test_normalised_sensitivities_are_logarithmic_derivatives(lv_sensitivity):
    sens = lv_sensitivity
    expected = sens.raw * sens.values[None, None, :] / sens.ys[:, :, None]
    np.testing.assert_allclose(sens.normalized, expected, rtol=1e-12)
    np.testing.assert_array_equal(sens.curve("prey", "beta"), sens.raw[:, 0, 1])
    np.testing.assert_array_equal(sens.curve("predator", "alpha", normalized=True),
                                  sens.normalized[:, 1, 0])
    with pytest.raises(KeyError, match="no state 'wolves'"):
        sens.curve("wolves", "alpha")


def test_zero_states_give_nan_normalised_sensitivity():
    sir = dl.models.get("sir")()
    sens = dl.sensitivity(sir, 10.0, params=["beta"], n_save=11)
    recovered = sens.state_names.index("R")
    assert sens.ys[0, recovered] == 0 and np.isnan(sens.normalized[0, recovered, 0])
    assert np.all(np.isfinite(sens.normalized[1:]))


def test_sensitivities_are_saved_with_the_run(tmp_path, lv_sensitivity):
    path = tmp_path / "sens.h5"
    name = dl.io.save(path, lv_sensitivity)
    session = dl.open(path)
    run = session.runs[0]
    np.testing.assert_allclose(np.asarray(run.ys), lv_sensitivity.ys)
    stored = session.sensitivities[name]
    assert stored.parameters == lv_sensitivity.parameters
    np.testing.assert_allclose(np.asarray(stored.raw), lv_sensitivity.raw)
    np.testing.assert_allclose(stored.normalized, lv_sensitivity.normalized)  # arrays read lazily
    with h5py.File(path) as f:
        group = f["sensitivities"][name]
        np.testing.assert_allclose(group["dy_dp"][()], lv_sensitivity.raw)
        np.testing.assert_allclose(group["dy_dp_normalized"][()], lv_sensitivity.normalized)
        # names are netCDF char arrays: one row of one-byte strings each
        assert [b"".join(p).decode() for p in group["parameter_name"][()]] == ["alpha", "beta", "prey0"]
        assert group.attrs["method"] in ("forward", b"forward")


def test_new_values_reuse_the_compiled_sensitivity():
    # white-box: the compiled-program cache size of the sensitivity's Jacobian
    from difflab.solvers._sensitivity import _jacobian

    dl.sensitivity(LV(), 15.0, params=["alpha", "beta"], n_save=51)
    size = _jacobian._cached._cache_size()
    dl.sensitivity(LV(alpha=0.9, prey0=20.0), 12.0, params=["alpha", "beta"], n_save=51)
    assert _jacobian._cached._cache_size() == size


def test_sensitivity_errors_name_the_problem():
    with pytest.raises(ValueError, match="no parameter 'alpah'"):
        dl.sensitivity(LV(), 10.0, params=["alpah"])
    with pytest.raises(TypeError, match="unexpected keyword argument 'rtool'"):
        dl.sensitivity(LV(), 10.0, rtool=1e-6)


def test_a_sensitivity_keeps_the_times_simulate_keeps():
    """dt = 1e-2 to t = 1 is 100 steps: 101 distinct times, as simulate keeps (not 1001
    with 900 repeats, which no plot or CF checker takes)."""
    model = dl.models.get("lotka_volterra")()
    sens = dl.sensitivity(model, 1.0, dt=1e-2, params=("alpha",))
    np.testing.assert_allclose(sens.ts, dl.simulate(model, 1.0, dt=1e-2).ts)
    assert np.all(np.diff(sens.ts) > 0)
