"""``difflab equilibria``, ``continue`` and ``lyapunov`` through the real entry point."""

import json
import subprocess
import sys

import pytest

from difflab.cli.main import main


def _difflab(*args):
    return subprocess.run([sys.executable, "-m", "difflab", *args], capture_output=True,
                          text=True, timeout=300, check=False)


def _json(*args):
    result = _difflab(*args, "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)  # exactly one JSON object on stdout


@pytest.mark.slow
def test_equilibria_json():
    data = _json("equilibria", "lorenz", "--set", "rho=10", "--box", "z=-1:40")
    assert list(data) == ["equilibria"] and len(data["equilibria"]) == 3
    for item in data["equilibria"]:
        assert set(item) == {"state", "eigenvalues", "stability"}
        assert set(item["state"]) == {"x", "y", "z"}
        assert all(len(pair) == 2 for pair in item["eigenvalues"])
    assert [e["stability"] for e in data["equilibria"]] == ["stable focus", "saddle",
                                                            "stable focus"]


@pytest.mark.slow
def test_continue_json():
    data = _json("continue", "lorenz", "--param", "rho", "--from", "2", "--to", "30",
                 "--state", "x=1.4", "--state", "y=1.4")
    assert data["param"] == "rho" and set(data) == {"param", "points", "special"}
    assert set(data["points"][0]) == {"value", "state", "stable"}
    assert data["points"][0]["value"] == 2.0 and data["points"][-1]["value"] == 30.0
    (hopf,) = data["special"]
    assert set(hopf) == {"type", "value", "state"} and hopf["type"] == "hopf"
    assert hopf["value"] == pytest.approx(10 * (10 + 8 / 3 + 3) / (10 - 8 / 3 - 1), rel=1e-6)


@pytest.mark.slow
def test_lyapunov_json():
    data = _json("lyapunov", "lorenz", "--t1", "200", "--transient", "10")
    assert list(data) == ["exponents"] and len(data["exponents"]) == 3
    assert data["exponents"][0] == pytest.approx(0.9, abs=0.1)


@pytest.mark.parametrize("args", [
    ("equilibria", "lorenz", "--box", "z=3"),
    ("equilibria", "lorenz", "--box", "q=0:1"),
    ("continue", "lorenz", "--param", "nope", "--from", "0", "--to", "1"),
    ("continue", "lorenz", "--param", "rho", "--from", "0"),
    ("continue", "lorenz", "--param", "rho", "--from", "0", "--to", "1", "--state", "w=1"),
    ("continue", "lorenz", "--param", "rho", "--from", "0", "--to", "1", "--param2", "beta"),
    ("lyapunov", "lorenz", "--t1", "-5"),
    ("lyapunov", "lorenz", "--t1", "5", "--set", "rho=x"),
])
def test_bad_input_is_one_line_exit_2(args, capsys):
    assert main(list(args)) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith("difflab: error: ")


@pytest.mark.slow
def test_continue_curves_json(capsys):
    """FitzHugh-Nagumo's Hopf points lie on v^2 = 1 - b / tau; the Hopf curves end at
    Bogdanov-Takens points where they meet the folds (1 - v^2 = 1 / b): b = tau^0.5."""
    args = ["continue", "fitzhugh_nagumo", "--param", "current", "--from", "0", "--to", "1.5",
            "--param2", "b", "--from2", "0.5", "--to2", "4", "--json"]
    assert main(args) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) == {"param", "points", "special", "curves"}
    assert [c["type"] for c in data["curves"]] == ["hopf", "hopf"]
    a, tau = 0.7, 12.5
    for curve in data["curves"]:
        assert curve["params"] == ["current", "b"]
        for point in curve["points"]:
            (current, b), (v, w) = point["values"].values(), point["state"].values()
            assert v**2 == pytest.approx(1 - b / tau, abs=1e-9)
            assert w == pytest.approx((v + a) / b, abs=1e-9)
            assert current == pytest.approx(w - v + v**3 / 3, abs=1e-9)
        bt = [s for s in curve["special"] if s["type"] == "bogdanov-takens"]
        assert len(bt) == 1 and bt[0]["values"]["b"] == pytest.approx(tau**0.5, rel=1e-6)
