"""Field models through the public API: ``dl.simulate`` with every kind of solver, ``jax.grad``
through a run and ``dl.sweep`` over a parameter, against the closed form of diffusion."""

import dataclasses
import re
from typing import ClassVar

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difflab as dl
from difflab.models import Diffusion, Dirichlet, GrayScott, Grid, Periodic
from difflab.solvers import simulate_fields
from difflab.solvers._steppers.field_steppers import FieldRK4


@pytest.fixture(scope="module")
def line():
    """``u = sin(x)`` on 8 points of ``[0, 2 pi)``: it decays as ``exp(-D t)``."""
    return Diffusion(D=0.5, grid=Grid(((0.0, 2 * np.pi),), (8,)))


def _error(model, traj) -> float:
    return float(jnp.max(jnp.abs(traj["u"] - model.exact(traj.ts)["u"])))


def test_simulate_runs_a_field_model_with_etdrk4_by_default(line):
    traj = dl.simulate(line, 2.0, n_save=5)
    assert traj.solver == "etdrk4" and traj.ok
    assert traj["u"].shape == (5, 8)
    np.testing.assert_allclose(traj.ts, [0.0, 0.5, 1.0, 1.5, 2.0])
    assert _error(line, traj) < 1e-13


def test_rk4_on_fields_converges_at_fourth_order(line):
    errors = [_error(line, dl.simulate(line, 2.0, solver="rk4", dt=dt, n_save=3))
              for dt in (0.2, 0.1)]
    assert 13 < errors[0] / errors[1] < 19


def test_adaptive_solvers_run_on_fields(line):
    traj = dl.simulate(line, 2.0, solver="tsit5", n_save=3, rtol=1e-8, atol=1e-10)
    assert traj.solver == "tsit5" and traj["u"].shape == (3, 8)
    assert _error(line, traj) < 1e-7


def test_an_adaptive_run_out_of_steps_says_so_not_that_it_diverged(line):
    """The frames a solver out of steps never reached were reported as a divergence."""
    with pytest.raises(dl.SimulationError, match="took max_steps steps") as caught:
        dl.simulate(line, 2.0, solver="tsit5", n_save=21, rtol=1e-12, max_steps=3)
    assert caught.value.result == dl.Result.MAX_STEPS_REACHED
    assert "diverged" not in str(caught.value) and "were not reached" in str(caught.value)
    traj = dl.simulate(line, 2.0, solver="tsit5", n_save=21, rtol=1e-12, max_steps=3,
                       throw=False)
    assert traj.result == dl.Result.MAX_STEPS_REACHED
    reached = np.isfinite(traj["u"]).all(axis=1)
    assert reached[0] and not reached[-1]
    np.testing.assert_allclose(traj["u"][reached], line.exact(traj.ts[reached])["u"],
                               atol=1e-10)


@pytest.mark.parametrize("solver", ["etdrk4", "rk4"])
def test_the_gradient_through_a_field_run_matches_finite_differences(line, solver):
    """``d/dD`` of ``u(pi/2, t=1) = exp(-D)``: the closed form ``-exp(-D)`` and central
    differences agree with ``jax.grad``."""

    def peak(D):
        return dl.simulate(line.replace(D=D), 1.0, solver=solver, dt=0.05, n_save=2)["u"][-1, 2]

    grad = float(jax.grad(peak)(0.5))
    h = 1e-5
    central = (float(peak(0.5 + h)) - float(peak(0.5 - h))) / (2 * h)
    np.testing.assert_allclose(grad, central, rtol=1e-7)
    np.testing.assert_allclose(grad, -np.exp(-0.5), rtol=1e-5)


def test_a_sweep_over_a_field_parameter_returns_its_observables(line):
    D = np.linspace(0.1, 1.0, 4)
    res = dl.sweep(line, {"D": D}, 1.0, dt=0.05,
                   observables={"peak": lambda traj: jnp.max(traj["u"][-1])})
    np.testing.assert_allclose(res["peak"], np.exp(-D) * np.max(np.sin(line.grid.coordinates[0])),
                               rtol=1e-12)
    assert res.final["u"].shape == (4, 8) and (res.result == 0).all()
    with pytest.raises(ValueError, match="no parameter 'Q'"):
        dl.sweep(line, {"Q": D}, 1.0, observables={"peak": lambda traj: 0.0})


