"""Session files for the io tests: one of every kind of result, built once per test run."""

import importlib.util
import shutil
import sys

import jax
import numpy as np
import pytest

import difflab as dl

T1, N_SAVE = 0.5, 51
USER_MODEL = '''\
"""A user model; running this file leaves a marker, so tests see if it ever runs."""
import pathlib

import jax.numpy as jnp

import difflab as dl

pathlib.Path(__file__).with_suffix(".ran").write_text("this file was executed")


class Decay(dl.Model):
    k: float = 0.5
    state_names = ("x",)

    def vector_field(self, t, y):
        return -self.k * y

    def initial_state(self):
        return jnp.array([2.0])
'''


def load_user_model(path):
    """Import the user model file as the app would when the user loads it."""
    spec = importlib.util.spec_from_file_location(f"user_model_{abs(hash(str(path)))}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.Decay


def _sweep(session, model, ts):
    grid = np.array([[rho, sigma] for rho in (10.0, 20.0, 28.0, 35.0) for sigma in (8.0, 10.0)])
    writer = session.new_sweep(model=model, parameter_names=["rho", "sigma"], values=grid,
                               time=ts, chunk_size=3, settings=dict(t1=T1, n_save=N_SAVE))
    for c in writer.pending_chunks():
        values = writer.parameter_values(c)
        trajs = [dl.simulate(model.replace(rho=r, sigma=s), T1, n_save=N_SAVE) for r, s in values]
        writer.write_chunk(c, ys=np.stack([np.asarray(t.ys) for t in trajs]),
                           result=[int(t.result) for t in trajs],
                           steps=[int(t.steps) for t in trajs])
    writer.finish()
    return grid


@pytest.fixture(scope="session")
def built(tmp_path_factory):
    """A session with runs (ODE, SDE with key, MLP model, user model), a sweep, a fit, a
    sensitivity and an app layout; returns its path and what was put in it."""
    folder = tmp_path_factory.mktemp("sessions")
    path = folder / "full.h5"
    user_file = folder / "decay_model.py"
    user_file.write_text(USER_MODEL)
    decay = load_user_model(user_file)(k=0.25)
    lorenz = dl.models.get("lorenz")(rho=28.0)
    ou = dl.models.get("ornstein_uhlenbeck")()
    hybrid = dl.models.get("hybrid_oscillator")(zeta=0.2, key=jax.random.key(3))
    key = jax.random.key(7)
    trajs = {
        "lorenz": dl.simulate(lorenz, T1, n_save=N_SAVE),
        "ou": dl.simulate(ou, T1, n_save=N_SAVE, key=key),
        "hybrid": dl.simulate(hybrid, T1, n_save=N_SAVE),
        "decay": dl.simulate(decay, T1, n_save=N_SAVE),
    }
    ts = np.asarray(trajs["lorenz"].ts)
    with dl.io.write_session(path, command_line="pytest session") as s:
        s.add_run(trajs["lorenz"], model=lorenz, settings=dict(t1=T1, n_save=N_SAVE))
        s.add_run(trajs["ou"], model=ou, settings=dict(t1=T1, n_save=N_SAVE, seed=7), key=key)
        s.add_run(trajs["hybrid"], model=hybrid, settings=dict(t1=T1, n_save=N_SAVE),
                  name="hybrid")
        s.add_run(trajs["decay"], model=decay, settings=dict(t1=T1, n_save=N_SAVE), name="user")
        grid = _sweep(s, lorenz, ts)
        s.add_fit(model=lorenz, parameter_names=["rho"], loss=[3.0, 1.0, 0.25],
                  parameters=[[20.0], [25.0], [27.5]], fitted_model=lorenz.replace(rho=27.5),
                  data=dict(time=ts, y=np.asarray(trajs["lorenz"].ys)[:, :1], state_names=["x"]),
                  optimizer="adam", learning_rate=0.1, info=dict(loss_name="mse"),
                  settings=dict(t1=T1, n_save=N_SAVE))
        s.add_sensitivity(model=lorenz, parameter_names=["rho", "sigma"], gradient=[0.5, -1.5],
                          dy_dp=np.ones((N_SAVE, 3, 2)), time=ts, state_names="xyz",
                          method="forward", objective="x(t1)", value=1.25, run="run0")
        s.set_app(plot_layout={"plots": [{"x": "time", "y": ["x", "y"]}]}, settings={"dark": True})
    (folder / "decay_model.ran").unlink()
    return dict(path=path, trajs=trajs, grid=grid, key=key, user_file=user_file,
                models=dict(lorenz=lorenz, ou=ou, hybrid=hybrid, decay=decay))


@pytest.fixture
def session_path(built, tmp_path):
    """A fresh copy of the full session file."""
    path = tmp_path / "session.h5"
    shutil.copyfile(built["path"], path)
    return path


def tree_of(path):
    """Every group, dataset (values) and attribute of an HDF5 file, for comparisons."""
    import h5py

    out = {}

    def visit(name, obj):
        attrs = {k: _plain(v) for k, v in obj.attrs.items()
                 if k not in ("DIMENSION_LIST", "REFERENCE_LIST")}
        value = _plain(obj[()]) if isinstance(obj, h5py.Dataset) else None
        out[name] = (type(obj).__name__, attrs, value)

    with h5py.File(path, "r") as f:
        visit("/", f)
        f.visititems(visit)
    return out


def _plain(value):
    if isinstance(value, bytes):
        return value.decode()
    array = np.asarray(value)
    if array.dtype == object:
        return [v.decode() if isinstance(v, bytes) else v for v in array.ravel().tolist()]
    return (array.dtype.str, array.shape, np.nan_to_num(array, nan=-999.0).tolist())
