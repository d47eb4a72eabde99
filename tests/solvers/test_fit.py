"""Fitting: known parameters recovered from synthetic noisy data within their error bars.

About the 2-sigma checks. If the reported standard errors are right, each true value
lies inside its 2-sigma interval with probability about 95%, so a fit of two parameters
passes with probability about 90% whatever the amount of data. More data does not change
that probability; it makes the Gauss-Newton error estimate (a linearisation) accurate, so
the data sets here are large (hundreds of values). The noise seeds are fixed at 0 and
were not chosen after looking at the outcome. ``test_standard_errors_are_calibrated``
checks the error bars themselves over 24 independent data sets: the standardised errors
``(fitted - true) / stderr`` must have a spread near 1.
"""

import inspect
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difflab as dl
from difflab.cli.fit_command import build, load_config

EXAMPLE = Path(__file__).parents[2] / "examples" / "fit_lotka_volterra"

LV = dl.models.get("lotka_volterra")
TRUE_LV = LV()  # alpha=1.1, beta=0.4, gamma=0.4, delta=0.1


class DampedOscillator(dl.Model):
    """x'' + 2 zeta omega x' + omega^2 x = 0."""

    omega: float = dl.param(2.0, bounds=(0.1, 20.0))
    zeta: float = dl.param(0.1, bounds=(0.0, 2.0))
    state_names = ("x", "v")

    def vector_field(self, t, y):
        x, v = y
        return jnp.stack([v, -self.omega**2 * x - 2.0 * self.zeta * self.omega * v])

    def initial_state(self):
        return jnp.array([1.0, 0.0])


def lv_data(sigma=0.5, seed=0, n=201):
    traj = dl.simulate(TRUE_LV, 20.0, n_save=n)
    return dl.io.read_observations(traj).with_noise(sigma, seed=seed)


def assert_within_two_sigma(res, truth):
    for name, value in truth.items():
        lo, hi = res.interval(name, 2.0)
        assert lo < value < hi, f"{name}: true {value} outside [{lo:.5g}, {hi:.5g}]"


def test_lotka_volterra_recovered_within_two_sigma():
    data = lv_data()  # 201 times x 2 states, noise 0.5 on populations of 2-40
    res = dl.fit(LV(alpha=1.2, beta=0.45), data, params=["alpha", "beta"], sigma=0.5)
    assert res.ok and res.result == dl.Result.SUCCESS
    assert_within_two_sigma(res, {"alpha": 1.1, "beta": 0.4})
    assert res.absolute_sigma and res.dof == 402 - 2
    assert 0.7 < res.reduced_chi2 < 1.3  # the noise level is right
    assert abs(res.correlation[0, 1]) < 1 and res.correlation[0, 0] == pytest.approx(1.0)
    assert res.model.alpha == pytest.approx(res.params["alpha"])
    assert np.all(np.diff(res.loss_history) <= 1e-9)  # LM only accepts improvements


@pytest.mark.slow
def test_damped_oscillator_recovered_within_two_sigma():
    truth = DampedOscillator(omega=2.5, zeta=0.15)
    traj = dl.simulate(truth, 10.0, n_save=201)
    data = dl.io.read_observations(traj).with_noise(0.02, seed=0)
    res = dl.fit(DampedOscillator(), data, params=["omega", "zeta"], sigma=0.02)
    assert_within_two_sigma(res, {"omega": 2.5, "zeta": 0.15})
    assert res.stderr["omega"] < 0.01 * 2.5


