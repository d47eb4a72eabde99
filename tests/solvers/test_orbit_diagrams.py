"""Orbit diagrams and chaos maps as sweep outputs: observables after a transient, vectors of
maxima and section crossings per point, the largest Lyapunov exponent, and their files."""

from pathlib import Path

import h5py
import jax.numpy as jnp
import numpy as np
import pytest
import xarray as xr

import difflab as dl
from difflab.cli import main
from difflab.io import _sweep_output, _sweep_store

LORENZ = dl.models.get("lorenz")
ROSSLER_FILE = Path(__file__).parents[2] / "examples" / "models" / "rossler.eqn"


class Oscillator(dl.Model):
    """``x'' = -omega^2 x``: from (x0, v0) every maximum is ``hypot(x0, v0 / omega)``."""

    omega: float = dl.param(1.0, bounds=(0.1, 10.0))
    state_names = ("x", "v")

    def vector_field(self, t, y):
        return jnp.stack([y[1], -self.omega**2 * y[0]])

    def initial_state(self):
        return jnp.array([1.0, 0.5])


class Hopf(dl.Model):
    """The Hopf normal form: a stable cycle of radius ``sqrt(mu)`` for ``mu > 0``."""

    mu: float = dl.param(1.0, bounds=(-5.0, 5.0))
    state_names = ("x", "y")

    def vector_field(self, t, y):
        x, yy = y
        r2 = x**2 + yy**2
        return jnp.stack([self.mu * x - yy - x * r2, x + self.mu * yy - yy * r2])

    def initial_state(self):
        return jnp.array([0.5, 0.0])


class Rossler(dl.Model):
    """Rossler's system: with a = b = 0.2 its cycle doubles as c grows, then turns chaotic."""

    a: float = dl.param(0.2, bounds=(0.0, 1.0))
    b: float = dl.param(0.2, bounds=(0.0, 2.0))
    c: float = dl.param(5.7, bounds=(1.0, 10.0))
    state_names = ("x", "y", "z")

    def vector_field(self, t, y):
        x, yy, z = y
        return jnp.stack([-yy - z, x + self.a * yy, self.b + z * (x - self.c)])

    def initial_state(self):
        return jnp.array([1.0, 1.0, 0.0])


def _distinct(values, gap=0.01) -> int:
    """How many distinct finite values, telling apart those more than ``gap`` apart."""
    v = np.sort(values[np.isfinite(values)])
    return int(v.size > 0) + int(np.sum(np.diff(v) > gap))


def test_maxima_and_sections_of_a_harmonic_oscillator_are_its_amplitude():
    omegas, after, t1 = np.array([1.0, 2.0, 3.0]), 5.0, 30.0
    res = dl.sweep(Oscillator(), {"omega": omegas}, t1, dt=0.01, solver="rk4", n_save=301,
                   trajectories=False, observables={
                       "peaks": "maxima(x, after=5)", "low": "section(x, v=0, after=5, k=8)",
                       "top": "max(x, after=5)"})
    amplitude = np.hypot(1.0, 0.5 / omegas)
    phase = np.arctan2(-0.5 / omegas, 1.0)  # x = A cos(omega t + phase)
    peak_times = (2 * np.pi * np.arange(40)[None] - phase[:, None]) / omegas[:, None]
    counts = np.sum((peak_times >= after) & (peak_times <= t1), axis=1)  # 4, 8, 12
    peaks, low = res.observables["peaks"], res.observables["low"]
    assert peaks.shape == (3, 64) and low.shape == (3, 8)
    np.testing.assert_array_equal(np.isfinite(peaks).sum(axis=1), counts)
    for i, a in enumerate(amplitude):
        np.testing.assert_allclose(peaks[i, : counts[i]], a, rtol=5e-4)
        assert np.isnan(peaks[i, counts[i]:]).all()
        crossed = low[i][np.isfinite(low[i])]  # v = 0 upwards: x at its minimum, -A
        assert len(crossed) == min(counts[i], 8)
        np.testing.assert_allclose(crossed, -a, rtol=1e-4)
    np.testing.assert_allclose(res.observables["top"], amplitude, rtol=5e-4)


