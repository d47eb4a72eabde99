"""Stiff problems (issue 15): the first step, what a failure says, accepted and rejected
steps, a tolerance per state, unstable fixed steps, and choosing solvers and controllers."""

import re

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difflab as dl

# white-box: counts traces of the integrator's Plan.run to check that nothing recompiles
from difflab.solvers._steppers import integrate as integrate_module
from tests.models_for_tests import VDPOL_T2, Decay, Rod, Spring, VanDerPol


def heat_exact(heat, t):
    """The rod from sin(pi x): its grid's slowest eigenvector, so the semi-discrete solution
    is ``sin(pi x) exp(-lambda_1 t)`` with ``lambda_1 = 4 D / dx^2 sin^2(pi dx / 2)``."""
    dx, d = heat.dx, float(heat.D)
    lam = 4.0 * d / dx**2 * np.sin(np.pi * dx / 2.0) ** 2
    return np.sin(np.pi * heat.grid()) * np.exp(-lam * t)


def heat_fastest(heat):
    """The rod's stiffest eigenvalue (magnitude): ``4 D / dx^2 sin^2(n pi / (2 (n + 1)))``."""
    return 4.0 * float(heat.D) / heat.dx**2 * np.sin(heat.n * np.pi / (2 * (heat.n + 1))) ** 2


# -- the first step and what a failure says -------------------------------------------


@pytest.mark.slow
def test_stiff_van_der_pol_solves_from_the_default_first_step_and_from_a_large_one():
    # Before: diffrax's own first step was 0.01 (its algorithm is skipped for wrapped
    # terms), the candidate went infinite, the step size NaN, and every one of max_steps
    # steps was rejected. Any dt up to 1e-4 worked; now the default and 0.01 do too.
    # The global error is a few times rtol (1e-6), as tolerance proportionality gives.
    for dt in (None, 0.01):
        traj = dl.simulate(VanDerPol(), 2.0, solver="kvaerno5", dt=dt, n_save=2)
        np.testing.assert_allclose(traj.final, VDPOL_T2, rtol=5e-6)
        assert 200 < int(traj.accepted_steps) < 20_000
        assert 0 < int(traj.rejected_steps) < int(traj.accepted_steps)


def test_running_out_of_steps_says_what_happened_and_what_would_help():
    traj = dl.simulate(VanDerPol(), 2.0, solver="kvaerno5", n_save=2, max_steps=50,
                       throw=False)
    assert traj.result == dl.Result.MAX_STEPS_REACHED
    accepted, rejected = int(traj.accepted_steps), int(traj.rejected_steps)
    assert accepted + rejected == int(traj.steps) == 50
    assert accepted > 40  # before: none of the 50 was accepted
    t, dt = float(traj.stats["t_reached"]), float(traj.stats["dt_reached"])
    assert 0 < t < 2 and 0 < dt < 2
    assert f"({accepted} accepted, {rejected} rejected)" in traj.message
    assert f"stopped at t = {t:.6g} (t1 = 2) with step size {dt:.3g}" in traj.message
    needed = int(re.search(r"about ([\d,]+) steps are needed", traj.message)[1].replace(",", ""))
    assert needed == pytest.approx(50 * 2 / t, rel=1e-3)
    assert "raise max_steps" in traj.message
    with pytest.raises(dl.SimulationError, match=r"\(\d+ accepted, \d+ rejected\)"):
        dl.simulate(VanDerPol(), 2.0, solver="kvaerno5", n_save=2, max_steps=50)


def test_an_explicit_solver_that_cannot_start_is_told_to_use_a_stiff_one():
    traj = dl.simulate(VanDerPol(), 2.0, solver="tsit5", dt=1.0, n_save=2, max_steps=4,
                       throw=False)
    assert int(traj.accepted_steps) == 0 and int(traj.rejected_steps) == 4
    assert "no step was accepted, so the problem is probably stiff: use solver='kvaerno5'" \
        in traj.message
    # each rejection cuts the step by diffrax's smallest factor, 0.2
    assert float(traj.stats["dt_reached"]) == pytest.approx(0.2**4)


# -- accepted and rejected steps ------------------------------------------------------


def test_steps_are_accepted_plus_rejected_as_diffrax_counts_them():
    model, dt0, rtol, atol = VanDerPol(eps=1e-3), 1e-3, 1e-6, 1e-9
    traj = dl.simulate(model, 1.0, solver="tsit5", dt=dt0, rtol=rtol, atol=atol, n_save=2)
    sol = diffrax.diffeqsolve(
        diffrax.ODETerm(lambda t, y, args: model.vector_field(t, y)), diffrax.Tsit5(), 0.0,
        1.0, dt0, model.initial_state(), max_steps=100_000,
        stepsize_controller=diffrax.PIDController(rtol=rtol, atol=atol, pcoeff=0.4, icoeff=1.0))
    assert int(traj.accepted_steps) == int(sol.stats["num_accepted_steps"])
    assert int(traj.rejected_steps) == int(sol.stats["num_rejected_steps"]) > 0
    assert int(traj.steps) == int(sol.stats["num_steps"])
    fixed = dl.simulate(Decay(), 1.0, dt=1e-3, n_save=11)
    assert (int(fixed.accepted_steps), int(fixed.rejected_steps), int(fixed.steps)) == \
        (1000, 0, 1000)


