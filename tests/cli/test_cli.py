"""The difflab command line: output, files it writes, and one-line errors."""

import csv
import subprocess
import sys

import h5py
import numpy as np
import pytest

import difflab as dl
from difflab.cli import main


@pytest.mark.slow
def test_models_lists_every_model_with_parameters(capsys):
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    for name in dl.models.available():
        assert name in out
    assert "rho=28" in out


def test_models_detail_shows_bounds_units_and_descriptions(capsys):
    assert main(["models", "pendulum"]) == 0
    out = capsys.readouterr().out
    assert "m/s^2" in out and "gravitational acceleration" in out and "[0.1, 30]" in out


def test_run_prints_the_final_state_of_the_simulation(capsys):
    assert main(["run", "lorenz", "--set", "rho=28", "--t1", "1", "--dt", "1e-3"]) == 0
    printed = capsys.readouterr().out.strip()
    model = dl.models.get("lorenz")(rho=28.0)
    final = dl.simulate(model, 1.0, dt=1e-3).final
    expected = ", ".join(f"{n}={v:.6g}" for n, v in zip("xyz", np.asarray(final)))
    assert printed == f"t=1: {expected}"


@pytest.mark.slow
def test_run_writes_csv_and_h5(tmp_path):
    csv_path, h5_path = tmp_path / "run.csv", tmp_path / "run.h5"
    argv = ["run", "pendulum", "--set", "theta0=0.01", "--t1", "2", "--solver", "tsit5"]
    assert main([*argv, "--out", str(csv_path)]) == 0
    assert main([*argv, "--out", str(h5_path)]) == 0
    with open(csv_path) as f:
        rows = [row for row in csv.reader(f) if not row[0].startswith("#")]
    assert rows[0] == ["t", "theta", "omega"]
    table = np.array(rows[1:], dtype=float)
    with h5py.File(h5_path, "r") as f:
        run = f["runs/run0"]
        np.testing.assert_array_equal(run["time"][:], table[:, 0])
        np.testing.assert_array_equal(run["y"][:], table[:, 1:])
        assert run.attrs["model"] == b"pendulum" and run.attrs["solver"] == b"tsit5"  # fixed-length text
        assert run.attrs["param_theta0"] == 0.01
    # Small-angle pendulum: theta(t) = 0.01 cos(sqrt(g/L) t).
    np.testing.assert_allclose(table[:, 1], 0.01 * np.cos(np.sqrt(9.81) * table[:, 0]), atol=1e-6)


@pytest.mark.slow
def test_a_failed_run_exits_1_with_the_reason(capsys):
    assert main(["run", "lorenz", "--solver", "euler", "--dt", "1", "--t1", "200"]) == 1
    assert "diverged" in capsys.readouterr().err
    assert main(["run", "lorenz", "--solver", "tsit5", "--max-steps", "5", "--rtol", "1e-9"]) == 1
    assert "max_steps" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["run", "lorenzz"], "unknown model 'lorenzz'; did you mean lorenz?"),
        (["run", "lorenz", "--set", "foo=1"], "has no parameter 'foo'"),
        (["run", "lorenz", "--set", "rho=abc"], "'abc' is not a number"),
        (["run", "lorenz", "--solver", "rk5"], "unknown solver 'rk5'"),
        (["run", "lorenz", "--dt", "-1"], "dt must be positive"),
        (["run", "lorenz", "--t1", "x"], "invalid float value: 'x'"),
        (["run", "lorenz", "--out", "run.txt"], "--out must end in .csv, .h5"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("difflab: error: ") and message in err


def _difflab(*args):
    return subprocess.run([sys.executable, "-m", "difflab", *args],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_the_installed_command_never_shows_a_traceback():
    result = _difflab("run", "nosuchmodel")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "difflab: error: unknown model 'nosuchmodel' (`difflab models` lists them all)"
    ]


@pytest.mark.slow
def test_version_and_devices():
    assert _difflab("--version").stdout.strip() == f"difflab {dl.__version__}"
    devices = _difflab("devices").stdout
    assert "backend:   cpu" in devices and "precision: float64" in devices


@pytest.mark.slow
def test_no_qt_is_loaded_by_the_engine_or_the_cli():
    code = ("import sys, difflab, difflab.models, difflab.solvers, difflab.io, difflab.app, "
            "difflab.cli.commands; from difflab.cli import main; main(['models']); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('PySide6', 'pyqtgraph', 'shiboken6')))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip().splitlines()[-1] == "[]"


def test_a_reader_that_stops_early_gets_no_traceback():
    """``difflab ... --json | head -c 1``: the writer ends quietly (128 + SIGPIPE)."""
    process = subprocess.Popen([sys.executable, "-m", "difflab", "equilibria", "lorenz",
                                "--json"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdout.close()  # before anything is written
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=120) == 141, stderr
    assert stderr == ""


@pytest.mark.parametrize("option", ["--version", "--help"])
def test_version_and_help_answer_without_starting_jax(option):
    code = ("import sys\nfrom difflab.cli import main\n"
            f"try:\n    main([{option!r}])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('jax', 'equinox')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
