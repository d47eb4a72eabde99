"""Field sweep requests: what they refuse, and the values they run at."""

import numpy as np
import pytest

from difflab.app.field_sweeps import FieldSweepRequest, sweep_request
from difflab.app.fields import FieldSession


@pytest.fixture(scope="module")
def session():
    return FieldSession(None, "gray_scott", 16)


def test_a_sweep_runs_from_the_sessions_frame_at_its_values(session):
    request = sweep_request(session, "F", 0.02, 0.06, 5, "v", "norm")
    assert request.values == pytest.approx((0.02, 0.03, 0.04, 0.05, 0.06))
    assert request.label == "norm(v)" and request.t1 == session.t1
    assert request.fields["v"] is session.frames[0]["v"]
    assert request.model.F == session.params["F"]
    assert sweep_request(session, "F", 0.02, 0.06, 3).field == "u"  # the first field


def test_a_parameter_with_a_logarithmic_slider_is_swept_geometrically():
    flow = FieldSession(None, "navier_stokes", 8)
    assert flow.specs["nu"].log_scale
    request = sweep_request(flow, "nu", 1e-4, 1e-2, 3)
    assert np.allclose(request.values, [1e-4, 1e-3, 1e-2])


@pytest.mark.parametrize("change, words", [({"param": "nu"}, "no parameter 'nu'"),
                                           ({"field": "w"}, "no field 'w'"),
                                           ({"kind": "median"}, "not 'median'"),
                                           ({"values": (0.1, np.nan)}, "finite values")])
def test_a_sweep_refuses_what_it_cannot_run(session, change, words):
    request = sweep_request(session, "F", 0.02, 0.06, 3)
    fields = {k: getattr(request, k) for k in ("model", "fields", "param", "values", "t1",
                                               "dt", "field", "kind")}
    with pytest.raises(ValueError, match=words):
        FieldSweepRequest(**{**fields, **change})


def test_a_stop_ends_the_sweep_after_the_chunk_under_way():
    import jax

    flow = FieldSession(None, "advection_diffusion", 8)
    flow.t1 = 0.05
    n = 4 * jax.device_count()  # four chunks, one point per device in each
    request = sweep_request(flow, "D", 0.01, 0.05, n, "u", "max")
    reported = []
    assert request.run(stop=lambda: bool(reported), progress=lambda *done: reported.append(done)
                       ) is None
    assert reported == [(n // 4, n)]  # one chunk of the four, then the stop
    whole = request.run(progress=lambda *done: reported.append(done))
    assert reported[1:] == [(k * n // 4, n) for k in range(1, 5)] and len(whole) == n


def test_a_sweep_read_back_gives_its_request_again(tmp_path):
    import difflab as dl
    from difflab.app.field_sweeps import request_of

    flow = FieldSession(None, "advection_diffusion", 8)
    flow.t1 = 0.05
    request = sweep_request(flow, "D", 0.01, 0.05, 3, "u", "max")
    result = request.run()
    with dl.io.write_session(tmp_path / "s.h5") as writer:
        dl.io.add(writer, result, name="field_sweep")
    back = dl.io.open_session(tmp_path / "s.h5").sweeps["field_sweep"]
    again = request_of(back)
    assert (again.param, again.values, again.t1, again.field, again.kind) == \
        (request.param, request.values, request.t1, request.field, request.kind)
    assert np.array_equal(back[again.name], result[request.name])
    assert np.array_equal(back.final["u"], result.final["u"])
    with pytest.raises(ValueError, match="one parameter and one observable"):
        request_of(type(back)(back.space, {}, back.final, back.result, back.model))
