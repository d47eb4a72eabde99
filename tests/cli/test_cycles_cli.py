"""``difflab cycles``: periodic orbits from a Hopf point, through the real entry point."""

import json
import re
import subprocess
import sys

import numpy as np
import pytest

from difflab.cli.main import main

# r' = r (mu + r^2 - r^4), theta' = 1: a subcritical Hopf point at mu = 0 and a fold of
# cycles at mu = -1/4, r^2 = 1/2
BAUTIN = """\
params: mu = 0.5 in (-1, 1)
init: x = 0, y = 0
r2 = x*x + y*y
g = mu + r2 - r2*r2
dx/dt = g*x - y
dy/dt = x + g*y
"""


@pytest.fixture
def bautin(tmp_path):
    path = tmp_path / "bautin.eqn"
    path.write_text(BAUTIN)
    return str(path)


def test_cycles_json_has_the_fold_of_cycles(bautin):
    result = subprocess.run([sys.executable, "-m", "difflab", "cycles", bautin, "--param",
                             "mu", "--from", "0.5", "--to", "-0.5", "--json"],
                            capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)  # exactly one JSON object on stdout
    assert set(data) == {"param", "points", "special", "status"} and data["param"] == "mu"
    assert data["special"] == [{"type": "fold-of-cycles", "value": pytest.approx(-0.25, abs=1e-6),
                                "period": pytest.approx(2 * np.pi, rel=1e-6)}]
    points = data["points"]
    assert set(points[0]) == {"value", "period", "min", "max", "stable", "multipliers"}
    assert points[0]["value"] == pytest.approx(0.0, abs=1e-9)  # the Hopf point
    for point in points[1:]:
        r = point["max"]["x"]
        assert point["value"] == pytest.approx(r**4 - r**2, abs=1e-6)
        assert point["min"]["y"] == pytest.approx(-r, rel=1e-6)
        assert point["stable"] == (r**2 > 0.5)
        (trivial, other) = point["multipliers"]  # largest modulus first
        big = other if abs(other[0] - 1) > abs(trivial[0] - 1) else trivial
        assert big[1] == 0.0
        assert big[0] == pytest.approx(np.exp(4 * np.pi * r**2 * (1 - 2 * r**2)), rel=1e-6)


def test_cycles_table(bautin, capsys):
    assert main(["cycles", bautin, "--param", "mu", "--from", "-0.5", "--to", "0.5"]) == 0
    out = capsys.readouterr()
    assert "Hopf point at mu=" in out.out and "(subcritical" in out.out
    assert re.search(r"mu from 0 to -0\.24\d*: unstable, period 6\.28319", out.out)
    assert re.search(r"mu from -0\.24\d* to 0\.5: stable, period 6\.28319", out.out)
    assert re.search(r"fold-of-cycles \W+ -0\.2(5 |49999)", out.out)  # -1/4 to 1e-6
    assert "left the range at 0.5" in out.err


@pytest.mark.parametrize("args, message", [
    (["--param", "nope", "--from", "0", "--to", "1"], "no parameter 'nope'"),
    (["--param", "mu", "--from", "0", "--to", "1", "--segments", "0"], "--segments"),
    (["--param", "mu", "--from", "0", "--to", "1", "--steps", "2", "--segments", "4"],
     "--steps"),
    (["--param", "mu", "--from", "0.1", "--to", "0.4"], "no Hopf point"),
])
def test_bad_arguments_are_usage_errors(bautin, capsys, args, message):
    assert main(["cycles", bautin, *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
