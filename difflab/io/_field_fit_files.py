"""A field fit's data in its session file: the snapshots it fitted, each observed field a
variable over ``(time, x[, y[, z]])`` with the grid's coordinate variables, in the fit's
``field_data`` group (the fitted run, a field run, sits in ``/runs`` as ``<fit>_run``)."""

import numpy as np

from ._fields import _field_unit, grid_attrs
from ._h5 import set_attrs
from ._field_sweeps import _grid_coordinates
from ._netcdf import Variable, time_attrs, write_group

DATA_GROUP = "field_data"


def is_field_data(data) -> bool:
    """True for a field fit's snapshots (a ``FieldObservations``)."""
    return hasattr(data, "fields") and hasattr(data, "t") and not hasattr(data, "y")


def data_variables(data, model) -> dict[str, Variable]:
    """The snapshots as variables: NaN where a value was not observed."""
    grid = model.grid
    out = {"time": Variable(("time",), np.asarray(data.t, np.float64),
                            time_attrs(getattr(model, "time_unit", None))),
           **_grid_coordinates(model, grid)}
    sigma = dict(data.sigma or {})
    for name, u in data.fields.items():
        noise = {"sigma": float(sigma[name])} if name in sigma else {}
        units = _field_unit(model, name)
        out[name] = Variable(("time", *grid.axis_names), np.asarray(u, np.float64),
                             {"long_name": f"observed {name}",
                              **({"units": units} if units else {}), **noise})
    return out


def write_field_data(fit_group, data, model) -> None:
    """Add the snapshots of a field fit to its group."""
    group = fit_group.create_group(DATA_GROUP)
    set_attrs(group, {**grid_attrs(model.grid), "field_names": list(data.fields)})
    write_group(group, data_variables(data, model),
                fillvalues=dict.fromkeys(data.fields, np.nan))
