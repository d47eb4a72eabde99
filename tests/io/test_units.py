"""Units in files are the model's, or say they are unknown: never a placeholder (issue 34).

Files are read back with xarray through both netCDF engines."""

import jax.numpy as jnp
import pytest
import xarray as xr

import difflab as dl

ENGINES = ["h5netcdf", "netcdf4"]
UNKNOWN = "units not declared by the model"


class Cart(dl.Model):
    """A cart with declared units, by state name."""

    k: float = dl.param(1.0, unit="1/s^2")
    state_names = ("x", "v")
    time_unit, state_units = "s", {"x": "m", "v": "m/s"}

    def vector_field(self, t, y):
        return jnp.stack([y[1], -self.k * y[0]])

    def initial_state(self):
        return jnp.array([1.0, 0.0])


class Bare(Cart):
    """The same cart, units not declared."""

    time_unit = state_units = None


def _saved(tmp_path, model, name, **kwargs):
    path = tmp_path / f"{name}.h5"
    dl.io.save(path, dl.simulate(model, 0.05, dt=1e-3, **kwargs))
    return path


def _attrs(path, var, engine, group="runs/run0"):
    with xr.open_dataset(path, group=group, engine=engine, decode_timedelta=False) as ds:
        return dict(ds[var].attrs)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_run_carries_the_units_its_model_declares(tmp_path, engine):
    lorenz = _saved(tmp_path, dl.models.get("lorenz")(), "lorenz")
    assert _attrs(lorenz, "time", engine) == {"long_name": "simulation time", "units": "1"}
    assert _attrs(lorenz, "y", engine)["units"] == "1"   # dimensionless, as Lorenz is
    cart = _saved(tmp_path, Cart(), "cart")
    assert _attrs(cart, "time", engine)["units"] == "s"
    y = _attrs(cart, "y", engine)
    assert "units" not in y and y["comment"] == "units differ by state: x m, v m/s"


@pytest.mark.parametrize("engine", ENGINES)
def test_undeclared_units_stay_unknown_and_say_so(tmp_path, engine):
    """Before: ``time_units or "s"`` and ``state_units or "1"`` were written for every model."""
    bare = _saved(tmp_path, Bare(), "bare")
    for var in ("time", "y"):
        attrs = _attrs(bare, var, engine)
        assert "units" not in attrs and attrs["comment"] == UNKNOWN, var


@pytest.mark.parametrize("engine", ENGINES)
def test_events_are_measured_like_the_run(tmp_path, engine):
    pendulum = dl.models.get("pendulum")()
    path = _saved(tmp_path, pendulum, "events", events=dl.Event("omega", name="turn"))
    assert _attrs(path, "event_time", engine)["units"] == "s"
    assert _attrs(path, "event_y", engine)["comment"] == "units differ by state: theta rad, omega rad/s"


def test_every_built_in_model_declares_its_units():
    for name in ("pendulum", "double_pendulum", "duffing", "spring_chain", "nbody", "lorenz",
                 "van_der_pol", "fitzhugh_nagumo", "lotka_volterra", "sir", "kuramoto",
                 "ornstein_uhlenbeck", "hybrid_oscillator"):
        model = dl.models.get(name)()
        assert model.time_unit, name
        assert all(model.state_unit(s) for s in model.state_names), name
    chain = dl.models.get("spring_chain")()
    assert (chain.state_unit("x0"), chain.state_unit("p0")) == ("m", "kg m/s")


def test_a_unit_per_state_must_match_the_states():
    with pytest.raises(TypeError, match="2 units for 3 states"):
        class Wrong(Cart):
            state_names = ("x", "v", "w")
            state_units = ("m", "m/s")


@pytest.mark.parametrize("engine", ENGINES)
def test_a_sweep_carries_parameter_time_and_state_units(tmp_path, engine):
    """Before: an undeclared parameter unit was written as "1"."""
    path = tmp_path / "sweep.h5"
    dl.sweep(Cart(), {"k": jnp.array([1.0, 2.0])}, 0.01, dt=1e-3, out=path)
    group = "sweeps/sweep0"
    assert _attrs(path, "parameters", engine, group)["units"] == "1/s^2"
    assert _attrs(path, "time", engine, group)["units"] == "s"
    assert "x m, v m/s" in _attrs(path, "y", engine, group)["comment"]


