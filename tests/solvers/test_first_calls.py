"""What a first call costs: the traces a derivative shares, and programs compiled quickly."""

import collections

import diffrax
import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import jaxpr_as_fun, subjaxprs

import difflab as dl
from difflab.solvers._host_checks import strip_closed
from tests.models_for_tests import Decay


def _counting_diffeqsolve(monkeypatch) -> list:
    calls = []
    solve = diffrax.diffeqsolve

    def counted(*args, **kwargs):
        calls.append(type(args[1]).__name__)
        return solve(*args, **kwargs)

    monkeypatch.setattr(diffrax, "diffeqsolve", counted)
    return calls


def test_a_gradient_through_an_adaptive_solve_traces_diffrax_once(monkeypatch):
    calls = _counting_diffeqsolve(monkeypatch)
    model = dl.models.get("lorenz")()

    def final_x(rho):  # a tolerance no other test uses: a trace of its own
        return dl.simulate(model.replace(rho=rho), 0.5, solver="tsit5", n_save=11,
                           rtol=3.1e-7).ys[-1, 0]

    grad = jax.grad(final_x)(28.0)
    assert calls == ["Tsit5"]  # the derivative rule reuses the primal's trace
    step = 1e-5
    fd = (final_x(28.0 + step) - final_x(28.0 - step)) / (2 * step)
    np.testing.assert_allclose(grad, fd, rtol=1e-4)


def test_a_trace_is_not_shared_between_different_models(monkeypatch):
    calls = _counting_diffeqsolve(monkeypatch)
    for name in ("van_der_pol", "fitzhugh_nagumo"):
        dl.simulate(dl.models.get(name)(), 0.7, solver="dopri5", n_save=13)
    assert calls == ["Dopri5", "Dopri5"]
    again = dl.simulate(dl.models.get("van_der_pol")(mu=2.5), 0.7, solver="dopri5", n_save=13)
    assert calls == ["Dopri5", "Dopri5"]  # new values: neither traced nor compiled again
    assert again.ok


def test_a_quickly_compiled_run_equals_the_optimized_one():
    model = dl.models.get("lorenz")()
    for solver in ("rk4", "tsit5"):
        quick = dl.simulate(model, 3.0, solver=solver, optimize=False)
        full = dl.simulate(model, 3.0, solver=solver)
        np.testing.assert_allclose(quick.ys, full.ys, rtol=1e-12, atol=1e-12)


def test_optimize_false_is_ignored_under_transformations():
    model = dl.models.get("lorenz")()

    def final_x(rho, optimize):
        return dl.simulate(model.replace(rho=rho), 1.0, solver="tsit5",
                           optimize=optimize).ys[-1, 0]

    np.testing.assert_allclose(jax.grad(final_x)(28.0, False), jax.grad(final_x)(28.0, True),
                               rtol=1e-12)
    compiled = jax.jit(lambda r: final_x(r, False))(28.0)
    np.testing.assert_allclose(compiled, final_x(28.0, True), rtol=1e-12)


def test_a_quick_run_is_rerun_bit_for_bit_from_its_settings_and_its_file(tmp_path):
    model = dl.models.get("lorenz")()
    run = dl.simulate(model, 40.0, solver="tsit5", optimize=False)
    assert run.settings.optimize is False
    again = dl.simulate(model, **run.settings.kwargs())
    np.testing.assert_array_equal(again.ys, run.ys)
    path = tmp_path / "quick.h5"
    dl.io.save(path, run, name="quick")
    stored = dl.open(path).runs["quick"]
    assert stored.settings.optimize is False
    np.testing.assert_array_equal(dl.simulate(model, **stored.settings.kwargs()).ys, run.ys)
    assert dl.simulate(model, 1.0).settings.optimize is True


class _ConstantStart(Decay):  # classes of their own: nothing compiled for them yet
    pass


class _StartFromRate(Decay):
    def initial_state(self):
        return jnp.stack([2.0 * self.rate])


class _ListStart(Decay):
    def initial_state(self):
        return [1.0]


def test_a_constant_initial_state_is_read_from_its_trace_not_compiled():
    compiled = []
    listener = lambda event, duration, **_: compiled.append(event)  # noqa: E731
    models = _ConstantStart(rate=0.5), _StartFromRate(rate=0.5)
    jax.monitoring.register_event_duration_secs_listener(listener)
    try:
        constant = dl.simulate(models[0], 1.0, solver="rk4", n_save=3, dt=1e-3)  # no probe
        n_programs = compiled.count("/jax/core/compile/backend_compile_duration")
        from_rate = dl.simulate(models[1], 1.0, solver="rk4", n_save=3, dt=1e-3)
    finally:
        jax.monitoring.unregister_event_duration_listener(listener)
    assert n_programs == 1  # the run alone (its initial state was a second program)
    np.testing.assert_allclose(constant["u"], np.exp(-0.5 * constant.ts), rtol=1e-6)
    np.testing.assert_allclose(from_rate["u"], np.exp(-0.5 * from_rate.ts), rtol=1e-6)
    assert from_rate.settings.y0 == (1.0,) and constant.settings.y0 == (1.0,)
    assert dl.simulate(_ListStart(), 1.0, solver="rk4", n_save=3).settings.y0 == (1.0,)


def _primitives(jaxpr) -> collections.Counter:
    """How often each primitive appears in ``jaxpr``, its sub-jaxprs included."""
    jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
    counts = collections.Counter(eqn.primitive.name for eqn in jaxpr.eqns)
    for sub in subjaxprs(jaxpr):
        counts += _primitives(sub)
    return counts


def test_stripping_drops_copies_and_dead_equations_and_keeps_effects():
    seen = []

    def f(x):
        jnp.sin(x)  # dead
        jax.debug.callback(seen.append, x)  # unused, but an effect

        def body(c):
            jnp.cos(c)  # dead inside a loop
            return jnp.copy(c) + 1.0

        return jax.lax.while_loop(lambda c: c < 10.0, body, jnp.copy(x) * 2.0)

    closed = strip_closed(jax.make_jaxpr(f)(1.0))
    counts = _primitives(closed)
    assert counts["copy"] == counts["sin"] == counts["cos"] == 0
    assert counts["debug_callback"] == 1 and counts["while"] == 1
    assert float(jaxpr_as_fun(closed)(3.0)[0]) == 10.0 and seen == [3.0]


def test_an_adaptive_solve_reaches_its_derivatives_without_diffrax_copies():
    model = dl.models.get("lorenz")()
    closed = jax.make_jaxpr(lambda t1: dl.simulate(model, t1, solver="tsit5").ys)(3.0)
    assert _primitives(closed)["copy"] == 0  # equinox's loops made 135


def test_stripping_inlines_calls_of_straight_line_code_and_keeps_calls_of_loops():
    scaled = jax.jit(lambda x: 2.0 * x + 1.0)
    cubed = jax.jit(lambda x: jax.lax.fori_loop(0, 3, lambda i, c: c * x, 1.0))

    def f(x):
        return scaled(x) + scaled(x + 1.0) + cubed(x)  # one jaxpr for both calls of scaled

    closed = strip_closed(jax.make_jaxpr(f)(2.0))
    jax.extend.core.check_jaxpr(closed.jaxpr)  # each variable defined once
    assert [e.primitive.name for e in closed.jaxpr.eqns].count("jit") == 1  # cubed
    assert float(jaxpr_as_fun(closed)(2.0)[0]) == 5.0 + 7.0 + 8.0
