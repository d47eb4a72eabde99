"""Issue 15, inputs: every bad value is one line on stderr and exit 2, never a traceback,
and a refused command leaves the file it was told to write as it was."""

import fcntl
import math
import re
import shutil
import subprocess
import sys

import h5py
import numpy as np
import pytest

import difflab as dl
from difflab.cli import main
from difflab.models import check_equations, from_equations

CONTROL = [chr(c) for c in (*range(32), 127, 0x9B, 0x202E)]


def _refused(capsys, argv, message, code=2):
    """``main(argv)`` exits ``code`` with one line on stderr holding ``message``."""
    assert main([str(a) for a in argv]) == code
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("difflab: error: "), err
    assert message in err, err
    assert "Traceback" not in err
    return err


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    """A session file holding one run, and its bytes (to show nothing was lost)."""
    path = tmp_path_factory.mktemp("session") / "s.h5"
    assert main(["run", "lorenz", "--t1", "0.05", "--dt", "1e-2", "--out", str(path)]) == 0
    return path


def _unchanged(path, before: bytes) -> bool:
    return path.read_bytes() == before


# -- sweep and fit config files ------------------------------------------------------------

SWEEP = "model = 'lorenz'\n[solve]\nt1 = 0.01\ndt = 1e-3\n"


@pytest.mark.parametrize("space, message", [
    ("[space.grid]\nrho = []\n", "space.grid.rho is an empty list"),
    ("[space.points]\nrho = []\n", "space.points.rho is an empty list"),
    ("[space.points]\nrho = [1.0, 2.0, 3.0]\nsigma = [1.0, 2.0]\n",
     "space.points columns differ in length (rho: 3, sigma: 2)"),
    ("[space.sample]\nmethod = 'uniform'\nn = 4\nranges.rho = [5.0, 1.0]\n",
     "space.sample.ranges.rho must have low < high"),
    ("[space.sample]\nn = 4\nranges.rho = [0.0, 1.0, 'log']\n",
     "space.sample.ranges.rho must have 0 < low < high on a log scale"),
    ("[space.sample]\nn = 4\nranges.rho = [2.0, 2.0]\n", "space.sample.ranges.rho must have"),
    ("[space.grid]\nrho = { geomspace = [0.0, 4.0, 3] }\n", "space.grid.rho.geomspace:"),
    ("[space.grid]\nrho = { logspace = [0.0, 400.0, 3] }\n",
     "space.grid.rho.logspace gives numbers too large"),
    ("[space.sample]\nn = 4\nseed = 99999999999999999999\nranges.rho = [0, 1]\n",
     "space.sample.seed must be an integer that fits in 64 bits"),
    ("[space.grid]\nrho = [1.0]\n[run]\nmemory_budget = 1\n", "run.memory_budget: memory_budget 1"),
    ("[space.grid]\nrho = [1.0]\n[run]\nmemory_budget = '0 MiB'\n", "is too small"),
    ("[space.grid]\nrho = [1.0]\n[run]\nmemory_budget = 'inf GB'\n", "run.memory_budget:"),
    ("[space]\n", "space needs exactly one of"),
])
def test_bad_sweep_files_name_the_file_and_the_key(tmp_path, capsys, session, space, message):
    config = tmp_path / "sweep.toml"
    config.write_text(SWEEP + space)
    out, before = tmp_path / "s.h5", session.read_bytes()
    shutil.copy(session, out)
    err = _refused(capsys, ["sweep", config, "--out", out], message)
    assert err.startswith(f"difflab: error: {config}: ")
    assert _unchanged(out, before)


FIT = "model = 'lotka_volterra'\ndata = 'obs.csv'\nparams = ['alpha']\n"


@pytest.mark.parametrize("text, message", [
    (FIT + "[bounds]\nalpha = [5.0, 1.0]\n", "bounds.alpha must be [lower, upper] with lower"),
    (FIT + "[bounds]\nalpha = []\n", "bounds.alpha must be [lower, upper]"),
    (FIT + "name = 5\n", "name must be a string"),
    (FIT + "[fit]\nseed = 99999999999999999999\n", "fit.seed must be an integer that fits"),
    (FIT + "[bounds]\nbeta = [0.1, 1.0]\n", "bounds name 'beta'"),
    (FIT + "[solve]\nt0 = 100.0\n", "the observations span [0, 2]"),
    (FIT + "[solve]\nmax_steps = 0\n", "solve.max_steps must be a positive integer"),
])
def test_bad_fit_files_name_the_file(tmp_path, capsys, text, message):
    (tmp_path / "obs.csv").write_text("t,prey,predator\n0,10,10\n1,5,11\n2,2,10\n")
    config = tmp_path / "fit.toml"
    config.write_text(text)
    err = _refused(capsys, ["fit", config, "--out", tmp_path / "fit.h5", "--quiet"], message)
    assert err.startswith(f"difflab: error: {config}: ")
    assert not (tmp_path / "fit.h5").exists()