def test_undeclared_parameter_units_are_not_written_as_one(tmp_path):
    class Loose(Bare):
        c: float = 0.5  # a plain float: no unit declared

    path = tmp_path / "sweep.h5"
    dl.sweep(Loose(), {"k": jnp.array([1.0]), "c": jnp.array([0.1])}, 0.01, dt=1e-3, out=path)
    attrs = _attrs(path, "parameters", "h5netcdf", "sweeps/sweep0")
    assert "units" not in attrs and list(attrs["parameter_units"]) == ["1/s^2", ""]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_fit_carries_parameter_loss_and_data_units(tmp_path, engine):
    """Before: a fit's parameters, losses and data noise had no units."""
    import numpy as np

    path = tmp_path / "fit.h5"
    data = dict(time=np.array([0.0, 1.0]), y=np.array([[1.0], [0.5]]), state_names=["x"],
                sigma=np.array([[0.1], [0.1]]))
    with dl.io.write_session(path) as s:
        s.add_fit(model=Cart(), parameter_names=["k"], loss=[2.0, 1.0], parameters=[[1.0], [1.2]],
                  data=data, optimizer="lm", loss_name="0.5 * chi^2")
    assert _attrs(path, "parameters", engine, "fits/fit0")["units"] == "1/s^2"
    assert _attrs(path, "loss", engine, "fits/fit0")["units"] == "1"   # chi^2: a pure number
    assert _attrs(path, "y", engine, "fits/fit0/data")["units"] == "m"
    assert _attrs(path, "sigma", engine, "fits/fit0/data")["units"] == "m"
    assert _attrs(path, "time", engine, "fits/fit0/data")["units"] == "s"


@pytest.mark.parametrize("engine", ENGINES)
def test_analyses_carry_units_of_states_times_rates_and_the_parameter(tmp_path, engine):
    """Before: no analysis variable had units."""
    path = tmp_path / "analyses.h5"
    cart = Cart()
    dl.io.save(path, dl.lyapunov(cart, 2.0, dt=0.01), name="spectrum")
    dl.io.save(path, dl.continuation(cart, "k", 1.0, 2.0), name="branch")
    group = "analyses/spectrum"
    assert _attrs(path, "exponents", engine, group)["units"] == "1/s"
    assert _attrs(path, "times", engine, group)["units"] == "s"
    assert "x m, v m/s" in _attrs(path, "final_state", engine, group)["comment"]
    assert _attrs(path, "values", engine, "analyses/branch")["units"] == "1/s^2"
    assert _attrs(path, "eigenvalues_real", engine, "analyses/branch")["units"] == "1/s"


def _sensitivity(tmp_path, model, states):
    import numpy as np

    path = tmp_path / f"sens_{type(model).__name__}_{len(states)}.h5"
    with dl.io.write_session(path) as s:
        s.add_sensitivity(model=model, parameter_names=["k"], dy_dp=np.ones((2, len(states), 1)),
                          time=[0.0, 1.0], state_names=states)
    return path


@pytest.mark.parametrize("engine", ENGINES)
def test_dy_dp_is_in_units_of_the_state_over_the_parameter(tmp_path, engine):
    """Before: ``dy_dp`` had no units whatever the model declared."""
    group = "sensitivities/sensitivity0"
    one = _attrs(_sensitivity(tmp_path, Cart(), ["x"]), "dy_dp", engine, group)
    assert one["units"] == "m/(1/s^2)"  # m s^2, as UDUNITS reads it
    both = _attrs(_sensitivity(tmp_path, Cart(), ["x", "v"]), "dy_dp", engine, group)
    assert "units" not in both
    assert both["comment"] == "units differ: d x / d k m/(1/s^2), d v / d k m/s/(1/s^2)"
    bare = _attrs(_sensitivity(tmp_path, Bare(), ["x"]), "dy_dp", engine, group)
    assert "units" not in bare and bare["comment"] == UNKNOWN



def test_every_built_in_unit_is_one_udunits_reads():
    """Before: Lotka-Volterra's rates were in "1/time", which UDUNITS rejects."""
    try:
        from cfunits import Units
    except (ImportError, OSError) as error:  # cfunits needs the UDUNITS-2 library
        pytest.skip(f"cfunits cannot be imported: {error}")
    checked = 0
    for name in dl.models.available():
        model = dl.models.get(name)()
        units = {"time": model.time_unit, **{s: model.state_unit(s) for s in model.state_names},
                 **{p: spec.unit for p, spec in type(model).parameter_specs().items()}}
        for what, unit in units.items():
            if unit:  # undeclared stays undeclared (Ornstein-Uhlenbeck's sigma, in s^-1/2)
                assert Units(unit).isvalid, f"{name}: {what} in {unit!r}"
                checked += 1
    assert checked > 50
    assert Units("m/(1/s^2)").equals(Units("m s^2"))  # dy_dp's units, as written above
