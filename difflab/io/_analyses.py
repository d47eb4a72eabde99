"""Analysis results in a session file: ``/analyses/<name>``, one netCDF group each.

Every analysis class is registered once with a codec per field (``_codecs``); from that
one registration come its writing, its reading back into the same class and the checks
the reader makes. The group's ``analysis`` attribute names the registration; its
``model`` attribute the model (in ``/models``), as for runs. ``state_names`` are the
``state`` coordinate, and every other dimension gets an index coordinate (0, 1, ...).

To store a new analysis class (an Equinox module with ``model`` and ``state_names``
fields), add one ``register(...)`` call below naming a codec for each of its other
fields; ``tests/io/test_analysis_results.py`` checks that every field is covered.
"""

import dataclasses

import numpy as np

from ..solvers import (
    BifurcationCurve,
    CodimTwoPoint,
    Continuation,
    CycleCurve,
    CycleSpecialPoint,
    Equilibria,
    LyapunovSpectrum,
    PeriodicOrbits,
    Poincare,
    SpecialPoint,
)
from ._codecs import (
    Array,
    Attribute,
    Codec,
    Complex,
    Flags,
    Labels,
    Numbers,
    Ranges,
    Single,
    Table,
)
from ._models import ModelRecord, record_of
from ._netcdf import UNDECLARED, Variable, state_attrs, unit_attrs
from ._objects import _built as built_model
from ._schema import ANALYSES

COMMON = ("model", "state_names")  # fields every analysis has, stored by every format
INDEX = "index (0, 1, ...) along"


@dataclasses.dataclass(frozen=True)
class AnalysisFormat:
    """How the analysis class ``cls`` is stored: the ``analysis`` attribute ``name``
    (also its default group name, ``<name>0``, ...) and a codec per field."""

    cls: type
    name: str
    fields: dict[str, Codec]

    def spec(self) -> tuple:
        """The reader's spec: coordinates, required and optional variables, attributes."""
        variables = {k: v for f, codec in self.fields.items() for k, v in codec.specs(f).items()}
        required = {k: (dims, kind) for k, (dims, kind, need) in variables.items() if need}
        optional = {k: (dims, kind) for k, (dims, kind, need) in variables.items() if not need}
        coords = {d: "s" if d == "state" else "i" for dims, _ in required.values() for d in dims}
        optional_coords = {d: "s" if d == "state" else "i" for dims, _ in optional.values()
                           for d in dims if d not in coords}
        return (coords, required, optional, ()), optional_coords

    def attributes(self) -> dict[str, tuple[type, ...]]:
        return {k: v for f, codec in self.fields.items() for k, v in codec.attributes(f).items()}

    def renamed(self) -> dict[str, str]:
        """``{attribute name in older files: name now}``."""
        return {k: v for f, codec in self.fields.items()
                for k, v in getattr(codec, "renamed", lambda _: {})(f).items()}


FORMATS: dict[str, AnalysisFormat] = {}


def register(cls: type, name: str, **fields: Codec) -> None:
    """Store analysis results of class ``cls`` as ``/analyses`` groups with
    ``analysis = name``, each field by its codec (``model`` and ``state_names`` by all)."""
    FORMATS[name] = AnalysisFormat(cls, name, fields)


register(
    Equilibria, "equilibria",
    states=Array("equilibrium", "state", long_name="equilibrium state"),
    eigenvalues=Complex("equilibrium", "eigenvalue",
                        long_name="eigenvalue of the Jacobian (largest real part first)"),
    stability=Labels("equilibrium", long_name="stability class"),
    box=Ranges("state", long_name="the range searched"))


def _special_points(cls: type, dim: str) -> Codec:
    """The columns of :class:`SpecialPoint` rows (a continuation's special points, the
    Hopf point periodic orbits start from) along ``dim``."""
    return cls(SpecialPoint, dim, kind=Labels(long_name="kind of special point"),
               value=Numbers(long_name="value of the continued parameter"),
               state=Array("state", long_name="state at the special point"),
               frequency=Numbers(long_name="Hopf frequency (NaN: not a Hopf point)"),
               lyapunov_coefficient=Numbers(
                   long_name="first Lyapunov coefficient (NaN: not a Hopf point)"),
               tangent=Numbers("component",
                               long_name="unit tangent of the branch in (state, parameter)"))


register(
    Continuation, "continuation",
    param=Attribute(str), start=Attribute(), stop=Attribute(), status=Attribute(str),
    values=Array("point", long_name="value of the continued parameter"),
    states=Array("point", "state", long_name="equilibrium state"),
    eigenvalues=Complex("point", "eigenvalue",
                        long_name="eigenvalue of the Jacobian (largest real part first)"),
    stable=Flags("point", long_name="stable"),
    special=_special_points(Table, "special"))

