"""Every kind of result group, exported to a flat netCDF file, passes the CF checker.

The checker (``cfchecker``, with UDUNITS-2) is independent of DiffLab: it reads the file
with netCDF-C and checks names, units and coordinates against the CF conventions. It
knows CF versions up to 1.8, so the exported copy is checked as CF-1.8 (the files use
nothing newer). Our files use no ``standard_name``, so the checker is given empty
standard-name, area-type and region tables instead of fetching them from the web.
"""

import jax.numpy as jnp
import numpy as np
import pytest
import xarray as xr

import difflab as dl

try:
    from cfchecker import cfchecks
except (ImportError, OSError) as error:  # cfunits raises FileNotFoundError without UDUNITS-2
    pytest.skip(f"the CF checker cannot be imported: {error}", allow_module_level=True)

TABLES = {
    "sn.xml": "<standard_name_table><version_number>1</version_number><last_modified>"
              "2024-01-01T00:00:00Z</last_modified></standard_name_table>",
    "area.xml": "<area_type_table><version_number>1</version_number><date>2024-01-01</date>"
                "</area_type_table>",
    "region.xml": "<standard_region_list><version_number>1</version_number><date>2024-01-01"
                  "</date></standard_region_list>",
}


def _results():
    """One small result of each kind, by the group it is saved to."""
    lorenz = dl.models.get("lorenz")()
    short = dict(dt=1e-2, solver="rk4")
    run = dl.simulate(lorenz, 1.0, **short)
    events = dl.simulate(lorenz, 1.0, events=(dl.Event("x", name="x_zero"),), **short)
    grid = dl.sweep(lorenz, dl.grid(rho=jnp.linspace(10, 30, 3), sigma=jnp.linspace(8, 12, 2)),
                    t1=0.5, observables={"x_max": "max(x)", "x_peaks": "maxima(x, k=2)"},
                    **short)
    sample = dl.sweep(lorenz, {"rho": jnp.linspace(10, 30, 4)}, t1=0.5,
                      observables={"x_final": "final(x)"}, **short)
    truth = dl.simulate(lorenz, 0.5, dt=1e-2, n_save=11)
    data = dl.io.Observations(np.asarray(truth.ts), np.asarray(truth.ys), lorenz.state_names)
    fit = dl.fit(lorenz.replace(rho=27.5), data, ["rho"], dt=1e-2, fit_max_steps=5, throw=False)
    sens = dl.sensitivity(lorenz, 0.5, params=["rho"], dt=1e-2, n_save=11)
    lotka = dl.simulate(dl.models.get("lotka_volterra")(), 1.0, **short)
    sir = dl.sensitivity(dl.models.get("sir")(), 1.0, params=["beta"], dt=0.1, n_save=3)
    return {**_analyses(lorenz), "runs/run": run, "runs/events": events, "sweeps/grid": grid,
            "sweeps/sample": sample, "fits/fit": fit, "sensitivities/sens": sens,
            "runs/lotka": lotka,
            "sensitivities/sir": sir}


def _analyses(lorenz) -> dict:
    """One small result of each analysis kind, all of Lorenz (every unit declared):
    a branch in rho through its Hopf point, the Hopf curve in (rho, sigma), a few
    periodic orbits from that point, a Lyapunov spectrum and a Poincare section."""
    branch = dl.continuation(lorenz, "rho", 23.0, 26.0, state=[8.0, 8.0, 22.0], ds=0.5,
                             ds_max=0.5, max_points=12)
    hopf = next(p for p in branch.special if p.kind == "hopf")
    return {
        "analyses/equilibria": dl.equilibria(lorenz),
        "analyses/branch": branch,
        "analyses/hopf_curve": dl.continuation(lorenz, ("rho", "sigma"), 9.0, 11.0,
                                               from_point=hopf, max_points=10),
        "analyses/orbits": dl.periodic_orbits(lorenz, "rho", hopf, 20.0, 26.0, segments=4,
                                              steps=100, max_points=4),
        "analyses/spectrum": dl.lyapunov(lorenz, 1.0, dt=0.01, records=20),
        "analyses/section": dl.poincare(lorenz, "z", 5.0, value=27.0, y0=[1.0, 1.0, 20.0]),
    }


