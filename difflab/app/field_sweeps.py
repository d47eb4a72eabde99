"""Sweeps of a field model in the app, Qt-free: one parameter over a range, each point's
run reduced on the device to a number of one field (its mean, max or norm at ``t1``),
and each point's final fields kept, to be shown when the point is picked.

The points run in a few chunks of one compiled program, so a stop takes effect between
two chunks (:meth:`FieldSweepRequest.run`). A sweep read back from a session file gives
its request again (:func:`request_of`), to be drawn as it was.
"""

import dataclasses
import math
import re

import numpy as np

import difflab as dl

#: the numbers a field sweep takes of a field's last frame (``dl.sweep``'s specs)
OBSERVABLES = ("mean", "max", "norm", "wavelength")  # the L2 norm; the spectrum's peak
DEFAULT_POINTS = 8
STOP_CHECKS = 4  # chunks a sweep runs in: a stop waits for one at most


class SweepStopped(Exception):
    """Raised between two chunks of a sweep that was asked to stop."""


def observable_label(kind: str, field: str) -> str:
    """``norm(u)``: how a sweep's number is named."""
    return f"{kind}({field})"


@dataclasses.dataclass(frozen=True)
class FieldSweepRequest:
    """Run ``model`` from ``fields`` (its state at 0) to ``t1`` (step ``dt``, ``None``:
    the solver's) at each of ``values`` of parameter ``param``, taking ``kind`` of field
    ``field`` at ``t1``."""

    model: object
    fields: dict
    param: str
    values: tuple
    t1: float
    dt: float | None
    field: str
    kind: str = "mean"

    def __post_init__(self):
        if self.param not in self.model.parameter_specs():
            raise ValueError(f"{type(self.model).__name__} has no parameter {self.param!r}")
        if self.field not in self.model.field_names:
            raise ValueError(f"no field {self.field!r}; the fields are "
                             f"{', '.join(self.model.field_names)}")
        if self.kind not in OBSERVABLES:
            raise ValueError(f"a field sweep takes {', '.join(OBSERVABLES)}, not {self.kind!r}")
        if len(self.values) < 1 or not np.all(np.isfinite(self.values)):
            raise ValueError(f"sweep {self.param} over finite values, not {self.values}")

    @property
    def label(self) -> str:
        return observable_label(self.kind, self.field)

    @property
    def name(self) -> str:
        """The observable's name in the sweep's result: ``norm_u``."""
        return f"{self.kind}_{self.field}"

    def run(self, stop=lambda: False, progress=lambda done, total: None):
        """Every point in chunks of one vmapped program: a ``FieldSweepResult`` whose
        observable :attr:`name` is one number per point and ``final`` the last frames;
        ``None`` where ``stop()`` became true (checked after each chunk, which reports
        ``progress(points done, points)``)."""
        def chunk_done(chunk):
            progress(chunk.stop, chunk.total)
            if stop():
                raise SweepStopped

        try:
            return dl.sweep(self.model, {self.param: np.asarray(self.values, dtype=float)},
                            self.t1, dt=self.dt, n_save=2, y0=dict(self.fields),
                            observables={self.name: self.label}, progress=chunk_done,
                            chunk_size=math.ceil(len(self.values) / STOP_CHECKS))
        except SweepStopped:
            return None


def sweep_request(session, param: str, low: float, high: float,
                  points: int = DEFAULT_POINTS, field: str | None = None,
                  kind: str = "mean") -> FieldSweepRequest:
    """A sweep of the field ``session``'s model (its other parameters as they are now,
    from its frame 0) over ``points`` values of ``param`` from ``low`` to ``high``:
    evenly spaced, or geometrically where the parameter's slider is logarithmic."""
    spec = session.specs[param]
    log = spec.log_scale and low > 0 and high > 0
    values = (np.geomspace if log else np.linspace)(low, high, int(points))
    return FieldSweepRequest(session.model, dict(session.frames[0]), param,
                             tuple(map(float, values)), float(session.t1), session.dt,
                             field or session.field_names[0], kind)


def point_fields(result, index: int) -> dict:
    """The last frame of every field at sweep point ``index``."""
    return {name: np.asarray(u[index]) for name, u in result.final.items()}


def request_of(result, fields: dict | None = None) -> FieldSweepRequest:
    """The request that made ``result`` (a field sweep of one parameter and one
    observable like ``max(u)``, as the app writes): ``ValueError`` for another sweep."""
    specs = dict(getattr(result, "specs", None) or {})
    if len(result.space.names) != 1 or len(specs) != 1:
        raise ValueError("the app shows field sweeps of one parameter and one observable")
    (name, spec), = specs.items()
    match = re.fullmatch(r"(\w+)\((\w+)\)", spec)
    if match is None or name != f"{match[1]}_{match[2]}":
        raise ValueError(f"the app does not show a field sweep of {spec!r}")
    param = result.space.names[0]
    settings = dict(result.settings)
    return FieldSweepRequest(result.model, dict(fields or {}), param,
                             tuple(map(float, result.space[param])), float(settings["t1"]),
                             settings.get("dt"), match[2], match[1])
