"""Events on field runs, against the closed form of diffusion: a sine mode on a periodic
grid keeps its shape and decays as exp(-D k^2 t), so max(u) = exp(-D k^2 t) exactly (the
grid holds the crest) and every level is crossed at a known time."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difflab as dl
from difflab.models import Diffusion, Grid
from difflab.solvers import simulate_fields
from difflab.solvers._steppers.etdrk import ETDRK4


LEVEL = 0.5


@pytest.fixture(scope="module")
def model():
    return Diffusion(D=0.01, grid=Grid(((0.0, 1.0),), (32,)))


def level_time(model, level=LEVEL):
    return np.log(1 / level) / model.decay_rate()


def crest(t, f):
    return f["u"].max() - LEVEL


W = 2 * np.pi  # cos(W t) max(u) is zero where cos is: downward at (2k + 1/2) pi / W


def wave(t, f):
    return jnp.cos(W * t) * f["u"].max()


@pytest.fixture(scope="module")
def watched(model):
    """One etdrk4 run watching a level of the crest and the zeros of ``wave``."""
    events = [dl.Event(crest, direction=-1, name="half"),
              dl.Event(wave, direction=-1, name="down"), dl.Event(wave, direction=1, name="up"),
              dl.Event(wave, name="both")]
    return dl.simulate(model, 3.0, dt=0.1, events=events)


def check_level_crossing(model, traj, tol):
    times = traj.events.ts_of("half")
    assert times.shape == (1,)
    assert abs(times[0] - level_time(model)) < tol
    assert traj.stopped is None and np.isfinite(np.asarray(traj["u"])).all()
    at = traj.events.fields_of("half")["u"][0]  # the field at the crossing: the mode there
    np.testing.assert_allclose(at, model.exact(times[0])["u"], atol=1e-9)


def test_a_level_is_crossed_at_the_closed_form_time(model, watched):
    check_level_crossing(model, watched, 1e-12)  # etdrk4 steps diffusion exactly


def test_an_explicit_stepper_locates_to_its_accuracy(model):
    traj = dl.simulate(model, 3.0, dt=0.02, solver="rk4",
                       events=dl.Event(crest, direction=-1, name="half"))
    check_level_crossing(model, traj, 1e-9)


def test_a_terminal_event_ends_the_run_at_the_crossing(model):
    traj = dl.simulate(model, 3.0, dt=0.1, n_save=31,
                       events=dl.Event(crest, direction=-1, terminal=True, name="half"))
    t_stop = level_time(model)
    assert traj.ok and traj.stopped == "half"
    assert abs(traj.events.t_stop - t_stop) < 1e-12
    u, ts = np.asarray(traj["u"]), np.asarray(traj.ts)
    assert np.isnan(u[ts > t_stop]).all()
    np.testing.assert_allclose(u[ts <= t_stop], model.exact(ts[ts <= t_stop])["u"], atol=1e-12)
    assert "stopped by 'half'" in repr(traj)


def test_direction_picks_upward_or_downward_crossings(watched):
    down = (np.arange(3) * 2 + 0.5) * np.pi / W
    up = (np.arange(3) * 2 + 1.5) * np.pi / W
    np.testing.assert_allclose(watched.events.ts_of("down"), down, atol=1e-12)
    np.testing.assert_allclose(watched.events.ts_of("up"), up, atol=1e-12)
    np.testing.assert_allclose(watched.events.ts_of("both"), np.sort([*down, *up]), atol=1e-12)
    assert watched.events.to_dict()["found"] == {"half": 1, "down": 3, "up": 3, "both": 6}


@pytest.mark.slow
def test_an_adaptive_run_locates_on_its_own_step(model):
    traj = dl.simulate(model, 3.0, solver="tsit5", rtol=1e-8, atol=1e-10,
                       events=dl.Event(crest, terminal=True))
    assert abs(traj.events.t_stop - level_time(model)) < 1e-7
    assert traj.ok and traj.stopped == "event0"


@pytest.mark.slow
def test_event_times_under_vmap_and_their_derivative(model):
    event = dl.Event(crest, direction=-1, terminal=True)

    def t_half(D):
        traj = dl.simulate(model.replace(D=D), 3.0, dt=0.1, events=event, throw=False)
        return traj.events.ts[0]

    Ds = jnp.array([0.01, 0.02, 0.03])
    k2 = model.decay_rate() / model.D
    np.testing.assert_allclose(jax.vmap(t_half)(Ds), np.log(2) / (Ds * k2), rtol=1e-12)
    exact = -np.log(2) / (0.01 ** 2 * k2)  # d/dD of ln 2 / (D k^2)
    np.testing.assert_allclose(jax.grad(t_half)(0.01), exact, rtol=1e-9)


@pytest.mark.parametrize("event, words", [
    (dl.Event("u"), "a field is not a scalar"),
    (dl.Event(lambda t, f: f["u"] - 0.5), "must return a scalar"),
    (dl.Event(lambda t, f: f["v"].max()), "no field 'v'"),
    ([dl.Event(crest, name="a"), dl.Event(crest, name="a")], "two events are named 'a'"),
])
def test_bad_events_are_refused_in_one_line(model, event, words):
    with pytest.raises(ValueError, match=words) as error:
        dl.simulate(model, 1.0, dt=0.1, events=event)
    assert "\n" not in str(error.value)


def test_events_need_a_named_stepper(model):
    with pytest.raises(ValueError, match="solver given by name") as error:
        simulate_fields(model, 1.0, dt=0.1, solver=ETDRK4(model.linear_part(), 0.1),
                        events=dl.Event(crest))
    assert "\n" not in str(error.value)


def test_an_imex_run_locates_on_its_implicit_euler_step(model):
    # imex_euler takes diffusion by implicit Euler: u_n = (1 + h lam)^-n, and a step of
    # theta from u_n gives u_n / (1 + theta lam); the crossing is where that is LEVEL
    h, lam = 0.1, model.decay_rate()
    n = int(np.floor(np.log(1 / LEVEL) / np.log(1 + h * lam)))
    theta = ((1 + h * lam) ** -n / LEVEL - 1) / lam
    traj = dl.simulate(model, 3.0, dt=h, solver="imex_euler", events=dl.Event(crest))
    assert abs(traj.events.ts_of("event0")[0] - (n * h + theta)) < 1e-10


def test_events_keeping_too_many_fields_are_refused_before_the_run(monkeypatch):
    monkeypatch.setenv("DIFFLAB_MEMORY_LIMIT", "32MB")  # 1000 frames of 64x64 kept 3 times: 98 MB
    square = Diffusion(grid=Grid(((0.0, 1.0), (0.0, 1.0)), (64, 64)))
    with pytest.raises(ValueError, match="crossings of the events .* smaller max_events"):
        dl.simulate(square, 1.0, n_save=11, events=dl.Event(crest, max_events=1000))


def test_a_terminal_crossing_drops_the_later_crossings_of_its_step(model):
    # levels 0.502, 0.5, 0.498 are crossed at 1.7456, 1.7558, 1.7659: all in [1.7, 1.8]
    def level(value):
        return lambda t, f: f["u"].max() - value

    events = [dl.Event(level(0.5), terminal=True, name="half"),
              dl.Event(level(0.502), name="before"),
              dl.Event(level(0.498), terminal=True, name="after")]
    traj = dl.simulate(model, 3.0, dt=0.1, events=events)
    assert traj.stopped == "half"
    assert abs(traj.events.ts_of("before")[0] - level_time(model, 0.502)) < 1e-12
    assert traj.events.ts_of("after").size == 0
    assert traj.events.to_dict()["found"] == {"half": 1, "before": 1, "after": 0}


@pytest.mark.slow
def test_on_burgers_the_event_time_converges_at_the_steppers_order():
    # Cole-Hopf: the grid mean of u^2 of the closed form at T is the level; the located
    # time errs by etdrk4's error, falling 16-fold when dt halves
    burgers = dl.models.get("burgers")(nu=0.1, a=0.5, grid=Grid(((0.0, 2 * np.pi),), (64,)))
    T = 2.5
    level = float(jnp.mean(burgers.exact(T)["u"] ** 2))
    energy = dl.Event(lambda t, f: jnp.mean(f["u"] ** 2) - level, direction=-1)
    errors = [abs(float(dl.simulate(burgers, 4.0, dt=dt, n_save=2, events=energy).events.ts[0])
                  - T) for dt in (0.3, 0.15)]
    assert errors[1] < 1e-8
    assert 12 < errors[0] / errors[1] < 20
