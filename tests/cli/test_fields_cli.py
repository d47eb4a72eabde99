"""``difflab run`` of a field model: ``--grid``, the session file read back by xarray with
both engines, and refusals in one line."""

import numpy as np
import pytest
import xarray as xr

import difflab as dl
from difflab.cli import main


@pytest.fixture(scope="module")
def gray_scott_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("fields") / "gs.h5"
    argv = ["run", "gray_scott", "--grid", "16x16", "--set", "F=0.05", "--t1", "20",
            "--n-save", "5", "--out", str(path)]
    assert main(argv) == 0
    return path


@pytest.mark.parametrize("engine", ["h5netcdf", "netcdf4"])
def test_run_saves_the_fields_over_time_and_the_grid(gray_scott_file, engine):
    with xr.open_dataset(gray_scott_file, group="runs/run0", engine=engine) as ds:
        assert ds["u"].dims == ("time", "x", "y") and ds["v"].shape == (5, 16, 16)
        np.testing.assert_allclose(ds["time"], [0, 5, 10, 15, 20])
        np.testing.assert_allclose(ds["x"], np.arange(16) / 16)
        model = dl.models.get("gray_scott")(F=0.05).with_points((16, 16))
        expected = dl.simulate(model, 20.0, n_save=5)
        np.testing.assert_allclose(ds["v"].values, expected["v"], atol=1e-14)


def test_open_names_the_fields_and_the_grid(gray_scott_file, capsys):
    assert main(["open", str(gray_scott_file)]) == 0
    lines = capsys.readouterr().out.splitlines()
    line = next(text for text in lines if text.strip().startswith("run0"))
    assert "fields u, v on x 0..1 (16 points, periodic); y 0..1 (16 points, periodic)" in line


def test_run_prints_each_field_s_range_at_the_end(capsys):
    assert main(["run", "diffusion", "--grid", "8", "--set", "D=0.1", "--t1", "1"]) == 0
    out = capsys.readouterr().out.strip()
    peak = np.exp(-0.1 * 4 * np.pi**2) * np.sin(2 * np.pi * 2 / 8)
    assert out.startswith("t=1: u in [") and f"{peak:.6g}]" in out


