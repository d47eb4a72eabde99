"""``difflab sweep FIELD_MODEL --param ...``: a field model swept from the command line,
the file read back by xarray against runs of each point, and refusals in one line."""

import numpy as np
import pytest
import xarray as xr

import difflab as dl
from difflab.cli import main


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    path = tmp_path_factory.mktemp("fsweep") / "gs.h5"
    argv = ["sweep", "gray_scott", "--grid", "16x16", "--param", "F=0.02:0.06:3",
            "--observable", "mean(u)", "--observable", "vmax=max(v)", "--t1", "10",
            "--out", str(path)]
    assert main(argv) == 0
    return path


def test_the_file_holds_each_point_as_its_own_run_gives(swept):
    with xr.open_dataset(swept, group="sweeps/sweep0", engine="h5netcdf") as ds:
        np.testing.assert_allclose(ds["F"], [0.02, 0.04, 0.06])
        assert ds["mean_u"].dims == ("F",) and ds["v"].dims == ("F", "x", "y")
        base = dl.models.get("gray_scott")().with_points((16, 16))
        for i, F in enumerate(ds["F"].values):
            run = dl.simulate(base.replace(F=F), 10.0, dt=float(ds.attrs["dt"]), n_save=2)
            np.testing.assert_allclose(ds["mean_u"][i], np.mean(run["u"][-1]), rtol=1e-12)
            np.testing.assert_allclose(ds["vmax"][i], np.max(run["v"][-1]), rtol=1e-12)
            np.testing.assert_allclose(ds["u"][i], run["u"][-1], atol=1e-12)


def test_the_progress_bar_and_summary_go_to_stderr(tmp_path, capsys):
    out = tmp_path / "d.h5"
    assert main(["sweep", "diffusion", "--grid", "8", "--param", "D=0.1:0.2:2", "--t1", "0.1",
                 "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "2/2" in err and f"sweep0 in {out}: 2 points, 0 failed" in err
    with xr.open_dataset(out, group="sweeps/sweep0", engine="netcdf4") as ds:
        assert set(ds.data_vars) == {"mean_u", "result", "u"}  # each field's mean by default


@pytest.mark.parametrize("argv, message", [
    (["lorenz", "--param", "rho=1:2:2"], "--param sweeps a field model; lorenz is not one"),
    (["diffusion", "--param", "D=0.1:0.2"], "--param expects NAME=START:STOP:N"),
    (["diffusion", "--param", "D=0.1:0.2:2", "--observable", "mean(w)"], "no field 'w'"),
])
def test_bad_input_gets_one_line(tmp_path, capsys, argv, message):
    assert main(["sweep", *argv, "--out", str(tmp_path / "x.h5")]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1
