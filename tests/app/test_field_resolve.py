"""A re-solve after a parameter change reuses the exponential stepper while the linear
part is unchanged, and runs as a fresh stepper would."""

import jax
import numpy as np

import difflab as dl
from difflab.app import fields
from difflab.app.fields import FieldSession, stream_frames


def first_chunk(session: FieldSession):
    return next(stream_frames(session.run_request(0)))


def test_a_re_solve_reuses_the_stepper_while_the_linear_part_is_unchanged():
    session = FieldSession(None, "gray_scott", 16)
    session.t1, session.dt, session.n_frames = 8.0, 1.0, 3
    first_chunk(session)
    stepper = fields._LAST_STEPPER[0][2]
    session.set_param("F", 0.05)  # a reaction rate: L is as it was
    chunk = first_chunk(session)
    assert fields._LAST_STEPPER[0][2] is stepper
    model = session.model
    fresh = dl.solvers.simulate_fields(model, 8.0, fields=dict(session.frames[0]), dt=1.0,
                                       frames=3,
                                       solver=dl.solvers.ETDRK4(model.linear_part(), 1.0))
    assert np.allclose(chunk.frames[-1]["v"], np.asarray(fresh["v"][-1]), atol=1e-12)
    session.set_param("Du", 3e-5)  # a diffusivity: a new L, new weights
    first_chunk(session)
    made = fields._LAST_STEPPER[0][2]
    assert made is not stepper
    eager = dl.solvers.ETDRK4(session.model.linear_part(), 1.0)
    for ours, theirs in zip(jax.tree.leaves(made), jax.tree.leaves(eager), strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-13, atol=1e-15)
