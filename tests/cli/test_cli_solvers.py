"""Issue 15, solvers through the command line: an unstable fixed step fails (exit 1, one
line naming a stiff solver and a stable dt), and atol may be given one per state."""

import h5py
import numpy as np
import pytest

from difflab.cli import main
from difflab.cli.sweep_command import build_job, load_config


#: a stiff linear system: the fast mode decays at 1000 / s
STIFF = "name: Stiff\nparams: k = 1000\ninit: x = 1, y = 1\ndx/dt = -k*x + y\ndy/dt = -y\n"


@pytest.mark.parametrize("argv", [
    ["--solver", "rk4", "--dt", "0.05", "--t1", "1"],  # before: exit 0, a garbage final state
    ["--solver", "euler", "--dt", "0.3", "--t1", "3"],
])
def test_an_unstable_fixed_step_exits_1_with_one_line_naming_what_works(tmp_path, capsys, argv):
    path = tmp_path / "stiff.eqn"
    path.write_text(STIFF)
    assert main(["run", str(path), *argv]) == 1
    out, err = capsys.readouterr()
    assert out == ""  # no final state printed
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "outside" in err and "stability region" in err
    assert "solver='kvaerno5'" in err and "dt <= " in err


def test_atol_one_per_state_on_the_command_line(tmp_path, capsys):
    out = tmp_path / "run.h5"
    argv = ["run", "lorenz", "--solver", "tsit5", "--t1", "0.5"]
    assert main([*argv, "--atol", "1e-8,1e-10,1e-8", "--out", str(out)]) == 0
    with h5py.File(out, "r") as f:
        np.testing.assert_array_equal(f["runs/run0"].attrs["atol"], [1e-8, 1e-10, 1e-8])
    capsys.readouterr()
    assert main([*argv, "--atol", "1e-8,1e-10"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "one per state (3 for Lorenz)" in err


SWEEP = """\
model = "lorenz"
[solve]
solver = "tsit5"
t1 = 0.2
atol = {atol}
[space.grid]
rho = [10.0, 28.0]
"""


def test_atol_one_per_state_in_a_config_file(tmp_path, capsys):
    config = tmp_path / "sweep.toml"
    config.write_text(SWEEP.format(atol="[1e-8, 1e-10, 1e-8]"))
    job = build_job(load_config(config))
    np.testing.assert_array_equal(job.settings()["atol"], [1e-8, 1e-10, 1e-8])
    for atol, message in [("[1e-8, -1.0, 1e-8]", "solve.atol[1] must be a positive number"),
                          ("[]", "solve.atol must be a positive number or a list"),
                          ("[1e-8, 1e-8]", "one per state (3 for Lorenz)")]:
        config.write_text(SWEEP.format(atol=atol))
        assert main(["sweep", str(config), "--out", str(tmp_path / "s.h5")]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err and "Traceback" not in err
