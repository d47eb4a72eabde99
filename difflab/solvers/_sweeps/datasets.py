"""Sweeps as ``xarray.Dataset``: over the axes of a grid, or over their points.

xarray is imported on use; DiffLab does not depend on it. ``difflab.io`` uses
:func:`sweep_dataset` for stored sweeps too.
"""

import numpy as np

_AFTER_POINT = {1: (), 2: ("state",), 3: ("time", "state")}  # a variable's dims after its points
UNDECLARED = "units not declared by the model"


def _unit_attrs(unit) -> dict:
    """``units`` where the model declares them; else a comment saying so (never a guess)."""
    return {"units": unit} if unit else {"comment": UNDECLARED}


def _state_attrs(model, state_names) -> dict:
    units = {model.state_unit(s) for s in state_names} if hasattr(model, "state_unit") else {None}
    return {"long_name": "state", **(_unit_attrs(units.pop()) if len(units) == 1 else
                                     {"comment": "units differ by state"})}


def index_dimension(observable: str) -> str:
    """The dimension along the values of an observable that keeps a vector per point
    (as session files name it too)."""
    return f"{observable}_index"


def _xarray():
    try:
        import xarray
    except ImportError:
        raise ImportError("to_xarray() needs xarray (pip install xarray)") from None
    return xarray


def _axis(values, shape, k: int) -> np.ndarray:
    """The values of grid axis ``k`` from a column holding one value per grid point."""
    index = tuple(slice(None) if i == k else 0 for i in range(len(shape)))
    return np.asarray(values).reshape(shape)[index]


def sweep_dataset(columns: dict, shape, gridded: bool, time, state_names, variables: dict,
                  attrs=None):
    """A sweep as a Dataset.

    ``columns`` maps each swept name (``"rho"``, ``"y0.x"``, ``"y0"``) to its values, one
    per point; ``shape`` is the space's (its number of points, unless a grid);
    ``time`` and each of ``variables`` are ``(values, attrs)``, a variable's values points
    first, then ``(time, state)``, ``(state,)`` or nothing, or ``(values, attrs, dims)``
    naming the dimensions after the points (a vector observable's ``<name>_index``). ``gridded``: the points are a
    grid of ``shape``, one axis per column, in order (``difflab.grid``): the columns become
    dimensions, and ``point`` (each grid point's index) a coordinate over them. Else the
    points stay on a ``point`` dimension, the columns coordinates along it.
    """
    n = int(np.prod(shape))
    if gridded and len(shape) == len(columns):
        dims, shape = tuple(columns), tuple(int(s) for s in shape)
        coords = {c: _axis(v, shape, k) for k, (c, v) in enumerate(columns.items())}
        coords["point"] = (dims, np.arange(n).reshape(shape))
    else:
        dims, shape = ("point",), (n,)
        coords = {"point": np.arange(n),
                  **{c: (("point", "state")[: np.ndim(v)], v) for c, v in columns.items()}}
    coords.update(time=("time", np.asarray(time[0]), time[1]), state=list(state_names))
    data = {}
    for name, (values, var_attrs, *after) in variables.items():
        values = np.asarray(values)
        after = tuple(after[0]) if after else _AFTER_POINT[values.ndim]
        if name not in coords:
            data[name] = (dims + after, values.reshape(*shape, *values.shape[1:]), var_attrs)
            coords.update({d: np.arange(n) for d, n in zip(after, values.shape[1:])
                           if d not in ("time", "state")})
    return _xarray().Dataset(data, coords, attrs)


def result_dataset(res):
    """A :class:`SweepResult` as a Dataset (see :func:`sweep_dataset`)."""
    space = res.space
    model = getattr(res, "model", None)
    variables = {"y": (res.y, _state_attrs(model, res.state_names)),
                 "result": (res.result, {"long_name": "result code"}),
                 "steps": (res.steps, {"long_name": "steps taken"}),
                 **{n: _observable(n, v) for n, v in res.observables.items()}}
    return sweep_dataset(space.columns, space.shape, space.kind == "grid",
                         (res.ts, {"long_name": "simulation time",
                                   **_unit_attrs(getattr(model, "time_unit", None))}),
                         res.state_names, variables,
                         {"space_kind": space.kind})


def _observable(name: str, values) -> tuple:
    attrs = {"long_name": f"observable {name}"}
    return (values, attrs) if np.ndim(values) == 1 else (values, attrs, (index_dimension(name),))
