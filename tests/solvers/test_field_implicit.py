"""Implicit and IMEX steppers on field models (issue 29): matrix-free Newton-Krylov.

Walled (Dirichlet) diffusion with a linear source, ``du/dt = D u_xx + r u``: its linear
part is not diagonal in Fourier space, so ``etdrk4`` cannot take it. The reference is the
semi-discrete solution ``expm(t A) u0`` (``A`` the operator's matrix, built column by
column on a small grid), itself checked against the closed-form decay of ``sin(pi x)``.
"""

import functools

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.linalg

import difflab as dl
from difflab.models import AbstractFieldModel, Dirichlet, Grid, laplace

# white-box: a stepper made directly, to trace one step and compile it alone
from difflab.solvers._steppers.imex import FIELD_IMPLICIT


class WalledDiffusion(AbstractFieldModel):
    """``du/dt = D laplace(u) + r u``, ``u = 0`` on the walls; ``r u`` explicit in IMEX."""

    D: float = 0.1
    r: float = 0.5
    grid: Grid = eqx.field(default_factory=lambda: Grid(((0.0, 1.0),), 32, Dirichlet()))

    field_names = ("u",)

    def linear_part(self):
        return None

    def diffusion(self, t, u):
        return self.D * laplace(u, self.grid, t=t)

    def linear_operator(self, t, fields):
        return {"u": self.diffusion(t, fields["u"])}

    def nonlinear_part(self, t, fields):
        return {"u": self.r * fields["u"]}

    def vector_field(self, t, fields):
        return {"u": self.diffusion(t, fields["u"]) + self.r * fields["u"]}

    def initial_fields(self):
        mode = 1.0
        for x in self.grid.coordinates:
            mode = mode * jnp.sin(np.pi * x)
        return {"u": mode}

    def exact(self, t):
        """The continuous solution: each axis' sine decays at ``D pi^2``."""
        rate = self.D * np.pi**2 * self.grid.ndim - self.r
        return np.exp(-rate * t) * np.asarray(self.initial_fields()["u"])


T1 = 1.0


@pytest.fixture(scope="module")
def semi_discrete():
    """``expm(T1 A) u0`` for the 32-point model."""
    model = WalledDiffusion()
    n = model.grid.shape[0]
    columns = [model.vector_field(0.0, {"u": jnp.eye(n)[i]})["u"] for i in range(n)]
    a = np.stack([np.asarray(c) for c in columns], axis=1)
    return scipy.linalg.expm(T1 * a) @ np.asarray(model.initial_fields()["u"])


def test_the_semi_discrete_reference_is_the_closed_form_decay_to_the_grid_s_accuracy(
        semi_discrete):
    exact = WalledDiffusion().exact(T1)
    assert np.max(np.abs(semi_discrete - exact)) < 1e-3 * np.max(np.abs(exact))


@functools.partial(jax.jit, static_argnums=0)
def _final(solver, dt, steps):
    """The field after ``steps`` steps of ``dt`` (one program per solver, any ``dt``)."""
    model = WalledDiffusion()
    stepper = FIELD_IMPLICIT[solver](model, dt)
    step = lambda i, u: stepper.step(model.vector_field, i * dt, u)  # noqa: E731
    return jax.lax.fori_loop(0, steps, step, model.initial_fields())["u"]


@pytest.mark.parametrize("solver, order", [("implicit_euler", 1), ("imex_euler", 1),
                                           ("sdirk2", 2), ("imex2", 2)])
def test_implicit_and_imex_steppers_converge_at_their_order(semi_discrete, solver, order):
    errors = [np.max(np.abs(np.asarray(_final(solver, T1 / n, n)) - semi_discrete))
              for n in (10, 20, 40)]
    orders = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    np.testing.assert_allclose(orders, order, atol=0.1)  # measured 0.96-0.99, 2.00-2.01
    assert errors[-1] < (1e-2 if order == 1 else 1e-5)


def test_a_run_through_simulate_is_the_stepper_s():
    traj = dl.simulate(WalledDiffusion(), T1, solver="imex2", dt=0.1, n_save=3)
    np.testing.assert_allclose(traj["u"][-1], _final("imex2", 0.1, 10), rtol=1e-12)
    assert traj.ok and traj.solver == "imex2"


@pytest.mark.slow
def test_reverse_mode_through_an_implicit_run_matches_finite_differences():
    def loss(d):
        traj = dl.simulate(WalledDiffusion(D=d), 0.3, solver="imex2", dt=0.1, n_save=2)
        return jnp.sum(traj["u"][-1] ** 2)

    fd = (loss(0.1 + 1e-5) - loss(0.1 - 1e-5)) / 2e-5
    assert float(jax.grad(loss)(0.1)) == pytest.approx(float(fd), rel=1e-6)


def _largest_value(jaxpr) -> int:
    """The most elements of any value in ``jaxpr`` or the programs inside it."""
    sizes = [int(np.prod(v.aval.shape)) for eqn in jaxpr.eqns for v in eqn.outvars
             if hasattr(v.aval, "shape")]
    return max(sizes + [_largest_value(inner) for inner in _inner(jaxpr)], default=0)


@pytest.fixture(scope="module")
def square():
    grid = Grid(((0.0, 1.0), (0.0, 1.0)), (128, 128), Dirichlet())
    return WalledDiffusion(grid=grid)


