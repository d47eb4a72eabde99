"""Events located inside solver steps, their derivatives, and Poincare sections.

Truths: the harmonic oscillator's zero crossings at ``(k + 1/2) pi / omega``, a falling
body landing at ``sqrt(2 h / g)``, the pendulum's quarter period ``K(sin^2(theta0/2)) /
omega0``, derivatives of those closed forms and finite differences, and the Hopf normal
form's limit cycle of radius ``sqrt(mu)`` and period ``2 pi / omega``.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.special import ellipk

import difflab as dl
from tests.models_for_tests import Noisy, Spring

UNDAMPED = Spring(k=1.0, c=0.0)  # x = cos t, v = -sin t
OSCILLATOR_EVENTS = (dl.Event("x", direction=-1, name="down"),
                     dl.Event("x", direction=1, name="up"),
                     dl.Event("v", max_events=2))
GROUND = dl.Event("h", direction=-1, terminal=True, name="ground")


class Falling(dl.Model):
    """A body dropped from ``h0`` at rest: ``h = h0 - g t^2 / 2``."""

    g: float = 9.81
    h0: float = 10.0
    state_names = ("h", "v")

    def vector_field(self, t, y):
        return jnp.stack([y[1], -self.g * jnp.ones_like(y[0])])

    def initial_state(self):
        return jnp.stack([self.h0 * jnp.ones(()), jnp.zeros(())])


class Hopf(dl.Model):
    """The Hopf normal form: a stable limit cycle of radius ``sqrt(mu)``, period ``2 pi / omega``."""

    mu: float = 0.5
    omega: float = 2.0
    state_names = ("x", "y")

    def vector_field(self, t, z):
        x, y = z
        r2 = x * x + y * y
        return jnp.stack([self.mu * x - self.omega * y - x * r2,
                          self.omega * x + self.mu * y - y * r2])

    def initial_state(self):
        return jnp.array([0.1, 0.0])


def _oscillator(**solve):
    with pytest.warns(UserWarning, match="'v' crossed 3 times but keeps 2"):
        return dl.simulate(UNDAMPED, 10.0, events=OSCILLATOR_EVENTS, **solve)


@pytest.mark.parametrize("solve, tol", [(dict(dt=1e-2), 1e-9),
                                        (dict(solver="tsit5", rtol=1e-10, atol=1e-12), 1e-10)])
def test_oscillator_crossings_are_located_inside_steps(solve, tol):
    events = _oscillator(**solve).events
    np.testing.assert_allclose(events.ts_of("down"), [np.pi / 2, 5 * np.pi / 2], atol=tol)
    np.testing.assert_allclose(events.ts_of("up"), [3 * np.pi / 2], atol=tol)
    np.testing.assert_allclose(events.ts_of("v"), [np.pi, 2 * np.pi], atol=tol)
    np.testing.assert_allclose(events.ys_of("down"), [[0, -1], [0, -1]], atol=tol)
    np.testing.assert_allclose(events.ys_of("up"), [[0, 1]], atol=tol)
    kept = np.asarray(events.ts)[: events.count]
    assert np.all(np.diff(kept) > 0) and events.count == 5  # merged, in time order
    assert list(np.asarray(events.which)[:5]) == [0, 2, 1, 2, 0]
    assert np.isnan(np.asarray(events.ts)[5:]).all() and (np.asarray(events.which)[5:] == -1).all()


def test_a_full_capacity_is_reported_not_silent():
    events = _oscillator(dt=1e-2).events
    assert events.overflowed == ("v",)
    assert list(np.asarray(events.found)) == [2, 1, 3] and events.capacity == (100, 100, 2)


def test_rerun_repeats_the_events():
    first = _oscillator(dt=1e-2)
    with pytest.warns(UserWarning, match="max_events"):
        again = first.rerun()
    np.testing.assert_array_equal(again.events.ts, first.events.ts)
    assert first.rerun(events=None).events is None


@pytest.mark.parametrize("solve", [dict(dt=1e-2), dict(solver="kvaerno5", rtol=1e-10,
                                                       atol=1e-12)])
def test_a_terminal_event_stops_the_run_where_the_body_lands(solve):
    run = dl.simulate(Falling(), 3.0, n_save=31, events=GROUND, **solve)
    landing = np.sqrt(2 * 10.0 / 9.81)
    assert run.ok and run.events.stopped == "ground"
    assert run.message.startswith("success (stopped by event 'ground' at t = 1.42784")
    np.testing.assert_allclose(run.events.ts_of("ground"), [landing], rtol=1e-12)
    np.testing.assert_allclose(run.events.ys_of("ground"), [[0, -9.81 * landing]], atol=1e-11)
    assert float(run.stats["t_reached"]) == pytest.approx(landing, rel=1e-12)
    after = np.asarray(run.ts) > landing
    assert np.isnan(np.asarray(run.ys)[after]).all() and np.isfinite(np.asarray(run.ys)[~after]).all()


def test_leapfrog_locates_on_its_own_step():
    pendulum = dl.models.get("pendulum")()  # theta0 = 1, g / L = 9.81
    run = dl.simulate(pendulum, 1.0, solver="leapfrog", dt=1e-3,
                      events=dl.Event("theta", direction=-1))
    quarter = ellipk(np.sin(0.5) ** 2) / np.sqrt(9.81)
    np.testing.assert_allclose(run.events.ts_of("theta"), [quarter], atol=1e-6)


def test_the_landing_time_is_differentiated_exactly():
    def landing(model):
        return dl.simulate(model, 3.0, dt=1e-2, n_save=31, events=GROUND).events.ts[0]

    grad = jax.grad(landing)(Falling(g=9.81, h0=10.0))
    # t = sqrt(2 h0 / g): dt/dg = -t / (2 g), dt/dh0 = t / (2 h0)
    t = np.sqrt(2 * 10.0 / 9.81)
    np.testing.assert_allclose([grad.g, grad.h0], [-t / (2 * 9.81), t / 20.0], rtol=1e-10)


def test_an_adaptive_crossing_time_is_differentiated_exactly():
    def first_crossing(k):
        run = dl.simulate(Spring(k=k, c=0.0), 3.0, solver="tsit5", rtol=1e-10, atol=1e-12,
                          n_save=2, events=dl.Event("x"))
        return run.events.ts[0]

    # t = pi / (2 sqrt(k)): dt/dk = -pi / (4 k^1.5)
    assert float(jax.grad(first_crossing)(2.0)) == pytest.approx(-np.pi / 4 * 2.0**-1.5,
                                                                 rel=1e-8)


def test_a_poincare_section_of_a_limit_cycle_lands_on_the_cycle():
    section = dl.poincare(Hopf(), "y", 10.0, transient=20.0, solver="rk4", dt=1e-2)
    assert section.found == len(section.ts) == 3  # period pi; the transient ends at 2 pi k
    np.testing.assert_allclose(section["x"], np.sqrt(0.5), atol=1e-8)
    np.testing.assert_allclose(section["y"], 0.0, atol=1e-12)
    np.testing.assert_allclose(section.return_times, np.pi, atol=1e-8)
    assert section.ts[0] > 20.0 and section.to_dict()["section"] == "y = 0"


def test_a_rotation_crosses_its_section_at_one_point():
    down = dl.Event("x", direction=-1, name="down")
    section = dl.poincare(UNDAMPED, down, 20.0, solver="rk4", dt=1e-2)
    np.testing.assert_allclose(section.ys, [[0.0, -1.0]] * 3, atol=1e-9)
    np.testing.assert_allclose(section.return_times, 2 * np.pi, atol=1e-8)
    assert section.to_dict()["states"]["v"] == pytest.approx([-1.0] * 3)


@pytest.mark.parametrize("events, error", [
    (dl.Event("q"), "event 'q': no such state; the states are x, v"),
    ((dl.Event("x"), dl.Event("v", name="x")), "two events are named 'x'"),
    (dl.Event(lambda t, y: y), "the condition must return a scalar, not an array of shape"),
    ((), "events is empty"),
])
def test_bad_events_are_refused_before_the_run(events, error):
    with pytest.raises(ValueError, match=error):
        dl.simulate(UNDAMPED, 1.0, events=events)


def test_events_need_a_deterministic_run_and_forward_sensitivities():
    with pytest.raises(ValueError, match="deterministic runs only"):
        dl.simulate(Noisy(), 1.0, key=jax.random.key(0), events=dl.Event("x"))
    with pytest.raises(ValueError, match="adjoint='forward' or 'auto'"):
        dl.simulate(UNDAMPED, 1.0, adjoint="reverse", events=dl.Event("x"))
    with pytest.raises(ValueError, match="direction must be -1, 0 or \\+1"):
        dl.Event("x", direction=2)
    with pytest.raises(ValueError, match="max_events must be a whole number >= 1"):
        dl.Event("x", max_events=0)
    with pytest.raises(TypeError, match="events must be an Event or a sequence"):
        dl.simulate(UNDAMPED, 1.0, events="x")