# -- numbers that are not numbers, and empty names ---------------------------------------

@pytest.mark.parametrize("argv, message", [
    (["--set", "rho=nan"], "--set rho=nan: 'nan' is not a finite number"),
    (["--set", "rho=inf"], "'inf' is not a finite number"),
    (["--set", "rho=-inf"], "'-inf' is not a finite number"),
    (["--t1", "inf"], "argument --t1: 'inf' is not a finite number"),
    (["--t1", "nan"], "argument --t1: 'nan' is not a finite number"),
    (["--dt", "inf"], "argument --dt: 'inf' is not a finite number"),
    (["--t0", "nan"], "argument --t0: 'nan' is not a finite number"),
    (["--rtol", "inf"], "argument --rtol: 'inf' is not a finite number"),
    (["--atol", "nan"], "argument --atol: 'nan' is not a finite number"),
    (["--y0", "1,nan,1"], "--y0 expects finite numbers"),
    (["--out", ""], "--out is empty"),
    (["--out", " "], "--out is empty"),
    (["--max-steps", "-1", "--solver", "tsit5"], "max_steps must be at least 1"),
    (["--max-steps", "0"], "max_steps must be at least 1"),
    (["--max-steps", "99999999999999999999"], "max_steps must be at least 1 and at most"),
    (["--n-save", "2.5"], "argument --n-save: invalid int value: '2.5'"),
    (["--key", "99999999999999999999"], "does not fit in 64 bits"),
])
def test_non_finite_and_empty_run_options_are_usage_errors(capsys, argv, message):
    _refused(capsys, ["run", "lorenz", "--t1", "0.01", *argv], message)


def test_refused_runs_leave_the_session_file_as_it_was(tmp_path, capsys, session):
    out = tmp_path / "s.h5"
    shutil.copy(session, out)
    before = out.read_bytes()
    for argv in (["--set", "rho=nan"], ["--dt", "inf"], ["--name", "a/b"], ["--max-steps", "-1"]):
        _refused(capsys, ["run", "lorenz", "--t1", "0.01", "--out", out, *argv], "")
    assert _unchanged(out, before)
    assert dl.open(out).runs.names() == ["run0"]


def test_a_bad_run_name_is_a_usage_error(tmp_path, capsys):
    _refused(capsys, ["run", "lorenz", "--t1", "0.01", "--out", tmp_path / "r.h5",
                      "--name", "a/b"], "--name: invalid name 'a/b'")


@pytest.mark.slow
def test_the_installed_command_refuses_infinite_times_without_a_traceback():
    result = subprocess.run([sys.executable, "-m", "difflab", "run", "lorenz", "--t1", "inf"],
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "difflab: error: argument --t1: 'inf' is not a finite number"]


# -- what is printed from a file is escaped -----------------------------------------------

HOSTILE = "\x1b[2J\nforged line\x1b[31m\r\x07\u202e"


def _no_raw_control(text: str) -> None:
    lines = text.split("\n")
    assert not any(c in line for line in lines for c in CONTROL), repr(text)
    assert not any(line.startswith("forged") for line in lines), text


def test_open_escapes_the_files_text(tmp_path, capsys, session):
    path = tmp_path / "hostile.h5"
    shutil.copy(session, path)
    with h5py.File(path, "r+") as f:
        f.attrs["created"] = HOSTILE
        f["runs/run0"].attrs["result_message"] = HOSTILE
        f["runs/run0"].attrs["solver"] = np.bytes_(("rk4" + HOSTILE).encode())
        f["models/lorenz"].attrs["version"] = np.bytes_(HOSTILE.encode())
        provenance = next(iter(f["provenance"].values()))
        provenance.attrs["command_line"] = HOSTILE
    assert main(["open", str(path)]) == 0
    captured = capsys.readouterr()
    _no_raw_control(captured.out + captured.err)
    assert "\\x1b[2J\\nforged line" in captured.out
    assert len(captured.out.splitlines()) == 6
    assert main(["open", str(path), "--json"]) == 0
    _no_raw_control(capsys.readouterr().out)


def test_a_hostile_name_in_an_error_message_is_escaped(tmp_path, capsys, session):
    path = tmp_path / "hostile.h5"
    shutil.copy(session, path)
    with h5py.File(path, "r+") as f:
        f.move("runs/run0", "runs/run" + HOSTILE)
    err = _refused(capsys, ["open", path], "invalid result name")
    _no_raw_control(err)
    assert "\\x1b[2J" in err
    with pytest.raises(dl.io.SessionFileError) as error:
        dl.open(path)
    _no_raw_control(str(error.value))