def test_models_lists_the_field_models_with_their_grids(capsys):
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    assert "gray_scott" in out and "u, v on a 128x128" in out and "u on a 64x64 grid" in out
    assert all(name in out for name in dl.models.field_models())  # whole on 80 columns
    assert main(["models", "wave"]) == 0
    assert "fields: u, v on a 64x64 grid" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["run", "lorenz", "--grid", "64"], "Lorenz has no grid"),
    (["run", "gray_scott", "--grid", "64x0"], "points per axis such as 128 or 64x64"),
    (["run", "kuramoto_sivashinsky", "--grid", "8x8"], "written for grids of 1 axes"),
    (["run", "diffusion", "--grid", "32", "--set", "D=1", "--solver", "rk4", "--dt", "0.1"],
     "unstable for rk4 on this 32-point grid: its fastest mode needs dt <= 0.0002756"),
    (["run", "diffusion", "--out", "run.csv"], "session file (.h5), not a .csv"),
    (["run", "diffusion", "--y0", "1"], "starts from its initial fields"),
])
def test_bad_field_runs_are_one_line_and_exit_2(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("difflab: error: ") and message in err


def test_a_run_too_big_to_keep_streams_its_frames_to_the_file(tmp_path, monkeypatch, capsys):
    """Memory for a few frames only: without --out the run is refused; with it the frames
    go to the file chunk by chunk, and read back as the closed form of a decaying mode."""
    monkeypatch.setenv("DIFFLAB_MEMORY_LIMIT", "12 MiB")
    argv = ["run", "diffusion", "--grid", "4096", "--set", "D=0.001", "--t1", "1",
            "--n-save", "1001"]
    assert main(argv) == 2
    assert "frames" in capsys.readouterr().err
    path = tmp_path / "big.h5"
    assert main([*argv, "--out", str(path)]) == 0
    with xr.open_dataset(path, group="runs/run0", engine="h5netcdf") as ds:
        assert ds["u"].shape == (1001, 4096) and ds.attrs["complete"] == 1
        np.testing.assert_allclose(ds["time"][[0, 500, -1]], [0.0, 0.5, 1.0])
        x = ds["x"].values
        decay = np.exp(-0.001 * (2 * np.pi) ** 2 * ds["time"].values[:, None])
        exact = decay * np.sin(2 * np.pi * x)
        np.testing.assert_allclose(ds["u"].values, exact, atol=1e-12)


def test_a_diverging_run_leaves_its_finite_frames_in_the_file_marked_incomplete(tmp_path, capsys):
    path = tmp_path / "bad.h5"
    argv = ["run", "gray_scott", "--grid", "16", "--set", "k=-0.05", "--set", "F=0",
            "--set", "Du=2e-4", "--set", "Dv=1e-4", "--solver", "rk4", "--dt", "1",
            "--t1", "400", "--n-save", "81", "--out", str(path)]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "field 'u' is not finite at t = 35" in err and "frames before it are in" in err
    with xr.open_dataset(path, group="runs/run0", engine="h5netcdf") as ds:
        np.testing.assert_allclose(ds["time"], np.arange(0, 35, 5))
        assert ds.attrs["complete"] == 0 and np.isfinite(ds["u"].values).all()


def test_a_grid_too_small_for_the_walls_is_refused_before_the_file_is_written(tmp_path,
                                                                               capsys):
    """heat1d on 1 point: the refusal was labelled --name, after an incomplete run had been
    written to the file."""
    path = tmp_path / "h.h5"
    argv = ["run", "heat1d", "--grid", "1", "--t1", "0.1", "--out", str(path)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--name" not in err
    assert "Dirichlet boundaries with order-2 stencils need at least 3 points" in err
    assert not path.exists()


def test_a_sweep_file_of_a_field_model_is_refused_in_one_line(tmp_path, capsys):
    config = tmp_path / "gs.toml"
    config.write_text('model = "gray_scott"\n[solve]\nt1 = 10.0\n[space.grid]\n'
                      'F = [0.03, 0.04]\n')
    assert main(["sweep", str(config), "--out", str(tmp_path / "gs.h5")]) == 2
    err = capsys.readouterr().err.strip()
    assert "gray_scott is a field model" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "gs.h5").exists()


@pytest.mark.parametrize("engine", ["h5netcdf", "netcdf4"])
def test_heat1d_runs_on_the_grid_asked_for_and_reads_back_as_its_decaying_mode(
        heat_file, engine):
    with xr.open_dataset(heat_file, group="runs/run0", engine=engine) as ds:
        assert ds["u"].dims == ("time", "x") and ds["u"].shape == (11, 100)
        assert ds["u"].attrs["units"] == "K" and ds["time"].attrs["units"] == "s"
        x, t = ds["x"].values, ds["time"].values
        np.testing.assert_allclose(x, (np.arange(100) + 0.5) / 100)  # cell centres, walls 0, 1
        rate = 0.1 * 4 * 100**2 * np.sin(np.pi / 200) ** 2  # sin(pi x)'s rate on the grid
        np.testing.assert_allclose(ds["u"].values, np.exp(-rate * t)[:, None]
                                   * np.sin(np.pi * x), atol=1e-6)


@pytest.fixture(scope="module")
def heat_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("heat") / "f.h5"
    assert main(["run", "heat1d", "--grid", "100", "--t1", "1", "--n-save", "11",
                 "--out", str(path)]) == 0
    return path


def test_models_lists_heat1d_among_the_field_models_with_its_grid(capsys):
    assert main(["models", "heat1d"]) == 0
    out = capsys.readouterr().out
    assert "fields: u on a 50-point grid" in out and "D" in out and "m^2/s" in out