def test_the_hopf_cycle_has_maxima_sqrt_mu_and_a_zero_exponent():
    """Past the Hopf point the maxima of x are sqrt(mu) and lambda1 = 0; before it the
    origin is a stable focus with eigenvalues mu +- i, so lambda1 = mu and the maxima
    shrink by e^(2 pi mu) a turn."""
    mus = np.array([-0.5, -0.2, 0.25, 1.0, 2.25])
    res = dl.sweep(Hopf(), {"mu": mus}, 60.0, dt=0.01, solver="rk4", n_save=1201,
                   observables={"peaks": "maxima(x, after=40)", "lambda1": "lyapunov(100)"})
    peaks, lambda1 = res.observables["peaks"], res.observables["lambda1"]
    for i, mu in enumerate(mus):
        found = peaks[i][np.isfinite(peaks[i])]
        if mu > 0:
            assert len(found) == 3  # 20 time units of a cycle of period 2 pi
            np.testing.assert_allclose(found, np.sqrt(mu), rtol=1e-5)
        else:  # a linear spiral: each maximum e^(2 pi mu) times the one before
            assert len(found) == 3
            np.testing.assert_allclose(found[1:] / found[:-1], np.exp(2 * np.pi * mu), rtol=1e-4)
    np.testing.assert_allclose(lambda1[:2], mus[:2], atol=2e-3)
    np.testing.assert_allclose(lambda1[2:], 0.0, atol=0.02)


def test_rossler_doubles_its_period_on_the_way_to_chaos():
    """a = b = 0.2: c = 2.5, 3.5, 4 give cycles of 1, 2 and 4 loops; c = 5.7 is chaotic."""
    res = dl.sweep(Rossler(), {"c": np.array([2.5, 3.5, 4.0, 5.7])}, 600.0, dt=0.01,
                   solver="rk4", n_save=6001, trajectories=False,
                   observables={"peaks": "maxima(x, after=300)",
                                "crossings": "section(x, y=0, after=300)"})
    for name in ("peaks", "crossings"):
        values = res.observables[name]
        assert np.isfinite(values).sum(axis=1).min() > 40  # 300 time units of loops of ~6
        assert [_distinct(v) for v in values[:3]] == [1, 2, 4]
        assert _distinct(values[3]) > 20


def test_the_transient_is_left_out_of_named_reductions():
    ts_after, t1 = 1.0, 2.0
    res = dl.sweep(LORENZ(), {"rho": np.array([10.0, 28.0])}, t1, dt=1e-3, solver="rk4",
                   n_save=201, observables={
                       "x_max": "max(x, after=1)", "z_mean": "mean(z, after=1)",
                       "z_std": "std(z, after=1)", "x_min": "min(x,after=1.0)",
                       "x_amp": "amplitude(x, after=1)", "late": "max(x, after=5)",
                       "x_max_all": "max(x)"})
    late = np.asarray(res.ts) >= ts_after
    x, z = res.ys[:, late, 0], res.ys[:, late, 2]
    obs = res.observables
    np.testing.assert_allclose(obs["x_max"], x.max(axis=1), rtol=1e-14)
    np.testing.assert_allclose(obs["x_min"], x.min(axis=1), rtol=1e-14)
    assert np.isnan(obs["x_amp"]).all()  # a decaying and a chaotic x: no steady amplitude
    np.testing.assert_allclose(obs["z_mean"], z.mean(axis=1), rtol=1e-12)
    np.testing.assert_allclose(obs["z_std"], z.std(axis=1), rtol=1e-10)
    np.testing.assert_array_equal(obs["x_max_all"], res.ys[:, :, 0].max(axis=1))
    assert np.isnan(obs["late"]).all()  # no saved time after t = 5
    assert res.observable_specs["x_min"] == "min(x, after=1)"