def test_a_hostile_equation_description_is_escaped(tmp_path, capsys):
    path = tmp_path / "m.eqn"
    path.write_text("description: \x1b[2J\x07\u202e\x1b[31m red\ninit: x = 1\ndx/dt = -x\n")
    assert main(["models", str(path)]) == 0
    captured = capsys.readouterr()
    _no_raw_control(captured.out + captured.err)


# -- misleading messages ------------------------------------------------------------------

def test_a_locked_healthy_file_is_called_locked_not_damaged(tmp_path, capsys, session):
    path = tmp_path / "locked.h5"
    shutil.copy(session, path)
    before = path.read_bytes()
    with open(path, "rb") as held:  # as the HDF5 library of another program holds it
        fcntl.flock(held, fcntl.LOCK_EX)
        for argv in (["open", path], ["run", "lorenz", "--t1", "0.01", "--out", path]):
            err = _refused(capsys, argv, "is locked: another program has it open")
            assert "damaged" not in err and "truncated" not in err and "--overwrite" not in err
        with pytest.raises(dl.io.SessionFileError, match="is locked"):
            dl.open(path)
    assert _unchanged(path, before)
    assert dl.open(path).runs.names() == ["run0"]


def test_an_untrusted_model_file_names_a_command_that_exists():
    from difflab.models import ModelSource, UntrustedModelError

    source = ModelSource(kind="file", name="P", path="/tmp/p.py", sha256="0" * 64)
    message = str(UntrustedModelError(source))
    assert "--trust" not in message and "difflab trust /tmp/p.py" in message


