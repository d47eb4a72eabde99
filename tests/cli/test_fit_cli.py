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
    assert len(session.fits) == 1 and len(session.runs) == 1
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
