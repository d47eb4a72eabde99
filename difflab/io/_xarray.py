"""A stored sweep as an ``xarray.Dataset``, on its grid when it swept one."""

import numpy as np

from ..solvers import sweep_dataset


def stored_dataset(sweep):
    """A stored :class:`difflab.io.Sweep` as a Dataset, read into memory.

    The grid comes from the attributes ``dl.sweep`` writes: ``space_kind``,
    ``space_shape`` and ``swept`` (the space's columns, in order).
    """
    table = np.asarray(sweep.parameters)
    columns = {n: table[:, j] for j, n in enumerate(sweep.parameter_names)}
    if "y0" in sweep.variables:
        y0 = np.asarray(sweep.variables["y0"].data)
        columns.update({f"y0.{s}": y0[:, j] for j, s in enumerate(sweep.state_names)}, y0=y0)
    swept = sweep.attrs.get("swept", list(sweep.parameter_names))
    swept = [swept] if isinstance(swept, str) else list(swept)
    if not all(c in columns for c in swept):
        swept = list(sweep.parameter_names)
    shape = np.atleast_1d(sweep.attrs.get("space_shape", sweep.n_points))
    variables = {n: (v.data, v.attrs) for n, v in sweep.variables.items()
                 if v.dims[:1] == ("point",) and n not in ("point", "parameters")}
    time = sweep.variables["time"]
    return sweep_dataset({c: columns[c] for c in swept}, shape,
                         sweep.attrs.get("space_kind") == "grid", (time.data, time.attrs),
                         sweep.state_names, variables, dict(sweep.attrs))