@pytest.fixture(scope="module")
def checked(tmp_path_factory):
    """``{group: (errors, warnings)}`` of each result's group, exported flat and checked."""
    folder = tmp_path_factory.mktemp("cf")
    for name, text in TABLES.items():
        (folder / name).write_text(f'<?xml version="1.0"?>{text}')
    path = folder / "session.h5"
    for group, result in _results().items():
        dl.io.save(path, result, name=group.split("/")[1])
    out = {}
    for group in GROUPS:
        flat = folder / f"{group.replace('/', '_')}.nc"
        with xr.open_dataset(path, group=group, engine="h5netcdf") as ds:
            ds.attrs["Conventions"] = "CF-1.8"
            ds.to_netcdf(flat, engine="netcdf4")
        out[group] = _check(flat, folder)
    out["path"] = path
    return out


ANALYSES = ("analyses/equilibria", "analyses/branch", "analyses/hopf_curve", "analyses/orbits",
            "analyses/spectrum", "analyses/section")
GROUPS = ("runs/run", "runs/events", "sweeps/grid", "sweeps/sample", "fits/fit",
          "sensitivities/sens", "runs/lotka", "sensitivities/sir", *ANALYSES)


def _check(flat, folder) -> tuple[list, list]:
    checker = cfchecks.CFChecker(
        silent=True, version="1.8", cfStandardNamesXML=str(folder / "sn.xml"),
        cfAreaTypesXML=str(folder / "area.xml"), cfRegionNamesXML=str(folder / "region.xml"))
    results = checker.checker(str(flat))
    parts = [("global", results["global"]), *results["variables"].items()]
    errors = [f"{where}: {m}" for where, res in parts for m in res["FATAL"] + res["ERROR"]]
    warnings = [f"{where}: {m}" for where, res in parts for m in res["WARN"]]
    return errors, warnings


@pytest.mark.parametrize("group", GROUPS)
def test_each_result_group_is_valid_cf(checked, group):
    errors, warnings = checked[group]
    assert errors == [], errors
    assert [w for w in warnings if "units" in w] == [], warnings  # every physical quantity has units
    assert [w for w in warnings if "(2.3)" in w] == [], warnings  # every name is a CF name


def test_derivatives_carry_the_units_udunits_reads(checked):
    """sir's dy_dp is in people per (1/day): the checker parses it (no error above)."""
    with xr.open_dataset(checked["path"], group="sensitivities/sir", engine="h5netcdf") as ds:
        assert ds.dy_dp.attrs["units"] == "1/(1/day)" and ds.time.attrs["units"] == "day"


AXES = {  # group: ({variable: coordinates it must have}, the axis variable and its units)
    "analyses/equilibria": ({"states": {"equilibrium", "state"}}, None),
    "analyses/branch": ({"states": {"point", "values"}, "eigenvalues_real": {"point", "values"},
                         "stable": {"point", "values"}}, ("values", "point")),
    "analyses/hopf_curve": ({"states": {"point"}, "values": {"point", "param"}}, None),
    "analyses/orbits": ({"periods": {"orbit", "values"}, "states": {"orbit", "values"},
                         "multipliers_real": {"orbit", "values"}}, ("values", "orbit")),
    "analyses/spectrum": ({"history": {"record", "times"}, "exponents": {"exponent"}},
                          ("times", "record")),
    "analyses/section": ({"ys": {"crossing", "ts"}}, ("ts", "crossing")),
}


@pytest.mark.parametrize("engine", ["h5netcdf", "netcdf4"])
@pytest.mark.parametrize("group", ANALYSES)
def test_analysis_variables_lie_along_what_their_axis_stands_for(checked, group, engine):
    """A branch's variables have the continued parameter as coordinate, a Lyapunov history
    its times, a section its crossing times; every axis an index 0, 1, ..."""
    variables, axis = AXES[group]
    with xr.open_dataset(checked["path"], group=group, engine=engine) as ds:
        for name, coords in variables.items():
            assert coords <= set(ds[name].coords), (name, list(ds[name].coords))
        for dim, n in ds.sizes.items():
            if dim in ds.coords and dim != "state":
                np.testing.assert_array_equal(ds[dim].values, np.arange(n))
        if axis is not None:
            values, dim = axis
            assert ds[values].dims == (dim,) and ds.sizes[dim] > 1
            assert ds[values].attrs["units"] == "1"  # Lorenz is dimensionless
