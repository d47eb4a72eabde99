"""A field sweep read back from its session file: the space (a grid's shape and columns,
or points), observables, final fields and result codes as written, bit for bit."""

import numpy as np
import pytest

import difflab as dl


@pytest.mark.parametrize("space", [
    dl.grid({"D": [0.01, 0.02], "cx": [0.5, 1.0, 1.5]}),
    {"D": np.array([0.01, 0.03, 0.05])},
], ids=["grid", "points"])
def test_a_field_sweep_reads_back_as_written(tmp_path, space):
    model = dl.models.get("advection_diffusion")().with_points((8, 8))
    result = dl.sweep(model, space, 0.02, n_save=2,
                      observables={"max_u": "max(u)", "norm_u": "norm(u)"})
    with dl.io.write_session(tmp_path / "s.h5") as writer:
        dl.io.add(writer, result, name="swept")
    back = dl.io.open_session(tmp_path / "s.h5").sweeps["swept"]
    assert isinstance(back, dl.solvers.FieldSweepResult)
    assert (back.space.kind, back.space.shape, back.space.names) == \
        (result.space.kind, result.space.shape, result.space.names)
    for name in result.space.names:
        assert np.array_equal(back.space[name], result.space[name])
    for name, values in result.observables.items():
        assert np.array_equal(back[name], values)
    assert np.array_equal(back.final["u"], result.final["u"])
    assert np.array_equal(back.result, result.result)
    assert back.specs == {"max_u": "max(u)", "norm_u": "norm(u)"}
    assert back.settings["t1"] == 0.02 and type(back.model) is type(model)
    assert back.model.grid.points == (8, 8)
