"""Which solvers fit a model: every name offered runs it, every name left out is refused."""

import jax
import pytest

import difflab as dl


@pytest.mark.parametrize("name", ["pendulum", "van_der_pol", "ornstein_uhlenbeck"])
def test_solvers_for_offers_exactly_the_solvers_that_accept_the_model(name):
    model = dl.models.get(name)()
    offered = dl.solvers.solvers_for(model)
    assert dl.solvers.default_solver(model) in offered
    assert offered == dl.solvers.solvers_for(type(model))  # a class answers alike
    for solver in dl.solvers.available_solvers():
        if solver in offered:
            dl.solvers.resolve_solver(solver, model)
        else:
            with pytest.raises(ValueError):
                dl.solvers.resolve_solver(solver, model)


def test_solvers_for_the_kinds_of_model():
    assert "leapfrog" in dl.solvers.solvers_for(dl.models.get("pendulum"))  # Hamiltonian
    van_der_pol = dl.solvers.solvers_for(dl.models.get("van_der_pol"))
    assert "leapfrog" not in van_der_pol and "euler_maruyama" not in van_der_pol
    assert {"tsit5", "kvaerno5", "rk4"} <= set(van_der_pol)
    assert dl.solvers.solvers_for(dl.models.get("ornstein_uhlenbeck")) == ["euler_maruyama"]


def test_an_offered_solver_runs_the_model():
    model = dl.models.get("ornstein_uhlenbeck")()
    (solver,) = dl.solvers.solvers_for(model)
    traj = dl.simulate(model, 1.0, solver=solver, key=jax.random.key(0), n_save=11)
    assert traj.ok and traj.ys.shape == (11, len(model.state_names))