def test_the_largest_exponent_maps_chaos_over_two_parameters():
    """Lorenz over (rho, sigma): the published 0.9056 at (28, 10); below rho = 1 the
    origin's largest eigenvalue; at rho = 10 that of the stable foci C+-."""
    rho, sigma, beta = np.array([0.5, 10.0, 28.0]), np.array([10.0, 12.0]), 8.0 / 3.0
    res = dl.sweep(LORENZ(), dl.grid(rho=rho, sigma=sigma), 40.0, dt=0.01, solver="rk4",
                   observables={"lambda1": dl.solvers.largest_lyapunov(200)})
    chaos = res.reshape(res.observables["lambda1"])
    assert res.observable_specs["lambda1"] == "lyapunov(200)"
    for j, s in enumerate(sigma):
        origin = (-(s + 1) + np.sqrt((s + 1) ** 2 - 4 * s * (1 - rho[0]))) / 2
        np.testing.assert_allclose(chaos[0, j], origin, atol=0.01)
        x = np.sqrt(beta * (rho[1] - 1))  # C+: x = y, z = rho - 1
        focus = np.linalg.eigvals([[-s, s, 0], [1, -1, -x], [x, x, -beta]]).real.max()
        np.testing.assert_allclose(chaos[1, j], focus, atol=0.02)
    assert chaos[2, 1] > 0.5
    np.testing.assert_allclose(chaos[2, 0], 0.9056, atol=0.05)
    spectrum = dl.lyapunov(LORENZ(), 200.0, transient=40.0)
    np.testing.assert_allclose(chaos[2, 0], spectrum.exponents[0], atol=0.05)


def _every_fiftieth_x(traj):
    return traj["x"][::50]


SPACE = dl.grid(rho=np.linspace(20.0, 30.0, 6), sigma=[10.0, 12.0])
OPTIONS = dict(dt=1e-3, solver="rk4", chunk_size=4, observables={
    "zmax": "maxima(z, after=1, k=8)", "x_max": "max(x)", "xs": _every_fiftieth_x})


class Stop(Exception):
    pass


def _stop_after_one(chunk):
    raise Stop


def test_vector_observables_are_streamed_resumed_and_read_back(tmp_path):
    out = tmp_path / "sweep.h5"
    whole = dl.sweep(LORENZ(), SPACE, 2.0, **OPTIONS)
    assert whole.observables["zmax"].shape == (12, 8) and whole.observables["xs"].shape == (12, 21)
    with pytest.raises(Stop):
        dl.sweep(LORENZ(), SPACE, 2.0, out=out, progress=_stop_after_one, **OPTIONS)
    res = dl.sweep(LORENZ(), SPACE, 2.0, out=out, **OPTIONS)
    assert res.stats["resumed"] == 4 and res.stats["computed"] == 8
    stored = dl.open(out).sweeps[0]
    for name, values in whole.observables.items():
        np.testing.assert_array_equal(res.observables[name], values)
        np.testing.assert_array_equal(np.asarray(stored.observables[name]), values)
    assert stored.observable_specs["zmax"] == "maxima(z, after=1, k=8)"
    with h5py.File(out, "r") as f:
        group = f["sweeps/sweep0"]
        assert group["zmax"].chunks[-1] == 8 and list(group["zmax_index"][:]) == list(range(8))
        assert group["x_max"].ndim == 2 and "x_max_index" not in group  # a number per point
    for engine in ("h5netcdf", "netcdf4"):
        with xr.open_dataset(out, engine=engine, group="sweeps/sweep0") as ds:
            assert ds["zmax"].dims == ("rho", "sigma", "zmax_index")  # on the grid's axes
            assert ds["x_max"].dims == ("rho", "sigma")
            np.testing.assert_array_equal(ds["xs"].values.reshape(12, -1), whole.observables["xs"])
    grid = stored.to_xarray()
    assert grid["zmax"].dims == ("rho", "sigma", "zmax_index")
    np.testing.assert_array_equal(grid["zmax"].values, whole.observables["zmax"].reshape(6, 2, 8))
    copy = tmp_path / "copy.h5"
    dl.io.save(copy, dl.open(out))  # a session saved again keeps them
    np.testing.assert_array_equal(np.asarray(dl.open(copy).sweeps[0].observables["zmax"]),
                                  whole.observables["zmax"])