@pytest.mark.parametrize("solver", ["implicit_euler", "sdirk2", "imex2"])
def test_a_128x128_step_holds_no_dense_jacobian(square, solver):
    cells = 128 * 128  # a dense Jacobian: cells**2 = 2.7e8 values, 2.1 GB
    stepper = FIELD_IMPLICIT[solver](square, 0.01)
    jaxpr = jax.make_jaxpr(lambda u: stepper.step(square.vector_field, 0.0, u))
    assert _largest_value(jaxpr(square.initial_fields()).jaxpr) <= 64 * cells  # Krylov basis


@pytest.mark.parametrize("one_stage, two_stages", [("implicit_euler", "sdirk2"),
                                                   ("imex_euler", "imex2")])
def test_a_two_stage_step_compiles_its_stage_solver_once(one_stage, two_stages):
    """The implicit stages are one loop: a step of two holds as many solver loops as a
    step of one (each copy of GMRES and Newton costs seconds of compiling)."""
    model = WalledDiffusion()

    def loops(solver):
        stepper = FIELD_IMPLICIT[solver](model, 0.01)
        jaxpr = jax.make_jaxpr(lambda u: stepper.step(model.vector_field, 0.0, u))
        return _count(jaxpr(model.initial_fields()).jaxpr, "while")

    assert loops(two_stages) == loops(one_stage) > 0


def _count(jaxpr, primitive: str) -> int:
    """How many ``primitive`` equations ``jaxpr`` and the programs inside it hold."""
    return sum(eqn.primitive.name == primitive for eqn in jaxpr.eqns) + sum(
        _count(inner, primitive) for inner in _inner(jaxpr))


def _inner(jaxpr):
    """The programs inside ``jaxpr``'s equations (loop bodies, branches, ...)."""
    for eqn in jaxpr.eqns:
        for param in eqn.params.values():
            for sub in param if isinstance(param, (tuple, list)) else (param,):
                inner = getattr(sub, "jaxpr", sub)
                if hasattr(inner, "eqns"):
                    yield inner


def test_the_size_check_sees_a_dense_jacobian():
    model = WalledDiffusion(grid=Grid(((0.0, 1.0), (0.0, 1.0)), (32, 32), Dirichlet()))
    dense = jax.make_jaxpr(jax.jacfwd(lambda u: model.vector_field(0.0, u)))
    assert _largest_value(dense(model.initial_fields()).jaxpr) >= (32 * 32) ** 2


def test_a_128x128_field_runs_implicitly_and_decays_as_the_closed_form(square):
    # stiff: the fastest mode decays at 2 * 4 D / dx^2 = 1.3e4, 130 per step
    traj = dl.simulate(square, 0.05, solver="imex2", dt=0.01, n_save=2)
    u, exact = np.asarray(traj["u"][-1]), square.exact(0.05)
    assert np.max(np.abs(u - exact)) < 1e-3 * np.max(np.abs(exact))


def test_stiff_ode_solvers_on_fields_name_the_matrix_free_ones():
    with pytest.raises(ValueError, match=r"kvaerno5 would form a dense Jacobian .* "
                                         r"matrix-free implicit_euler, sdirk2 or imex2"):
        dl.simulate(WalledDiffusion(), 1.0, solver="kvaerno5")


def test_imex_needs_a_linear_operator():
    class Whole(WalledDiffusion):
        linear_operator = AbstractFieldModel.linear_operator

    with pytest.raises(ValueError, match="imex2 takes the linear operator implicitly, and "
                                         "Whole defines none: use sdirk2"):
        dl.simulate(Whole(), 1.0, solver="imex2", dt=0.1)
    traj = dl.simulate(Whole(), 0.2, solver="sdirk2", dt=0.05, n_save=2)
    np.testing.assert_allclose(traj["u"][-1], WalledDiffusion().exact(0.2), atol=2e-3)


@pytest.mark.parametrize("solver", ["sdirk2", "imex2"])
def test_an_implicit_field_run_lowers_for_gpus_and_tpus(solver):
    def final(d):
        return dl.simulate(WalledDiffusion(D=d), 0.2, solver=solver, dt=0.1, n_save=2,
                           throw=False)["u"][-1]

    traced = jax.jit(final).trace(0.1)
    for platform in ("cuda", "tpu"):
        text = traced.lower(lowering_platforms=(platform,)).as_text()
        assert "callback" not in text, platform


@pytest.mark.slow
def test_imex_on_a_fourier_linear_part_divides_in_fourier_space_as_gmres_solves():
    gray_scott = dl.models.get("gray_scott")

    class ByKrylov(gray_scott):  # the same operator, solved by GMRES
        def linear_operator(self, t, fields):
            return AbstractFieldModel.linear_operator(self, t, fields)

    fast = dl.simulate(gray_scott().with_points((16, 16)), 10.0, solver="imex2", dt=1.0,
                       n_save=2)
    krylov = dl.simulate(ByKrylov().with_points((16, 16)), 10.0, solver="imex2", dt=1.0,
                         n_save=2)
    reference = dl.simulate(gray_scott().with_points((16, 16)), 10.0, dt=0.1, n_save=2)
    for name in ("u", "v"):
        np.testing.assert_allclose(fast[name][-1], krylov[name][-1], atol=1e-9)
        np.testing.assert_allclose(fast[name][-1], reference[name][-1], atol=1e-3)
