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
