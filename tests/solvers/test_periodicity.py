"""``period`` and ``amplitude`` are NaN, with a reason, unless the oscillation is steady.

FitzHugh-Nagumo swept over I in 0..2 gave ``period(v)`` of about 20 where the system
settles to a stable focus (outside its two Hopf points, about 0.33 and 1.42), also with
``after=100``. The Hopf points come from ``dl.continuation``; between them the period
is compared with crossing times of one run measured directly.
"""

import jax.numpy as jnp
import numpy as np
import pytest

import difflab as dl

# white-box: the steadiness check and its codes
from difflab.solvers._sweeps import observables as obs

FHN = dl.models.get("fitzhugh_nagumo")
T1, N_SAVE = 300.0, 1501


@pytest.fixture(scope="module")
def hopf_points():
    branch = dl.continuation(FHN(), "current", 0.0, 2.0)
    return sorted(p.value for p in branch.special if p.kind == "hopf")


@pytest.fixture(scope="module")
def fhn_sweep(hopf_points):
    lo, hi = hopf_points
    currents = np.array([0.0, lo - 0.1, lo + 0.15, 0.9, hi - 0.15, hi + 0.1, 2.0])
    res = dl.sweep(FHN(), dl.grid(current=currents), T1, solver="tsit5", n_save=N_SAVE,
                   observables={"T": "period(v)", "T_late": "period(v, after=100)",
                                "A": "amplitude(v, after=100)"})
    return currents, res


def test_fitzhugh_nagumo_has_a_period_only_between_its_hopf_points(fhn_sweep, hopf_points,
                                                                    crossings):
    lo, hi = hopf_points
    assert 0.25 < lo < 0.4 and 1.35 < hi < 1.5
    currents, res = fhn_sweep
    inside = (currents > lo) & (currents < hi)
    assert np.all(np.asarray(res.result) == 0)
    for name in ("T", "T_late", "A"):
        values = np.asarray(res.observables[name])
        assert np.isnan(values[~inside]).all(), (name, values)
        assert np.isfinite(values[inside]).all(), (name, values)
    for current, period in zip(currents[inside], np.asarray(res.observables["T_late"])[inside]):
        run = dl.simulate(FHN(current=current), T1, solver="tsit5", n_save=30001)
        ups = crossings(run.ts, np.asarray(run["v"]))
        ups = ups[ups > 150]  # well past the transient: the limit cycle
        np.testing.assert_allclose(period, np.mean(np.diff(ups)), rtol=2e-3)


def test_the_sweep_says_why_a_period_is_missing(fhn_sweep):
    _, res = fhn_sweep
    notes = res.notes
    assert set(notes) == {"T", "T_late", "A"}
    assert notes["T_late"] == "4 points: not periodic: settles to a fixed point " \
                              "(the oscillation decays)"


TS = jnp.linspace(0.0, 40.0, 2001)
SINE = jnp.sin(2 * jnp.pi * TS / 3.0)


@pytest.mark.parametrize("signal, code", [
    (SINE, obs.PERIODIC),
    (jnp.exp(-0.1 * TS) * SINE, obs.SETTLES),
    (jnp.ones_like(TS), obs.SETTLES),
    ((1 - jnp.exp(-0.05 * TS)) * SINE, obs.NOT_STEADY),  # growing to its cycle
    (jnp.sin(2 * jnp.pi * TS / (3.0 + 0.1 * TS)), obs.NOT_STEADY),  # its period drifts
    (jnp.sin(2 * jnp.pi * TS / 30.0), obs.TOO_FEW_CYCLES),
])
def test_periodicity_tells_a_steady_oscillation_from_the_rest(signal, code):
    mask = jnp.ones(TS.shape, bool)
    assert int(obs.periodicity(TS, signal, mask)) == code
    period = obs.REDUCTIONS["period"](TS, signal, mask)
    if code == obs.PERIODIC:
        np.testing.assert_allclose(period, 3.0, rtol=1e-5)
    else:
        assert np.isnan(period)
