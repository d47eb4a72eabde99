"""A field model with a vector field (an array ``(ndim, *grid.shape)``) in session files:
the vector is one variable over ``(time, component, x, y)``, its components labelled by
the axes, read back by xarray with both engines and by DiffLab, saved whole or streamed."""

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difflab as dl
from difflab.models import Grid

xr = pytest.importorskip("xarray")
ENGINES = ["h5netcdf", "netcdf4"]


class Drift(dl.models.AbstractFieldModel):
    """A scalar ``c`` and a vector ``v``, each diffusing: every Fourier mode decays as
    ``exp(-D |k|^2 t)``."""

    D: float = 0.1
    grid: Grid = eqx.field(default_factory=lambda: Grid(((0, 2 * np.pi),) * 2, (8, 6)))
    field_names: ClassVar = ("c", "v")

    def linear_part(self):
        multiplier = self.D * jnp.asarray(dl.models.laplace_multiplier(self.grid))
        return {"c": multiplier, "v": multiplier}

    def nonlinear_part(self, t, fields):
        return jax.tree.map(jnp.zeros_like, fields)

    def initial_fields(self):
        x, y = self.grid.coordinates
        return {"c": jnp.cos(y), "v": jnp.stack([jnp.sin(x), jnp.cos(2 * y)])}


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    model, chunks = Drift(), []
    folder = tmp_path_factory.mktemp("vectors")
    with dl.io.field_writer(folder / "streamed.h5", model) as writer:
        for chunk in dl.stream(model, 1.0, n_save=3, chunk_size=2):
            writer.append(chunk.ts, chunk.ys)
            chunks.append(chunk)
    traj = _whole(model, chunks)
    dl.io.save_fields(folder / "whole.h5", traj)
    return model, traj, folder


def _whole(model, chunks):
    """The run the chunks make up, as ``dl.simulate`` returns it."""
    ts = np.concatenate([c.ts for c in chunks])
    fields = {n: np.concatenate([c.ys[n] for c in chunks]) for n in model.field_names}
    return dl.solvers.FieldTrajectory(ts, fields, model.grid, "etdrk4", model=model)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("file", ["whole.h5", "streamed.h5"])
def test_a_vector_field_is_one_variable_over_its_components(saved, engine, file):
    model, traj, folder = saved
    x, y = model.grid.coordinates
    with xr.open_dataset(folder / file, group="runs/run0", engine=engine) as ds:
        assert ds["v"].dims == ("time", "component", "x", "y")
        assert ds["c"].dims == ("time", "x", "y")
        assert list(ds["component_name"].values) == ["x", "y"]
        assert ds.attrs["vector_fields"] == "v"
        t = ds["time"].values[-1]  # the closed form: sin(x) decays at |k|^2 = 1, cos(2y) at 4
        v = ds["v"].sel(component=1).values[-1]
        np.testing.assert_allclose(ds["v"].sel(component=0).values[-1],
                                   np.exp(-0.1 * t) * np.sin(x), atol=1e-9)
        np.testing.assert_allclose(v, np.exp(-0.4 * t) * np.cos(2 * y), atol=1e-9)


def test_a_vector_field_reads_back_with_its_grid(saved):
    _, traj, folder = saved
    back = dl.io.read_fields(folder / "whole.h5")
    assert back["v"].shape == (3, 2, 8, 6)
    np.testing.assert_array_equal(back["v"][:], np.asarray(traj["v"]))
    entry = dl.open(folder / "streamed.h5").summary()["runs"][0]
    assert entry["fields"] == ["c", "v"] and entry["vector_fields"] == ["v"]


def test_a_field_named_component_is_refused_beside_a_vector(tmp_path):
    class Named(Drift):
        field_names: ClassVar = ("component", "v")

        def linear_part(self):
            return dict(zip(self.field_names, super().linear_part().values()))

        def initial_fields(self):
            return dict(zip(self.field_names, super().initial_fields().values()))

    fields = {n: u[None] for n, u in Named().initial_fields().items()}
    traj = dl.solvers.FieldTrajectory(np.zeros(1), fields, Named().grid, "etdrk4",
                                      model=Named())
    with pytest.raises(ValueError, match="other than time, x, y, z, component"):
        dl.io.save_fields(tmp_path / "bad.h5", traj)