register(
    BifurcationCurve, "bifurcation_curve",
    kind=Attribute(str), params=Attribute(tuple), start=Attribute(), stop=Attribute(),
    status=Attribute(str),
    values=Array("point", "param", long_name="values of the two parameters (params)"),
    states=Array("point", "state", long_name="equilibrium state"),
    frequency=Array("point", optional=True, long_name="Hopf frequency (absent on a fold curve)"),
    lyapunov_coefficients=Array(
        "point", optional=True,
        long_name="first Lyapunov coefficient (NaN: not computed; absent on a fold curve)"),
    special=Table(CodimTwoPoint, "special", kind=Labels(long_name="kind of special point"),
                  values=Array("param", long_name="values of the two parameters"),
                  state=Array("state", long_name="state at the special point"),
                  period=Numbers(optional=True,  # a curve of equilibria's points have none
                                 long_name="period of the orbit (NaN: not on a cycle)")))

register(
    PeriodicOrbits, "periodic_orbits",
    param=Attribute(str), status=Attribute(str), steps=Attribute(int),
    bounds=Attribute(tuple, stored="parameter_range", formerly="bounds"),  # CF's bounds: cells
    t=Attribute(),
    values=Array("orbit", long_name="value of the continued parameter"),
    periods=Array("orbit", long_name="period"),
    states=Array("orbit", "state", long_name="a state on the orbit"),
    minima=Array("orbit", "state", long_name="least value along the orbit"),
    maxima=Array("orbit", "state", long_name="greatest value along the orbit"),
    multipliers=Complex("orbit", "multiplier",
                        long_name="Floquet multiplier (largest modulus first; NaN: not trusted)"),
    stable=Flags("orbit", long_name="stable"),
    errors=Array("orbit", optional=True,  # absent in files written before the estimate
                 long_name="estimated relative error of the period"),
    special=Table(CycleSpecialPoint, "special", kind=Labels(long_name="kind of special point"),
                  value=Numbers(long_name="value of the continued parameter"),
                  period=Numbers(long_name="period"),
                  state=Array("state", long_name="a state on the orbit"),
                  minimum=Array("state", long_name="least value along the orbit"),
                  maximum=Array("state", long_name="greatest value along the orbit"),
                  multipliers=Complex("multiplier", long_name="Floquet multiplier"),
                  tangent=Numbers("tangent_component", optional=True,  # absent before
                                  long_name="unit tangent of the branch in (state, period, "
                                  "parameter)")),
    hopf=_special_points(Single, "hopf"))

register(
    CycleCurve, "cycle_curve",
    kind=Attribute(str), params=Attribute(tuple), status=Attribute(str), steps=Attribute(int),
    bounds=Attribute(tuple, stored="parameter_range"), t=Attribute(),
    values=Array("point", "param", long_name="values of the two parameters (params)"),
    periods=Array("point", long_name="period"),
    states=Array("point", "state", long_name="a state on the orbit"),
    minima=Array("point", "state", long_name="least value along the orbit"),
    maxima=Array("point", "state", long_name="greatest value along the orbit"),
    multipliers=Complex("point", "multiplier",
                        long_name="Floquet multiplier (largest modulus first; NaN: not trusted)"),
    errors=Array("point", optional=True,  # absent in files written before the estimate
                 long_name="estimated relative error of the period"),
    saddles=Array("point", "state", optional=True,
                  long_name="saddle the orbit is homoclinic to (absent off a homoclinic curve)"),
    saddle_eigenvalues=Complex("point", "eigenvalue", optional=True,
                               long_name="eigenvalue of the saddle (largest real part first)"),
    special=Table(CodimTwoPoint, "special",  # absent in files written before detection
                  kind=Labels(long_name="kind of special point", optional=True),
                  values=Array("param", optional=True,
                               long_name="values of the two parameters"),
                  state=Array("state", optional=True, long_name="state at the special point"),
                  period=Numbers(optional=True, long_name="period of the orbit")))

register(
    Poincare, "poincare",
    ts=Array("crossing", long_name="time of the crossing"),
    ys=Array("crossing", "state", long_name="state at the crossing"),
    found=Attribute(int), t1=Attribute(), transient=Attribute(), section=Attribute(str),
    direction=Attribute(int))

register(
    LyapunovSpectrum, "lyapunov_spectrum",
    exponents=Array("exponent", long_name="Lyapunov exponent (largest first)"),
    error=Array("exponent", long_name="spread of the estimate over the last quarter"),
    times=Array("record", long_name="time averaged so far"),
    history=Array("record", "exponent", long_name="running estimate of the exponents"),
    final_state=Array("state", long_name="state at the end"),
    t1=Attribute(), transient=Attribute(), dt=Attribute())


def format_of(result) -> AnalysisFormat | None:
    """The format of ``result``'s class, or ``None`` when it is not an analysis."""
    return next((f for f in FORMATS.values() if type(result) is f.cls), None)


def _sizes(variables: dict) -> dict[str, int]:
    """Each dimension's length; an empty table's column may not know it (0 there)."""
    sizes = {}
    for v in variables.values():
        for d, n in zip(v.dims, v.shape):
            sizes[d] = max(sizes.get(d, 0), n)
    return sizes


