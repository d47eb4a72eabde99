"""The file schema's names, in one place (``docs/hdf5-schema.md`` describes them)."""

import re

SCHEMA_VERSION = 3  # 3: numeric index + `<dim>_name` labels, CF names; 2 and 1 still read
FORMAT = "difflab-session"
KINDS = {"runs": "run", "sweeps": "sweep", "fits": "fit", "sensitivities": "sensitivity"}
ANALYSES = "analyses"  # a group files written before analyses were stored lack
ALL_KINDS = {**KINDS, ANALYSES: "analysis"}
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]{0,63}")
SETTING_NAMES = ("solver", "t0", "t1", "dt", "n_save", "rtol", "atol", "max_steps", "y0")
SETTINGS = (*SETTING_NAMES, "seed")  # written as result attributes

# kind -> (coordinates: name -> "f"/"i"/"s", required variables: name -> (dims, "f"/"i"),
#          optional variables, required attributes)
SPECS = {
    "runs": ({"time": "f", "state": "s"}, {"y": (("time", "state"), "f")},
             {"event_time": (("event",), "f"), "event_y": (("event", "state"), "f"),
              "event_which": (("event",), "i")}, ()),
    "sweeps": (
        {"point": "i", "time": "f", "state": "s", "parameter": "s", "chunk": "i"},
        {"parameters": (("point", "parameter"), "f"), "y": (("point", "time", "state"), "f"),
         "result": (("point",), "i"), "steps": (("point",), "i"),
         "chunk_done": (("chunk",), "i")},
        {"y0": (("point", "state"), "f")}, ("n_points", "chunk_size")),
    "fits": ({"step": "i", "parameter": "s"},
             {"loss": (("step",), "f"), "parameters": (("step", "parameter"), "f")}, {}, ()),
    "sensitivities": ({"parameter": "s"}, {},
                      {"gradient": (("parameter",), "f"),
                       "dy_dp": (("time", "state", "parameter"), "f")}, ()),
}
DATA_SPEC = ({"time": "f", "state": "s"}, {"y": (("time", "state"), "f")},
             {"sigma": (("time", "state"), "f")}, ())
OPTIONAL_COORDS = {"sensitivities": {"time": "f", "state": "s"}, "runs": {"event": "i"}}