@pytest.mark.slow
def test_a_failed_run_says_when_it_failed_on_one_line(capsys):
    assert main(["run", "lorenz", "--solver", "tsit5", "--max-steps", "5", "--t1", "10"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    found = re.search(r"failed between t=([\d.]+) and t=([\d.]+): ", err)
    assert found and "t <=" not in err, err  # the saved times around the 5th step's end
    assert 0.05 <= float(found[1]) < float(found[2]) <= 0.08


@pytest.mark.parametrize("budget, message", [
    (1, "memory_budget 1 bytes is too small"), ("1 B", "memory_budget '1 B' is too small"),
    ("0 MiB", "too small"), ("-5 MiB", "too small"), ("inf GB", "write a size like"),
    (True, "must be a number of bytes"), (math.nan, "too small"),
])
def test_a_memory_budget_of_bytes_is_refused_clearly(budget, message):
    with pytest.raises(ValueError, match="memory_budget") as error:
        dl.solvers.parse_size(budget)
    assert message in str(error.value)
    assert dl.solvers.parse_size("1 KiB") == 1024 and dl.solvers.parse_size("2 kB") == 2000


# -- equations ---------------------------------------------------------------------------

@pytest.mark.parametrize("terms", [29, 30, 31, 120])
def test_long_sums_parse_and_run(terms):
    text = ("params: k = 1\ninit: x = 1\ndx/dt = -k*x" + " + k*x - k*x" * (terms // 2)
            + "\nname: Long")
    assert check_equations(text) == []
    final = dl.simulate(from_equations(text)(), 1.0, dt=1e-2).final
    np.testing.assert_allclose(final, [math.exp(-1.0)], rtol=1e-6)


def test_the_term_limit_is_the_documented_2000():
    from difflab.models._expressions import Fail, parse_expression, walk_checked

    assert len(list(walk_checked(parse_expression("+".join(["x"] * 2000), 0)))) > 2000
    with pytest.raises(Fail) as fail:
        list(walk_checked(parse_expression("+".join(["x"] * 2001), 0)))
    assert "more than 2000 terms" in fail.value.message


@pytest.mark.parametrize("rhs, message", [
    ("1/0", "division by zero"), ("x + 1/0", "division by zero"),
    ("x*(2/(3 - 3))", "division by zero"), ("1 % 0", "division by zero"),
    ("0**-1", "division by zero"), ("9.0**999", "too large for a float"),
    ("10.0**300 * 10.0**300", "too large for a float"), ("(-8)**0.5", "not a real number"),
])
def test_bad_constants_are_equation_errors_at_check_time(rhs, message, tmp_path, capsys):
    text = f"init: x = 1\ndx/dt = {rhs}\n"
    problems = check_equations(text)
    assert len(problems) == 1 and problems[0].line == 2 and message in problems[0].message
    with pytest.raises(dl.models.EquationError, match=message):
        from_equations(text)
    path = tmp_path / "bad.eqn"
    path.write_text(text)
    _refused(capsys, ["run", path, "--t1", "0.1"], "bad.eqn:2:")


# -- issue 36: sizes, links and devices --------------------------------------------------

SMALL_SWEEP = """\
model = "lorenz"
name = "big"

[solve]
solver = "rk4"
t1 = 0.01
dt = 1e-3
n_save = 2

[space.points]
rho = [10.0, 20.0]
"""


def test_a_config_over_a_mebibyte_is_kept_and_the_session_still_opens(tmp_path, session):
    victim = tmp_path / "victim.h5"
    shutil.copyfile(session, victim)
    config = tmp_path / "big.toml"
    text = SMALL_SWEEP + "# " + "x" * 1_400_000 + "\n"
    config.write_text(text)
    assert main(["sweep", str(config), "--out", str(victim)]) == 0
    opened = dl.open(victim)
    assert len(opened.runs) == 1 and opened.stored("sweeps")[0].attrs["config"] == text


def test_a_failed_add_leaves_the_file_as_it_was(tmp_path, session, monkeypatch):
    from difflab.io import _h5

    victim = tmp_path / "victim.h5"
    shutil.copyfile(session, victim)
    before = victim.read_bytes()
    monkeypatch.setattr(_h5, "MAX_LONG_TEXT", 100_000)
    with pytest.raises(ValueError, match="at most"):
        with dl.io.write_session(victim) as s:
            _h5.set_attrs(s.file["runs"], {"note": "y" * 200_000})
    assert _unchanged(victim, before) and len(dl.open(victim).runs) == 1


@pytest.mark.parametrize("text, message", [
    ("a = " + "[" * 50_000 + "]" * 50_000 + "\n", "nested too deeply"),
    (None, "it looks like UTF-16"),
])
def test_hostile_toml_is_one_line(tmp_path, capsys, text, message):
    config = tmp_path / "hostile.toml"
    if text is None:
        config.write_text(SMALL_SWEEP, encoding="utf-16")
    else:
        config.write_text(text)
    _refused(capsys, ["sweep", config, "--out", tmp_path / "x.h5"], message)


def test_devices_and_fifos_are_not_read_as_configs_or_models(tmp_path, capsys):
    import os

    os.mkfifo(tmp_path / "pipe.toml")
    (tmp_path / "m.eqn").symlink_to("/dev/zero")
    _refused(capsys, ["sweep", "/dev/zero", "--out", tmp_path / "x.h5"], "is a device")
    _refused(capsys, ["sweep", tmp_path / "pipe.toml", "--out", tmp_path / "x.h5"], "is a FIFO")
    _refused(capsys, ["trust", "/dev/zero"], "is a device")
    _refused(capsys, ["run", tmp_path / "m.eqn", "--t1", "0.1"], "is a device")


@pytest.mark.parametrize("argv, message", [
    (["equilibria", "lorenz", "--starts", "100000000"], "--starts 100,000,000 (3 states each) needs about"),
    (["cycles", "fitzhugh_nagumo", "--param", "current", "--from", "0", "--to", "1.5",
      "--steps", "1000000000"], "--steps 1,000,000,000 per period (2 states) needs about"),
])
def test_sizes_that_would_exhaust_memory_are_refused_before_any_work(argv, message, capsys,
                                                                       monkeypatch):
    import tracemalloc

    monkeypatch.setenv("DIFFLAB_MEMORY_LIMIT", "1 GiB")
    tracemalloc.start()
    try:
        err = _refused(capsys, argv, message)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "more than the 1 GiB allowed" in err and peak < 100 * 2**20  # nothing allocated


@pytest.mark.parametrize("rank, message", [
    ("1", "no coordinator answered at 127.0.0.1:1 within 2 s"),
    ("0", "did not complete within 2 s"),
])
def test_an_unreachable_coordinator_is_a_timeout_with_a_message(tmp_path, rank, message):
    import socket

    config = tmp_path / "k.toml"
    config.write_text(SMALL_SWEEP)
    with socket.socket() as s:  # a free port: nobody else will join there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    address = "127.0.0.1:1" if rank == "1" else f"127.0.0.1:{port}"
    result = subprocess.run(
        [sys.executable, "-m", "difflab", "sweep", str(config), "--out", str(tmp_path / "d.h5"),
         "--distributed", "--coordinator", address, "--num-processes", "2",
         "--process-id", rank, "--coordinator-timeout", "2"],
        capture_output=True, text=True, timeout=60)
    lines = result.stderr.splitlines()
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert lines[0].startswith("difflab: joining the coordinator") and message in lines[-1]
    assert len(lines) == 2
