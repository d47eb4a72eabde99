"""Issue 15: solve arguments no run can use are a ValueError naming the argument, in every
entry point, before anything is traced; ``throw=False`` does not change that."""

import math

import jax
import numpy as np
import pytest

import difflab as dl
from tests.models_for_tests import Decay

BAD = [
    ({"t1": math.inf}, "t1 must be a finite number, got inf"),
    ({"t1": math.nan}, "t1 must be a finite number, got nan"),
    ({"t0": -math.inf}, "t0 must be a finite number, got -inf"),
    ({"dt": math.inf}, "dt must be a finite number, got inf"),
    ({"dt": math.nan}, "dt must be a finite number, got nan"),
    ({"rtol": math.inf, "solver": "tsit5"}, "rtol must be a finite number"),
    ({"atol": np.array([1e-9, math.nan]), "solver": "tsit5"}, "atol must be a finite number"),
    ({"max_steps": -1}, "max_steps must be at least 1"),
    ({"max_steps": 0}, "max_steps must be at least 1"),
    ({"max_steps": 2**40}, "max_steps must be at least 1 and at most 2,147,483,647"),
    ({"max_steps": 2.5}, "max_steps must be a whole number, got 2.5"),
    ({"max_steps": True}, "max_steps must be a whole number, got True"),
    ({"n_save": 2.5}, "n_save must be a whole number, got 2.5"),
    ({"n_save": math.inf}, "n_save must be a whole number, got inf"),
    ({"n_save": "5"}, "n_save must be a whole number, got '5'"),
]


@pytest.mark.parametrize("kwargs, message", BAD)
def test_simulate_refuses_arguments_no_run_can_use(kwargs, message):
    kwargs = {"t1": 1.0, **kwargs}
    for throw in (True, False):
        with pytest.raises(ValueError, match="^" + message.replace("(", r"\(")):
            dl.simulate(Decay(), throw=throw, **kwargs)


@pytest.mark.parametrize("kwargs, message", [BAD[0], BAD[3], BAD[7], BAD[12]])
def test_every_entry_point_refuses_them_alike(kwargs, message):
    kwargs = {"t1": 1.0, **kwargs}
    with pytest.raises(ValueError, match=message):
        next(dl.stream(Decay(), **kwargs))
    with pytest.raises(ValueError, match=message):
        dl.solvers.SweepJob(Decay(), {"rate": [1.0, 2.0]}, **kwargs)
    with pytest.raises(ValueError, match=message):
        dl.sensitivity(Decay(), **kwargs)


def test_whole_numbers_given_as_floats_are_used_as_integers():
    traj = dl.simulate(Decay(), 1.0, dt=0.1, n_save=6.0, max_steps=np.int64(50))
    assert traj.ys.shape[0] == 6 and traj.settings.n_save == 6
    assert isinstance(traj.settings.max_steps, int) and traj.settings.max_steps == 50


def test_traced_values_are_left_to_the_run():
    final = jax.jit(lambda dt: dl.simulate(Decay(), 1.0, dt=dt, solver="tsit5").final)(0.01)
    np.testing.assert_allclose(final, [math.exp(-1.0)], rtol=1e-5)