def test_an_unstable_explicit_step_is_refused_naming_the_stable_one():
    """The limit named is the real one: the Nyquist mode grows just above it and decays
    just below."""
    stiff = Diffusion(D=1.0, grid=Grid(((0.0, 2 * np.pi),), (32,)))
    with pytest.raises(ValueError, match=r"unstable for rk4 .* needs dt <= 0.01088"):
        dl.simulate(stiff, 1.0, solver="rk4", dt=0.02)
    limit = 2.785 / 16**2
    x = stiff.grid.coordinates[0]
    start = {"u": jnp.sin(x) + 1e-3 * jnp.cos(16 * x)}
    ends = [simulate_fields(stiff, 200 * f * limit, dt=f * limit, frames=2, fields=start,
                            solver=FieldRK4(f * limit), throw=False)["u"][-1]
            for f in (0.95, 1.05)]
    assert float(jnp.max(jnp.abs(ends[0]))) < 1.0 < float(jnp.max(jnp.abs(ends[1])))


def test_the_default_explicit_step_is_stable():
    fine = Diffusion(D=1.0, grid=Grid(((0.0, 2 * np.pi),), (32,)))
    traj = dl.simulate(fine, 0.5, solver="rk4", n_save=2)
    assert dict(traj.settings)["dt"] <= 0.9 * 2.785 / 16**2
    assert _error(fine, traj) < 1e-9


@pytest.mark.parametrize("kwargs, message", [
    ({"solver": "kvaerno5"}, "dense Jacobian"),
    ({"solver": "leapfrog"}, "field models are advanced by"),
    ({"events": dl.Event(lambda t, y: y)}, "condition must return a scalar, not a dict"),
    ({"n_save": 1}, "at least 2"),
])
def test_what_a_field_run_cannot_take_is_refused(line, kwargs, message):
    with pytest.raises(ValueError, match=message):
        dl.simulate(line, 1.0, **kwargs)


def test_a_spectral_model_on_a_walled_grid_is_refused_with_the_reason():
    walled = Diffusion(grid=Grid(((0.0, 1.0), (0.0, 1.0)), (16, 16),
                                 (Periodic(), Dirichlet(0.0))))
    with pytest.raises(ValueError, match="periodic axis; axis y has Dirichlet boundaries"):
        dl.simulate(walled, 1.0)


def test_a_grid_too_big_is_refused_with_what_it_would_need():
    huge = GrayScott(grid=Grid(((0, 1), (0, 1)), (100_000, 100_000)))
    with pytest.raises(ValueError, match=r"100000x100000 grid .* needs about"):
        dl.simulate(huge, 1.0)


def test_a_nan_in_a_run_names_the_field_and_the_point(line):
    start = {"u": line.initial_fields()["u"].at[4].set(jnp.inf)}
    with pytest.raises(dl.SimulationError, match=r"field 'u' .* first at x = 3.142 "
                                                   r"\(point \[4\]\)"):
        dl.simulate(line, 1.0, y0=start, solver="rk4", dt=0.1)
    kept = dl.simulate(line, 1.0, y0=start, solver="rk4", dt=0.1, throw=False)
    assert kept.result == dl.Result.DIVERGED and not kept.ok


def test_a_finite_run_is_not_searched_for_nans_on_the_host(line, monkeypatch):
    """The run says whether every frame is finite: the frames are searched, for where a
    field stopped being finite, only when one is not."""
    from difflab.solvers import _field_checks

    searched = []
    search = _field_checks._first_nonfinite
    monkeypatch.setattr(_field_checks, "_first_nonfinite",
                        lambda *a: searched.append(1) or search(*a))
    assert dl.simulate(line, 1.0, solver="rk4", dt=0.1).ok and not searched
    start = {"u": line.initial_fields()["u"].at[4].set(jnp.nan)}
    assert not dl.simulate(line, 1.0, y0=start, solver="rk4", dt=0.1, throw=False).ok
    assert searched == [1]