def _fitted(variables: dict) -> dict[str, Variable]:
    """``variables`` with every empty array over the dimensions' full lengths."""
    sizes, out = _sizes(variables), dict(variables)
    for name, v in variables.items():
        shape = tuple(sizes[d] for d in v.dims)
        if isinstance(v.data, np.ndarray) and v.data.size == 0 and v.shape != shape:
            out[name] = Variable(v.dims, np.zeros(shape, dtype=v.data.dtype), v.attrs)
    return out


def _coordinates(variables: dict, state_names) -> dict[str, Variable]:
    """The ``state`` labels and an index coordinate for every other dimension used."""
    sizes = _sizes(variables)
    coords = {"state": Variable(("state",), [str(s) for s in state_names],
                                {"long_name": "state variable"})}
    for dim, n in sizes.items():
        if dim != "state":
            coords[dim] = Variable((dim,), np.arange(n, dtype=np.int64),
                                   {"long_name": f"{INDEX} {dim}"})
    return coords


AXIS_VALUES = {"point": "values", "orbit": "values", "record": "times", "crossing": "ts"}


def _link_coordinates(variables: dict) -> None:
    """A 1-D variable of what an axis stands for (a branch's parameter ``values``, a
    Lyapunov history's ``times``) becomes a CF auxiliary coordinate of every variable
    over that axis, so xarray plots them against it."""
    for dim, axis in AXIS_VALUES.items():
        if axis not in variables or variables[axis].dims != (dim,):
            continue
        for name, var in variables.items():
            if name != axis and dim in var.dims:
                listed = str(var.attrs.get("coordinates", "")).split()
                var.attrs = {**var.attrs, "coordinates": " ".join([*listed, axis])}


_STATES = ("states", "state", "ys", "final_state", "minima", "maxima", "minimum", "maximum")
_TIMES = ("ts", "times", "periods", "period")
_RATES = ("exponents", "error", "history", "eigenvalues_real", "eigenvalues_imag", "frequency")
_PARAMETER = ("values", "value")  # the continued parameter's


def _kind(name: str) -> str:
    """What a stored variable measures, from its field name (``special_state``: a state)."""
    field = name.split("_", 1)[1] if name.startswith(("special_", "hopf_")) else name
    for kind, fields in (("state", _STATES), ("time", _TIMES), ("rate", _RATES),
                         ("parameter", _PARAMETER)):
        if field in fields:
            return kind
    return "pure" if field.startswith("multipliers") or field == "errors" else ""


def _add_units(variables: dict, result) -> None:
    """Units from the model (when it is a live one): states, times, rates (1 / time), the
    continued parameter; Floquet multipliers are pure numbers."""
    model = result.model
    live = hasattr(model, "state_unit")
    time = getattr(model, "time_unit", None) if live else None
    units = {"time": unit_attrs(time), "pure": {"units": "1"},
             "rate": unit_attrs(None if time is None else "1" if time == "1" else f"1/{time}"),
             "parameter": _parameter_units(model, getattr(result, "param", None), live),
             "state": state_attrs(model if live else None, result.state_names, "")}
    for name, var in variables.items():
        kind = _kind(name)
        if kind and "units" not in var.attrs:
            extra = {k: v for k, v in units[kind].items() if k != "long_name" and v != ""}
            var.attrs = {**var.attrs, **extra}


def _parameter_units(model, param, live) -> dict:
    specs = type(model).parameter_specs() if live else {}
    names = [param] if isinstance(param, str) else list(param or ())
    found = {getattr(specs.get(p), "unit", "") for p in names}
    if len(found) == 1 and (unit := found.pop()):
        return {"units": unit}
    return {"comment": UNDECLARED} if "" in found or not names else {}


def _free_name(parent, prefix: str) -> str:
    i = 0
    while f"{prefix}{i}" in parent:
        i += 1
    return f"{prefix}{i}"


def write(writer, result, name: str | None = None) -> str:
    """Store ``result`` (a registered analysis) through the session ``writer``."""
    fmt = format_of(result)
    model = result.model
    record = model if isinstance(model, ModelRecord) else record_of(model)
    sizes, variables, extra = {"state": len(result.state_names)}, {}, {"analysis": fmt.name}
    for field, codec in fmt.fields.items():
        v, a = codec.encode(field, getattr(result, field), sizes)
        variables.update(v)
        extra.update(a)
    variables = _fitted(variables)
    _add_units(variables, result)
    _link_coordinates(variables)
    variables = {**_coordinates(variables, result.state_names), **variables}
    attrs = writer.result_attrs(model=record, extra={**extra, "complete": 1})
    parent = writer.file.get(ANALYSES)
    name = name or _free_name({} if parent is None else parent, fmt.name)
    writer.write_result(ANALYSES, name, attrs, variables)
    return name


def read(stored):
    """A stored analysis group as its class (the reader has checked it)."""
    fmt = FORMATS[stored.attrs["analysis"]]
    values = {f: codec.decode(f, stored.variables, stored.attrs)
              for f, codec in fmt.fields.items()}
    return fmt.cls(**values, state_names=stored.state_names, model=built_model(stored))