def test_the_multi_process_index_holds_vector_observables(tmp_path, monkeypatch):
    out = tmp_path / "sweep.h5"
    whole = dl.sweep(LORENZ(), SPACE, 2.0, **OPTIONS)
    record = _sweep_output.record(dl.solvers.SweepJob(LORENZ(), SPACE, 2.0, **OPTIONS), {})
    shards = [(_sweep_store.shard_path(out, p, 2).name, first, count)
              for p, (first, count) in enumerate([(0, 8), (8, 4)])]
    _sweep_store.write_index(out, record, "sweep0", shards)
    for name, first, count in shards:  # what each process writes (here: from the whole)
        with _sweep_store.SweepStore.open(tmp_path / name, record.rows(first, count),
                                          name="sweep0") as store:
            for c in store.pending_chunks():
                local = store.writer.points(c)
                rows = slice(first + local.start, first + local.stop)
                store.write(c, y=whole.y[rows], result=whole.result[rows], steps=whole.steps[rows],
                            observables={k: v[rows] for k, v in whole.observables.items()})
    monkeypatch.chdir(tmp_path)
    with xr.open_dataset(out, engine="h5netcdf", group="sweeps/sweep0") as ds:
        np.testing.assert_array_equal(ds["zmax"].values, whole.observables["zmax"])
    _sweep_store.consolidate(out, record, "sweep0", shards)
    stored = dl.open(out).sweeps[0]
    np.testing.assert_array_equal(np.asarray(stored.observables["zmax"]), whole.observables["zmax"])


CONFIG = """\
model = "{model}"

[solve]
solver = "rk4"
t1 = 300.0
dt = 0.01
n_save = 3001

[space.grid]
c = [2.5, 3.5]

[output]
trajectories = false

[output.observables]
peaks = "maxima(x, after=150, k=16)"
lambda1 = "lyapunov(50)"
"""


def test_the_command_line_sweeps_an_orbit_diagram(tmp_path):
    config = tmp_path / "orbit.toml"
    config.write_text(CONFIG.format(model=ROSSLER_FILE))
    out = tmp_path / "orbit.h5"
    assert main(["sweep", str(config), "--out", str(out)]) == 0
    with xr.open_dataset(out, engine="h5netcdf", group="sweeps/sweep0") as ds:
        assert ds["peaks"].dims == ("c", "peaks_index") and ds["peaks"].shape == (2, 16)
        assert [_distinct(v) for v in ds["peaks"].values] == [1, 2]
        assert np.abs(ds["lambda1"].values).max() < 0.03  # two cycles


@pytest.mark.parametrize("spec, match", [
    ("median(x)", "REDUCTION"),
    ("max(q)", "no state 'q'"),
    ("max(x, before=3)", "unknown option 'before'"),
    ("max(x, after=soon)", "after must be a number"),
    ("maxima(x, k=0)", "k must be a whole number"),
    ("maxima(x, after=1, after=2)", "given twice"),
    ("maxima(after=1, x)", "must come before"),
    ("section(x, after=3)", "STATE=LEVEL"),
    ("section(x, q=0)", "STATE=LEVEL"),
    ("lyapunov()", "cannot read"),
    ("lyapunov(-1)", "t must be a positive number"),
    ("lyapunov(10, every=0)", "every must be"),
])
def test_bad_specs_say_what_is_wrong(spec, match):
    with pytest.raises(ValueError, match=match):
        dl.solvers.resolve_observables({"o": spec}, ("x", "y", "z"))


def test_specs_have_one_written_form():
    def written(spec):
        (_, fn), = dl.solvers.resolve_observables({"o": spec}, ("x", "y", "z"))
        return fn

    assert written("max( x , after = 50.0 )") == written("max(x, after=50)")
    assert dl.solvers.describe_observable(written("maxima(x, k=64)")) == "maxima(x)"
    assert dl.solvers.describe_observable(written("section(x,y=0.5,after=1e-3)")) == \
        "section(x, y=0.5, after=0.001)"
    assert written("lyapunov(t=200, dt=0.01)") == dl.solvers.largest_lyapunov(200.0)
    assert hash(written("lyapunov(200)")) == hash(dl.solvers.largest_lyapunov(200))
    assert dl.solvers.describe_observable(written("max(x)")) == "max(x)"