@pytest.mark.slow
def test_standard_errors_are_calibrated():
    # 24 independent noisy data sets of the damped oscillator, each fitted once.
    truth = DampedOscillator(omega=2.5, zeta=0.15)
    traj = dl.simulate(truth, 10.0, n_save=201)
    clean = dl.io.read_observations(traj)
    z = []
    for seed in range(24):
        res = dl.fit(DampedOscillator(omega=2.4, zeta=0.2), clean.with_noise(0.05, seed=seed),
                     params=["omega", "zeta"], sigma=0.05)
        z += [(res.params[n] - getattr(truth, n)) / res.stderr[n] for n in ("omega", "zeta")]
    z = np.asarray(z)
    # 48 standard normal draws (in pairs): their spread is 1 within sampling error
    assert 0.7 < np.std(z) < 1.35, z
    assert abs(np.mean(z)) < 0.5, z
    assert np.mean(np.abs(z) < 2) > 0.85, z


@pytest.mark.slow
def test_unknown_noise_scales_the_errors_by_the_residuals():
    data = lv_data()
    given = dl.fit(LV(), data, params=["alpha", "beta"], sigma=0.5)
    unknown = dl.fit(LV(), dl.io.Observations(data.t, data.y, data.states), params=["alpha", "beta"])
    assert not unknown.absolute_sigma
    assert unknown.params["alpha"] == pytest.approx(given.params["alpha"], rel=1e-6)
    ratio = unknown.stderr["alpha"] / given.stderr["alpha"]
    # weights 1 instead of 1/0.5, then scaled by chi^2/dof: the ratio is sqrt(chi^2_nu)
    assert ratio == pytest.approx(np.sqrt(given.reduced_chi2), rel=1e-4)


@pytest.mark.slow
def test_multi_start_finds_the_global_minimum_from_bad_guesses():
    # the data and settings of examples/fit_lotka_volterra (tests/app/test_fit_cli.py runs
    # it through the CLI: the two share one compiled fit), from a worse guess
    config = load_config(EXAMPLE / "fit.toml")
    model, data, kwargs = build(config)
    model = model.replace(alpha=2.0, beta=0.1, gamma=0.2, delta=0.5)
    many = dl.fit(model, data, config.params, **{**kwargs, "seed": 1})
    # 8 starts over the 8 CPU devices of the test session: the model's values, then 7
    # drawn within the bounds; from this guess alone LM stalls in a local minimum
    assert many.start_losses.shape == (8,) and many.start_params.shape == (8, 4)
    assert many.n_devices == min(8, len(jax.devices()))  # one start per device
    assert many.loss == pytest.approx(np.min(many.start_losses), rel=1e-9)
    assert many.start_losses[0] > 10 * many.loss  # the first start alone fails
    assert many.reduced_chi2 < 1.3
    assert many.params["alpha"] == pytest.approx(1.1, rel=0.05)


@pytest.mark.slow
def test_bounds_and_log_scale_are_respected():
    data = lv_data()
    res = dl.fit(LV(alpha=0.9), data, params=["alpha", "beta"], sigma=0.5,
                 bounds={"alpha": (0.5, 1.0)}, throw=False)
    assert 0.5 < res.params["alpha"] < 1.0  # the optimum (1.1) is outside: pinned near 1
    assert res.params["alpha"] > 0.99
    hist = res.parameter_history
    assert np.all((hist[:, 0] > 0.5) & (hist[:, 0] < 1.0))
    with pytest.raises(ValueError, match="outside its bounds"):
        dl.fit(LV(alpha=2.0), data, params=["alpha"], bounds={"alpha": (0.5, 1.0)})
    with pytest.raises(ValueError, match="log scale"):
        dl.fit(LV(), data, params=["alpha"], bounds={"alpha": (-1.0, 5.0)}, log_scale=True)


@pytest.mark.slow
def test_bfgs_agrees_with_levenberg_marquardt():
    data = lv_data()
    lm = dl.fit(LV(alpha=1.2, beta=0.45), data, params=["alpha", "beta"], sigma=0.5)
    bfgs = dl.fit(LV(alpha=1.2, beta=0.45), data, params=["alpha", "beta"], sigma=0.5,
                  method="bfgs", fit_rtol=1e-10, fit_atol=1e-10)
    for name in ("alpha", "beta"):
        assert bfgs.params[name] == pytest.approx(lm.params[name], rel=1e-5)
        assert bfgs.stderr[name] == pytest.approx(lm.stderr[name], rel=1e-4)


