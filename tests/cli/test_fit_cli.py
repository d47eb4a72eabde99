"""``difflab fit CONFIG --out FILE``: the shipped example, its output file, one-line errors."""

import json
from pathlib import Path

import h5py
import numpy as np
import pytest

import difflab as dl
from difflab.cli import main

EXAMPLE = Path(__file__).parents[2] / "examples" / "fit_lotka_volterra"
TRUTH = {"alpha": 1.1, "beta": 0.4, "gamma": 0.4, "delta": 0.1}  # make_observations.py


@pytest.mark.slow
def test_the_lotka_volterra_example_recovers_its_parameters(tmp_path, capsys):
    out = tmp_path / "lv_fit.h5"
    assert main(["fit", str(EXAMPLE / "fit.toml"), "--out", str(out), "--json"]) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert report["result"] == 0 and report["names"] == list(TRUTH)
    for name, value in TRUTH.items():  # the example's noise seed was fixed beforehand
        assert abs(report["params"][name] - value) < 2 * report["stderr"][name], name
    assert "step" in captured.err and "loss" in captured.err  # progress on stderr

    session = dl.open(out)
    assert len(session.fits) == 1 and session.runs.names() == ["lotka_volterra_run"]
    with h5py.File(out) as f:
        fit = f["fits/lotka_volterra"]
        loss = fit["loss"][()]
        assert len(loss) == report["steps"] and loss[-1] == pytest.approx(report["chi2"] / 2)
        assert fit["parameters"].shape == (len(loss), 4)
        assert fit["data/y"].shape == (121, 2) and fit.attrs["complete"] == 1
        np.testing.assert_allclose(fit.attrs["stderr"], [report["stderr"][n] for n in TRUTH])


def _write(tmp_path, text):
    (tmp_path / "obs.csv").write_text("t,prey,predator\n0,10,10\n1,5,11\n2,2,10\n")
    path = tmp_path / "fit.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("text, message", [
    ('model = "lotka_volterra"\n', "data must be given"),
    ('model = "lotka_volterra"\ndata = "obs.csv"\ncolour = 1\n', "unknown key colour"),
    ('model = "lotka_volterra"\ndata = "obs.csv"\n[fit]\nstarts = 0\n', "fit.starts must be a positive"),
    ('model = "lotka_volterra"\ndata = "obs.csv"\n[fit]\nmethod = "newton"\n', "unknown fit method"),
    ('model = "lotka_volterra"\ndata = "missing.csv"\n', "data: "),
    ('model = "lotka_wolterra"\ndata = "obs.csv"\n', "model: "),
    ('model = "lotka_volterra"\ndata = "obs.csv"\nparams = ["alpah"]\n', "no parameter 'alpah'"),
    ('model = "lotka_volterra"\ndata = "obs.csv"\n[bounds]\nalpha = [1]\n', "bounds.alpha must be"),
    ('model = "lotka_volterra"\ndata = "obs.csv"\n[fit]\nrtol = 1e-6\n',
     "fit.rtol is now fit.fit_rtol (the optimizer's; the simulation's is solve.rtol)"),
    ('model = "lotka_volterra"\ndata = "obs.csv"\n[solve]\nkey = 1\n', "unknown key solve.key"),
])
def test_bad_fit_files_give_one_line_and_exit_2(tmp_path, capsys, text, message):
    config = _write(tmp_path, text)
    assert main(["fit", str(config), "--out", str(tmp_path / "fit.h5")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("difflab: error:") and message in err and "\n" not in err


def test_out_must_be_hdf5(tmp_path, capsys):
    assert main(["fit", str(EXAMPLE / "fit.toml"), "--out", str(tmp_path / "fit.csv")]) == 2
    assert ".h5" in capsys.readouterr().err


def test_a_multi_start_fit_shows_progress_and_writes_each_start(tmp_path, capsys):
    t = np.linspace(0.5, 10.0, 20)
    rows = "\n".join(f"{a},{b}" for a, b in zip(t, 5.0 * np.exp(-0.3 * t)))
    (tmp_path / "obs.csv").write_text("t,y\n" + rows + "\n")
    config = tmp_path / "fit.toml"
    (tmp_path / "decay.eqn").write_text("params: k = 1.0 in (0.01, 10), y0 = 3 in (0.1, 10)\n"
                                        "init: y = y0\ndy/dt = -k*y\n")
    config.write_text('model = "decay.eqn"\ndata = "obs.csv"\n'
                      '[solve]\nsolver = "rk4"\ndt = 0.05\n'
                      '[fit]\nstarts = 6\nsigma = 0.01\nchunk_size = 2\n')
    out = tmp_path / "fit.h5"
    assert main(["fit", str(config), "--out", str(out), "--devices", "2"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "compiling the fit (6 starts); progress follows after each chunk of steps"
    assert err[1].startswith("step     2  loss ") and "of 6 starts finished)" in err[1]
    assert "(6 of 6 starts finished)" in err[-1]
    with h5py.File(out) as f:
        fit = f["fits/fit0"]
        assert fit["start_done"][()].tolist() == [1] * 6
        assert fit.attrs["run"] == b"fit0_run" and list(f["runs"]) == ["fit0_run"]  # as in Python
        losses = fit["start_loss"][()]
        assert np.all(np.isfinite(losses)) and fit["start_parameters"].shape[0] == 6
    back = dl.open(out).fits[0]
    np.testing.assert_array_equal(back.start_losses, losses)
    assert back.start_losses[back.best_start] == losses.min()