# -- atol per state -------------------------------------------------------------------


class TwoScales(dl.Model):
    """``u' = -u`` from 1 beside a fast ``w' = -50 w`` from 1e-10 (a trace species)."""

    state_names = ("u", "w")

    def vector_field(self, t, y):
        return jnp.array([-1.0, -50.0]) * y

    def initial_state(self):
        return jnp.array([1.0, 1e-10])


def test_an_atol_per_state_resolves_a_tiny_state_one_atol_cannot():
    exact_w = 1e-10 * np.exp(-50.0 * 0.3)
    run = lambda atol: dl.simulate(TwoScales(), 0.3, solver="tsit5", rtol=1e-8, atol=atol,
                                   n_save=2)
    one = run(1e-8)
    per_state = run(jnp.array([1e-8, 1e-22]))
    assert abs(float(one.final[1]) / exact_w - 1) > 1.0  # w is below atol: uncontrolled
    assert abs(float(per_state.final[1]) / exact_w - 1) < 1e-5
    np.testing.assert_allclose(per_state.final[0], np.exp(-0.3), rtol=1e-8)
    assert per_state.settings.atol == (1e-8, 1e-22)
    again = dl.simulate(TwoScales(), settings=per_state.settings)  # a tuple is accepted too
    np.testing.assert_array_equal(again.ys, per_state.ys)


def test_an_atol_of_the_wrong_shape_or_sign_is_refused_before_tracing():
    with pytest.raises(ValueError, match=r"atol must be a number or one per state \(2 for "
                                         r"TwoScales\), not an array of shape \(3,\)"):
        dl.simulate(TwoScales(), 1.0, solver="tsit5", atol=jnp.ones(3))
    with pytest.raises(ValueError, match="atol must be positive"):
        dl.simulate(TwoScales(), 1.0, solver="tsit5", atol=[1e-8, -1.0])


def test_changing_per_state_atol_values_never_recompiles(monkeypatch):
    class Fresh(TwoScales):  # a class no other test has compiled
        pass

    count = {"n": 0}
    run = integrate_module.Plan.run

    def counting_run(self, args):
        count["n"] += 1
        return run(self, args)

    monkeypatch.setattr(integrate_module.Plan, "run", counting_run)
    for atol in ([1e-8, 1e-12], [1e-6, 1e-20], np.array([1e-9, 1e-9])):
        dl.simulate(Fresh(), 0.3, solver="tsit5", atol=jnp.asarray(atol), n_save=2)
    assert count["n"] == 1


# -- unstable fixed steps -------------------------------------------------------------


@pytest.mark.parametrize("solver, dt, t1", [("rk4", 0.05, 1.0), ("euler", 0.3, 3.0)])
def test_a_fixed_step_outside_the_stability_region_fails_and_names_what_works(solver, dt, t1):
    heat = Rod()
    traj = dl.simulate(heat, t1, solver=solver, dt=dt, throw=False)
    # before: success, with u0 = -1.4e90 (rk4) where the solution is about 0.023
    assert traj.result == dl.Result.UNSTABLE and not traj.ok
    assert "solver='kvaerno5'" in traj.message
    suggested = float(re.search(r"dt <= ([0-9.e-]+)", traj.message)[1])
    good = dl.simulate(heat, t1, solver=solver, dt=suggested)
    np.testing.assert_allclose(good.final, heat_exact(heat, t1), rtol=5e-3)  # Euler: O(dt)
    with pytest.raises(dl.SimulationError, match="outside .* stability region"):
        dl.simulate(heat, t1, solver=solver, dt=dt)


@pytest.mark.parametrize("solver, radius", [("euler", 2.0), ("heun", 2.0), ("rk4", 2.785)])
def test_the_stability_limit_matches_the_analytic_eigenvalue(solver, radius):
    heat = Rod()
    traj = dl.simulate(heat, 0.01, solver=solver, dt=1e-4, n_save=2)
    assert float(traj.stats["dt_stable"]) == pytest.approx(radius / heat_fastest(heat), rel=0.05)


def test_leapfrog_is_limited_by_the_frequency_and_growth_is_not_instability():
    pendulum = dl.models.get("pendulum")(theta0=0.01)  # omega = sqrt(g / length): omega dt < 2
    omega = float(np.sqrt(pendulum.g / pendulum.length))
    run = lambda dt: dl.simulate(pendulum, 10 * dt, solver="leapfrog", dt=dt, throw=False)
    ok, bad = run(1.9 / omega), run(2.1 / omega)
    assert ok.ok and bad.result == dl.Result.UNSTABLE
    # u' = 100 u: the solution itself grows; Euler's dt is no less "stable" for it
    grow = dl.simulate(Decay(rate=-100.0), 0.5, solver="euler", dt=0.05)
    assert grow.ok and float(grow.final[0]) == pytest.approx(6.0**10)