def test_loss_history_streams_in_chunks_and_the_fit_can_be_stopped():
    data = lv_data()
    seen = []
    res = dl.fit(LV(alpha=1.2, beta=0.45), data, params=["alpha", "beta"], sigma=0.5,
                 chunk_size=2, callback=seen.append)
    chunks = [p for p in seen if not p.done]
    assert len(chunks) >= 2 and all(len(p.losses) <= 2 for p in chunks)
    assert seen[-1].done and seen[-1].result is res
    np.testing.assert_array_equal(np.concatenate([p.losses for p in chunks]), res.loss_history)
    assert res.parameter_history.shape == (res.n_steps, 2)

    stopped = dl.fit(LV(alpha=1.2, beta=0.45), data, params=["alpha", "beta"], sigma=0.5,
                     chunk_size=2, callback=lambda p: False, throw=False)
    assert stopped.n_steps == 2 and not stopped.ok and "stopped" in stopped.message

    stream = dl.solvers.fit_stream(LV(alpha=1.2, beta=0.45), data, params=["alpha", "beta"],
                                   sigma=0.5, chunk_size=2)
    first = next(stream)
    assert first.step == 2 and first.names == ("alpha", "beta")
    stream.close()


def test_refitting_other_data_and_guesses_does_not_recompile():
    # white-box: the compiled-program cache sizes of the fit's chunk and final steps
    from difflab.solvers._fits import run as _fit

    data = lv_data()
    dl.fit(LV(alpha=0.9), data, params=["alpha", "beta"], sigma=0.5)
    sizes = (_fit._chunk._cached._cache_size(), _fit._final._cached._cache_size())
    refit = dl.fit(LV(alpha=1.3, beta=0.3), lv_data(seed=5), params=["alpha", "beta"],
                   sigma=0.4, fit_rtol=1e-7, rtol=1e-7)
    assert (_fit._chunk._cached._cache_size(), _fit._final._cached._cache_size()) == sizes
    assert refit.settings["rtol"] == 1e-7 and refit.settings["atol"] == 1e-10  # the solver's


def test_fit_takes_the_arguments_of_fit_stream():
    fit, stream = (inspect.signature(f).parameters for f in (dl.fit, dl.solvers.fit_stream))
    assert list(fit) == [*stream, "callback", "throw"]
    assert all(fit[name] == stream[name] for name in stream)
    with pytest.raises(TypeError, match="fit.. got an unexpected keyword argument 'rtoll'"):
        dl.fit(LV(), lv_data(), params=["alpha"], rtoll=1e-6)


def test_fit_errors_name_the_problem():
    data = lv_data()
    with pytest.raises(ValueError, match="no parameter 'alpah'"):
        dl.fit(LV(), data, params=["alpah"])
    with pytest.raises(ValueError, match="not a state"):
        dl.fit(LV(), {"t": data.t, "wolves": data.y[:, 1]}, params=["alpha"])
    with pytest.raises(ValueError, match="unknown fit method"):
        dl.fit(LV(), data, params=["alpha"], method="newton")
    with pytest.raises(ValueError, match="must lie within"):
        dl.fit(LV(), data, params=["alpha"], t1=5.0)
    with pytest.raises(ValueError, match="stochastic"):
        dl.fit(dl.models.get("ornstein_uhlenbeck")(), data, params=["alpha"])


def test_a_failed_fit_raises_with_its_result():
    data = lv_data()
    with pytest.raises(dl.solvers.FitError) as info:
        dl.fit(LV(alpha=0.9), data, params=["alpha", "beta"], sigma=0.5, fit_max_steps=2)
    assert info.value.result.result == dl.Result.MAX_STEPS_REACHED
    assert "fit_max_steps" in str(info.value)
