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


def test_ctrl_c_saves_the_points_done_marked_incomplete(tmp_path, capsys, monkeypatch):
    """An interrupted field sweep saved nothing: the points done are now in the file."""
    from difflab.cli import field_sweep_command

    shown = field_sweep_command._Bar.__call__

    def interrupted_after_one(bar, chunk):
        shown(bar, chunk)
        raise KeyboardInterrupt

    monkeypatch.setattr(field_sweep_command._Bar, "__call__", interrupted_after_one)
    out = tmp_path / "d.h5"
    assert main(["sweep", "diffusion", "--grid", "8", "--param", "D=0.1:0.5:5", "--t1", "0.1",
                 "--chunk-size", "2", "--devices", "1", "--out", str(out)]) == 130
    err = capsys.readouterr().err
    assert f"interrupted after 2 of 5 points; they are saved in {out} (/sweeps/sweep0)" in err
    with xr.open_dataset(out, group="sweeps/sweep0", engine="h5netcdf") as ds:
        np.testing.assert_array_equal(ds["result"], [0, 0, -1, -1, -1])
        base = dl.models.get("diffusion")().with_points((8,))
        run = dl.simulate(base.replace(D=0.2), 0.1, dt=float(ds.attrs["dt"]), n_save=2)
        np.testing.assert_allclose(ds["u"][1], run["u"][-1], atol=1e-12)
        assert np.isnan(ds["u"][2:]).all()
    assert not dl.open(out).sweeps["sweep0"].complete
    assert main(["open", str(out)]) == 0
    line = next(text for text in capsys.readouterr().out.splitlines()
                if text.strip().startswith("sweep0"))
    assert "5 points, 0 failed, 3 not run" in line and line.endswith("(incomplete)")


def test_a_second_ctrl_c_waits_for_the_points_to_be_saved(tmp_path, capsys, monkeypatch):
    """Ctrl-C again while the points done were being saved lost them."""
    import os
    import signal

    from difflab.cli import field_sweep_command

    shown, save = field_sweep_command._Bar.__call__, dl.io.save

    def interrupted_after_one(bar, chunk):
        shown(bar, chunk)
        raise KeyboardInterrupt

    def pressed_again(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGINT)
        return save(*args, **kwargs)

    monkeypatch.setattr(field_sweep_command._Bar, "__call__", interrupted_after_one)
    monkeypatch.setattr(dl.io, "save", pressed_again)
    out = tmp_path / "d.h5"
    assert main(["sweep", "diffusion", "--grid", "8", "--param", "D=0.1:0.5:5", "--t1", "0.1",
                 "--chunk-size", "2", "--devices", "1", "--out", str(out)]) == 130
    assert "they are saved in" in capsys.readouterr().err
    np.testing.assert_array_equal(dl.open(out).sweeps[0].result, [0, 0, -1, -1, -1])


def test_the_same_command_again_finishes_an_interrupted_sweep(tmp_path, capsys, monkeypatch):
    """As the help says of every sweep: the points left are run, the sweep is complete and
    equal to one never interrupted."""
    from difflab.cli import field_sweep_command

    shown = field_sweep_command._Bar.__call__

    def interrupted_after_one(bar, chunk):
        shown(bar, chunk)
        raise KeyboardInterrupt

    argv = ["sweep", "diffusion", "--grid", "8", "--param", "D=0.1:0.5:5", "--t1", "0.1",
            "--chunk-size", "2", "--devices", "1", "--out"]
    out, whole = tmp_path / "d.h5", tmp_path / "whole.h5"
    with monkeypatch.context() as patch:
        patch.setattr(field_sweep_command._Bar, "__call__", interrupted_after_one)
        assert main([*argv, str(out)]) == 130
    assert "run the same command again to finish it" in capsys.readouterr().err
    assert main([*argv, str(out)]) == 0 and main([*argv, str(whole)]) == 0
    assert "5/5" in capsys.readouterr().err
    session = dl.open(out)
    assert session.sweeps.names() == ["sweep0"] and session.sweeps[0].complete
    with xr.open_dataset(out, group="sweeps/sweep0", engine="h5netcdf") as ds, \
            xr.open_dataset(whole, group="sweeps/sweep0", engine="h5netcdf") as ref:
        np.testing.assert_array_equal(ds["result"], [0] * 5)
        np.testing.assert_array_equal(ds["u"], ref["u"])
        np.testing.assert_array_equal(ds["mean_u"], ref["mean_u"])


def test_open_tells_a_field_sweep_s_points(swept, capsys):
    """``difflab open`` failed on every field sweep (KeyError: 'chunks_done')."""
    assert main(["open", str(swept)]) == 0
    line = next(text for text in capsys.readouterr().out.splitlines()
                if text.strip().startswith("sweep0"))
    assert "3 points, 0 failed" in line and "fields u, v on x 0..1" in line
    assert "incomplete" not in line


@pytest.mark.parametrize("argv, message", [
    (["lorenz", "--param", "rho=1:2:2"], "--param sweeps a field model; lorenz is not one"),
    (["diffusion", "--param", "D=0.1:0.2"], "--param expects NAME=START:STOP:N"),
    (["diffusion", "--param", "D=0.1:0.2:2", "--observable", "mean(w)"], "no field 'w'"),
])
def test_bad_input_gets_one_line(tmp_path, capsys, argv, message):
    assert main(["sweep", *argv, "--out", str(tmp_path / "x.h5")]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1