class _Counted(Diffusion):
    traces: ClassVar[list] = []

    def vector_field(self, t, fields):
        self.traces.append(t)
        return super().vector_field(t, fields)


def test_new_parameters_fields_and_spans_of_as_many_steps_compile_nothing_new(line):
    model = _Counted(D=0.5, grid=line.grid)
    dl.simulate(model, 1.0, solver="rk4", dt=0.1, n_save=3)
    traced = len(_Counted.traces)
    start = {"u": 2 * model.initial_fields()["u"]}
    again = dl.simulate(model.replace(D=0.2), 2.0, solver="rk4", dt=0.2, n_save=3, y0=start)
    assert len(_Counted.traces) == traced > 0
    np.testing.assert_allclose(again["u"][-1], 2 * model.replace(D=0.2).exact(2.0)["u"],
                               atol=1e-6)


def test_a_stepper_passed_through_jax_jit_runs_as_it_does_outside(line):
    """Its ``dt`` is traced there, so its check against ``dt`` waits for concrete values."""
    made = dl.solvers.ETDRK4(line.linear_part(), 0.25)

    @jax.jit
    def final(model, stepper):
        return simulate_fields(model, 1.0, dt=0.25, frames=2, solver=stepper).final["u"]

    outside = simulate_fields(line, 1.0, dt=0.25, frames=2, solver=made).final["u"]
    np.testing.assert_allclose(final(line, made), outside, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(outside, line.exact(1.0)["u"], atol=1e-13)


def test_the_final_fields_are_the_last_frames_however_the_trajectory_was_made(line):
    """The run computes its last frames in its own program; a trajectory transformed or
    replaced afterwards takes them from its frames again."""
    run = simulate_fields(line, 1.0, dt=0.25, frames=3, solver="etdrk4")
    doubled = jax.tree.map(lambda a: 2 * a, run)
    for traj, scale in ((run, 1), (doubled, 2), (dataclasses.replace(run, ts=run.ts), 1)):
        np.testing.assert_array_equal(traj.final["u"], traj["u"][-1])
        np.testing.assert_allclose(traj.final["u"], scale * line.exact(1.0)["u"], atol=1e-13)


class _NumpyStart(Diffusion):
    """Diffusion whose initial field is written with NumPy, as a user may write it."""

    def initial_fields(self):
        (x,) = (np.asarray(c) for c in self.grid.coordinates)
        return {"u": np.sin(x)}


class _WalledNumpyStart(_NumpyStart):
    """The same between walls (``u = 0``), solved by IMEX with its linear operator."""

    def linear_part(self):
        return None

    def linear_operator(self, t, fields):
        return {"u": self.D * dl.models.laplace(fields["u"], self.grid, t=t)}

    def vector_field(self, t, fields):
        return self.linear_operator(t, fields)


@pytest.mark.parametrize("solver", ["etdrk4", "rk4"])
def test_initial_fields_written_with_numpy_run_and_save(line, solver, tmp_path):
    """Such a start was traced again for its shapes inside exponential and implicit runs,
    where NumPy cannot take the grid's coordinates: a TracerArrayConversionError."""
    model = _NumpyStart(D=line.D, grid=line.grid)
    traj = dl.simulate(model, 2.0, n_save=5, solver=solver, dt=0.01)
    assert _error(model, traj) < 1e-6
    dl.io.save(tmp_path / "run.h5", traj)
    np.testing.assert_allclose(dl.open(tmp_path / "run.h5").runs[0]["u"], traj["u"])


def test_initial_fields_written_with_numpy_run_implicitly():
    walled = _WalledNumpyStart(D=0.5, grid=Grid(((0.0, np.pi),), (16,), Dirichlet()))
    traj = dl.simulate(walled, 1.0, n_save=2, solver="imex2", dt=0.1)
    assert traj.ok and float(jnp.max(traj["u"][-1])) < float(jnp.max(traj["u"][0]))


def test_initial_fields_written_with_numpy_are_swept(line):
    """A sweep makes each point's initial fields inside its compiled program."""
    model = _NumpyStart(D=line.D, grid=line.grid)
    swept = dl.sweep(model, {"D": np.array([0.25, 0.5])}, 1.0, observables={"m": "max(u)"})
    np.testing.assert_allclose(swept.observables["m"], np.exp(-np.array([0.25, 0.5])),
                               rtol=1e-6)  # sin(x) decays as exp(-D t); its peak is 1


class _BareWalledRod(dl.models.AbstractFieldModel):
    """``u_t = D u_xx`` between walls (``u = 0``) written as a vector field alone: no
    linear part, so no eigenvalues known beforehand."""

    D: float = dl.param(1.0)
    grid: Grid = dataclasses.field(
        default_factory=lambda: Grid(((0.0, 1.0),), (100,), Dirichlet()))
    field_names: ClassVar = ("u",)

    def vector_field(self, t, fields):
        return {"u": self.D * dl.models.laplace(fields["u"], self.grid)}

    def initial_fields(self):
        (x,) = self.grid.coordinates
        return {"u": jnp.sin(np.pi * x)}


def test_an_unstable_step_is_refused_where_only_the_vector_field_is_known():
    """rk4 at dt 0.01 ran to values of 1e109 and called it a success; by default (a
    thousandth of the span) it diverged. The step is now held to the extreme modes of the
    vector field's Jacobian (Ritz values of Arnoldi steps)."""
    rod = _BareWalledRod()
    jacobian = jax.jacfwd(lambda u: rod.vector_field(0.0, {"u": u})["u"])(
        rod.initial_fields()["u"])
    limit = 2.785 / np.max(np.abs(np.linalg.eigvals(np.asarray(jacobian))))  # rk4's reach
    with pytest.raises(ValueError, match=r"dt = 0.01 is unstable for rk4 on this 100-point "
                                         r"grid: its fastest mode needs dt <= ([0-9.e-]+); "
                                         r"use dt = .* or solver='sdirk2'") as info:
        dl.simulate(rod, 0.1, solver="rk4", dt=0.01)
    found = float(re.search(r"dt <= ([0-9.e-]+);", str(info.value)).group(1))
    assert limit / 1.06 < found <= limit  # the estimate errs on the safe side, by 5%
    traj = dl.simulate(rod, 0.1, solver="rk4")  # the default step: stable
    assert traj.ok and dict(traj.settings)["dt"] < limit
    decay = np.exp(-np.pi**2 * 0.1)
    assert float(jnp.max(traj["u"][-1])) == pytest.approx(decay, rel=1e-3)


class _BareWalledWave(_BareWalledRod):
    """``u_tt = u_xx`` between walls as a first-order system, written as a vector field
    alone: its modes oscillate (eigenvalues on the imaginary axis)."""

    field_names: ClassVar = ("u", "v")

    def nonlinear_part(self, t, fields):
        return {name: jnp.zeros_like(u) for name, u in fields.items()}

    def vector_field(self, t, fields):
        return {"u": fields["v"], "v": dl.models.laplace(fields["u"], self.grid)}

    def initial_fields(self):
        (x,) = self.grid.coordinates
        return {"u": jnp.sin(np.pi * x), "v": jnp.zeros_like(x)}


def test_oscillating_modes_known_by_the_vector_field_alone_limit_the_step():
    """Power iteration took this wave's modes for a growing one (1.3e4, against 237 on the
    imaginary axis) and let rk4 run at any step; the Ritz values of an Arnoldi process
    find the extreme pair."""
    wave = _BareWalledWave()

    def f(w):
        return jnp.concatenate(list(wave.vector_field(0.0, {"u": w[:100], "v": w[100:]})
                                    .values()))

    size = np.max(np.abs(np.linalg.eigvals(np.asarray(jax.jacfwd(f)(jnp.zeros(200))))))
    with pytest.raises(ValueError, match=r"euler amplifies the oscillating modes"):
        dl.simulate(wave, 1.0, solver="euler", dt=1e-4)
    with pytest.raises(ValueError, match=r"dt = 0.1 is unstable for rk4") as info:
        dl.simulate(wave, 1.0, solver="rk4", dt=0.1)
    found = float(re.search(r"dt <= ([0-9.e-]+);", str(info.value)).group(1))
    reach = FieldRK4.reach(np.pi / 2)  # 2 sqrt(2)
    assert reach / size / 1.06 < found <= reach / size