def test_the_stability_check_leaves_grad_and_vmap_alone():
    heat = Rod(n=10)
    t1, dt = 0.5, 1e-2  # stable up to D ~ 5.8 for rk4

    def u0(d, adjoint="auto"):
        return dl.simulate(heat.replace(D=d), t1, solver="rk4", dt=dt, n_save=2,
                           adjoint=adjoint).final[0]

    lam = 4.0 / heat.dx**2 * np.sin(np.pi * heat.dx / 2.0) ** 2  # lambda_1 / D
    expected = -t1 * lam * np.sin(np.pi * heat.dx) * np.exp(-lam * 0.1 * t1)
    for adjoint in ("forward", "reverse"):
        assert float(jax.grad(u0)(0.1, adjoint)) == pytest.approx(expected, rel=1e-4)
    codes = jax.vmap(lambda d: dl.simulate(heat.replace(D=d), t1, solver="rk4", dt=dt,
                                           throw=False).result)(jnp.array([0.1, 10.0]))
    np.testing.assert_array_equal(codes, [dl.Result.SUCCESS, dl.Result.UNSTABLE])


def test_a_streamed_run_fails_as_unstable_too():
    heat = Rod(n=10)
    chunks = list(dl.stream(heat.replace(D=10.0), 0.5, solver="rk4", dt=1e-2, chunk_size=10,
                            throw=False))
    assert chunks[-1].result == dl.Result.UNSTABLE


# -- choosing solvers and step controllers --------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("name", ["kvaerno3", "kvaerno4"])
def test_the_other_kvaerno_solvers_solve_stiff_van_der_pol(name):
    traj = dl.simulate(VanDerPol(), 2.0, solver=name, n_save=2, rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(traj.final, VDPOL_T2, rtol=1e-5)
    assert traj.settings.solver == name


@pytest.mark.slow
@pytest.mark.parametrize("name", ["bosh3", "ralston", "dopri5"])
def test_the_explicit_adaptive_solvers_by_name_are_accurate(name):
    traj = dl.simulate(Spring(c=0.0), 3.0, solver=name, rtol=1e-8, atol=1e-10, n_save=2)
    np.testing.assert_allclose(traj.final, [np.cos(3.0), -np.sin(3.0)], atol=1e-6)


def test_a_diffrax_solver_object_runs_and_is_recorded_by_its_name():
    by_object = dl.simulate(Spring(c=0.0), 3.0, solver=diffrax.Kvaerno3(), n_save=2)
    by_name = dl.simulate(Spring(c=0.0), 3.0, solver="kvaerno3", n_save=2)
    assert by_object.settings.solver == "kvaerno3"
    np.testing.assert_allclose(by_object.final, by_name.final, rtol=1e-12)
    np.testing.assert_allclose(by_object.final, [np.cos(3.0), -np.sin(3.0)], atol=1e-5)


def test_a_step_controller_object_is_used_with_simulates_tolerances():
    # dtmax = 0.01 over 3 time units: at least 300 steps, though the tolerances are loose
    controller = diffrax.PIDController(rtol=1.0, atol=1.0, dtmax=0.01, pcoeff=0.3, icoeff=0.4)
    solver = dl.solvers.Adaptive(diffrax.Tsit5(), controller=controller)
    traj = dl.simulate(Spring(c=0.0), 3.0, solver=solver, rtol=1e-3, atol=1e-3, n_save=2)
    assert int(traj.accepted_steps) >= 300
    # the controller's rtol = atol = 1 are replaced by simulate's (here 1e-12)
    free = dl.solvers.Adaptive(diffrax.Tsit5(), controller=eqx.tree_at(
        lambda c: c.dtmax, controller, None, is_leaf=lambda x: x is None))
    tight = dl.simulate(Spring(c=0.0), 3.0, solver=free, rtol=1e-12, atol=1e-12, n_save=2)
    np.testing.assert_allclose(tight.final, [np.cos(3.0), -np.sin(3.0)], atol=1e-10)


@pytest.mark.parametrize("make, match", [
    (lambda: dl.solvers.Adaptive(diffrax.Euler()), "Euler has no error estimate"),
    (lambda: dl.solvers.Adaptive(diffrax.KenCarp4()), "KenCarp4 is an IMEX solver"),
    (lambda: dl.solvers.Adaptive(diffrax.Tsit5(), controller=diffrax.ConstantStepSize()),
     "controller must be a diffrax adaptive step-size controller"),
    (lambda: dl.solvers.Adaptive(diffrax.Tsit5(), controller=diffrax.PIDController(
        rtol=1e-6, atol=1e-9, jump_ts=[1.0])), "holding arrays"),
    (lambda: dl.simulate(Spring(), 1.0, solver=diffrax.Euler()), "Euler has no error"),
])
def test_a_solver_or_controller_that_cannot_work_is_refused_by_name(make, match):
    with pytest.raises(TypeError, match=match):
        make()
