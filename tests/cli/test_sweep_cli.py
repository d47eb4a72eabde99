"""``difflab sweep``: the TOML file, its errors, SIGKILL and resume, and two processes."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import h5py
import numpy as np
import pytest

import difflab as dl
from difflab.cli import main
from difflab.cli.sweep_command import build_job, load_config

EXAMPLE = Path(__file__).parents[2] / "examples" / "sweep_lorenz.toml"

CONFIG = """\
model = "lorenz"
name = "scan"

[parameters]
beta = 2.5

[solve]
solver = "rk4"
t1 = {t1}
dt = 1e-3
n_save = 5

[space.grid]
rho = {{ linspace = [0.0, 28.0, {n_rho}] }}
sigma = [5.0, 10.0]

[output.observables]
x_max = "max(x)"

[run]
chunk_size = {chunk}
"""


def _config(tmp_path, name="sweep.toml", *, t1=0.5, n_rho=10, chunk=6, text=None):
    path = tmp_path / name
    path.write_text(text if text is not None else CONFIG.format(t1=t1, n_rho=n_rho, chunk=chunk))
    return path


def _group(path, name):
    """Every dataset and attribute of a sweep group and of the models, as plain values."""
    out = {}
    with h5py.File(path, "r", locking=False) as f:
        for where in (f"sweeps/{name}", "models"):
            f[where].visititems(lambda k, v: out.__setitem__(
                f"{where}/{k}", v[()] if isinstance(v, h5py.Dataset) else None))
            out[f"{where}:attrs"] = {k: np.asarray(v).tolist() for k, v in f[where].attrs.items()
                                     if k != "DIMENSION_LIST"}
    return out


def _assert_same(a, b, skip=(), atol=0.0):
    assert sorted(a) == sorted(b)
    for key in a:
        if isinstance(a[key], dict):
            drop = {k: v for k, v in a[key].items() if k not in skip}
            assert drop == {k: v for k, v in b[key].items() if k not in skip}, key
        elif a[key] is not None and np.asarray(a[key]).dtype.kind == "f":
            np.testing.assert_allclose(a[key], b[key], rtol=0, atol=atol, err_msg=key)
        elif a[key] is not None:
            np.testing.assert_array_equal(a[key], b[key], err_msg=key)


@pytest.mark.slow
def test_the_cli_writes_what_the_python_api_computes(tmp_path, capsys):
    config, out = _config(tmp_path), tmp_path / "sweep.h5"
    assert main(["sweep", str(config), "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["points"] == 20 and summary["failed"] == 0 and summary["chunks"] == 4
    assert summary["name"] == "scan" and summary["compile_time"] >= 0 < summary["run_time"]
    model = dl.models.get("lorenz")(beta=2.5)
    res = dl.sweep(model, dl.grid(rho=np.linspace(0, 28, 10), sigma=[5.0, 10.0]), 0.5, dt=1e-3,
                   n_save=5, observables={"x_max": "max(x)"})
    session = dl.open(out)
    stored, group = session.sweeps[0], session.stored("sweeps", "scan")
    np.testing.assert_allclose(np.asarray(stored.y), res.ys, rtol=0, atol=1e-12)
    on_grid = np.asarray(group.variables["x_max"].data)  # over (rho, sigma)
    assert on_grid.shape == (10, 2)
    np.testing.assert_allclose(on_grid.reshape(-1), res.observables["x_max"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.asarray(stored.observables["x_max"]),
                               res.observables["x_max"], rtol=0, atol=1e-12)
    assert group.attrs["config"] == config.read_text()
    assert main(["sweep", "--resume", "--out", str(out), "--json", "--devices", "1"]) == 0
    again = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert again["computed"] == 0 and again["resumed"] == 20 and again["devices"] == 1


@pytest.mark.slow
def test_progress_and_summary_go_to_stderr(tmp_path, capsys):
    config, out = _config(tmp_path), tmp_path / "sweep.h5"
    assert main(["sweep", str(config), "--out", str(out), "--chunk-size", "8"]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "20/20" in captured.err and "pts/s" in captured.err and "0 failed" in captured.err
    assert "scan in" in captured.err and "20 points, 0 failed" in captured.err
    assert dl.open(out).stored("sweeps", "scan").attrs["chunk_size"] == 8


def test_quiet_drops_the_progress_bar_and_keeps_the_summary(tmp_path, capsys):
    """Issue 34: ``difflab sweep`` had no ``--quiet`` (``difflab fit`` has)."""
    config, out = _config(tmp_path, t1=0.01, n_rho=2, chunk=2), tmp_path / "sweep.h5"
    assert main(["sweep", str(config), "--out", str(out), "--quiet"]) == 0
    captured = capsys.readouterr()
    assert "pts/s" not in captured.err and "4/4" not in captured.err
    assert "scan in" in captured.err and "4 points, 0 failed" in captured.err
    assert dl.open(out).stored("sweeps", "scan").attrs["complete"]


@pytest.mark.slow
def test_the_example_config_builds():
    job = build_job(load_config(EXAMPLE))
    assert job.n_points == 448 and job.plan.n_save == 101 and len(job.observables) == 3


def test_a_bad_out_file_or_flag_is_one_line_and_exit_2(tmp_path, capsys):
    config = _config(tmp_path)
    for argv, message in [(["--out", "x.csv"], "--out must end in .h5"),
                          (["--out", "x.h5", "--chunk-size", "0"], "--chunk-size must be"),
                          (["--out", "x.h5", "--resume", "--overwrite"], "contradict")]:
        assert main(["sweep", str(config), *argv]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err, err


OLDER = """\
model = "lorenz"

[initial_state]
x = 2.0

[solver]
name = "rk4"
t1 = 0.5
dt = 1e-3

[space.grid]
rho = [1.0, 2.0]

[output]
n_save = 5
"""

NEWER = """\
model = "lorenz"

[solve]
solver = "rk4"
t1 = 0.5
dt = 1e-3
n_save = 5
y0 = {x = 2.0}

[space.grid]
rho = [1.0, 2.0]
"""


def test_older_files_names_read_as_the_solve_table(tmp_path):
    older = build_job(load_config(_config(tmp_path, "older.toml", text=OLDER)))
    newer = build_job(load_config(_config(tmp_path, "newer.toml", text=NEWER)))
    assert older.fingerprint() == newer.fingerprint()
    assert older.settings()["solver"] == "rk4" and older.settings()["n_save"] == 5
    np.testing.assert_array_equal(newer.settings()["y0"], [2.0, 1.0, 1.0])


@pytest.mark.parametrize(
    "text, message",
    [
        ("model = 'lorenz'\nsolvr = 1\n", "unknown key 'solvr'"),
        ("model = 'lorenz'\n[solve]\ndt = 1e-3\n", "solve.t1 is missing"),
        ("model = 'lorenz'\n[solve]\nt1 = 1\ndt = -1\n", "solve.dt must be a positive number"),
        ("model = 'lorenz'\n[solve]\nt1 = 1\nsolver = 'rk5'\n[space.grid]\nrho = [1]\n",
         "solve.solver: unknown solver 'rk5'; did you mean rk4"),
        ("model = 'lorenzz'\n[solve]\nt1 = 1\n", "model: unknown model 'lorenzz'"),
        ("model = 'lorenz'\n[parameters]\nfoo = 1\n[solve]\nt1 = 1\n", "parameters.foo:"),
        ("model = 'lorenz'\n[solve]\nt1 = 1\n[space.grid]\nrhoo = [1]\n",
         "space.grid.rhoo: space 'rhoo': Lorenz has no parameter 'rhoo'; did you mean rho?"),
        ("model = 'lorenz'\n[solve]\nt1 = 1\n[space.grid]\nrho = { linspace = [0, 1] }\n",
         "space.grid.rho must be a list of numbers"),
        ("model = 'lorenz'\n[solve]\nt1 = 1\n[space.sample]\nmethod = 'halton'\nn = 4\n",
         "space.sample.method must be one of"),
        ("model = 'lorenz'\n[solve]\nt1 = 1\n[space.grid]\nrho = [1]\n"
         "[output.observables]\nm = 'max(q)'\n", "output.observables.m: observable 'max(q)'"),
        ("model = 'lorenz'\n[solve]\nt1 = 1\n[space.grid]\nrho = [1]\n[run]\nchunks = 3\n",
         "unknown key run.chunks"),
        ("model = 'lorenz'\n[solve]\nt1 = 1\n[run]\nchunk_size = 0\n",
         "run.chunk_size must be a positive integer"),
        ("model = 'lorenz'\n[solve]\nt1 = 1\n[run]\nmemory_budget = 'lots'\n",
         "run.memory_budget: memory_budget 'lots'"),
        ("model = 'lorenz'\n[solve]\nt1 = 1\ny0 = {q = 1}\n[space.grid]\nrho = [1]\n",
         "solve.y0.q: Lorenz has no state 'q'"),
        ("model = 'lorenz'\n[solve]\nt1 = 1\n[solver]\nname = 'rk4'\n",
         "give the solver settings in [solve] alone"),
        ("model = 'lorenz'\n[solver\n", "is not valid TOML"),
    ],
)
def test_a_bad_config_is_one_line_naming_the_key_and_exit_2(tmp_path, capsys, text, message):
    config = _config(tmp_path, text=text)
    assert main(["sweep", str(config), "--out", str(tmp_path / "x.h5")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("difflab: error: ") and message in err, err
    assert not (tmp_path / "x.h5").exists()


def _environment(tmp_path, devices: int) -> dict:
    env = dict(os.environ, XLA_FLAGS=f"--xla_force_host_platform_device_count={devices}",
               XDG_CACHE_HOME=str(tmp_path / "cache"))
    return env


def _difflab(*args, env, **kwargs):
    return subprocess.Popen([sys.executable, "-m", "difflab", *map(str, args)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)


def _chunks_done(path) -> int:
    try:
        with h5py.File(path, "r", swmr=True, locking=False) as f:
            return int(f["sweeps/scan/chunk_done"][:].sum())
    except (OSError, KeyError):
        return 0


@pytest.mark.slow
def test_sigkill_mid_sweep_then_the_same_command_finishes_it(tmp_path):
    config = _config(tmp_path, t1=25.0, n_rho=160, chunk=8)  # 40 chunks of a few 10 ms
    killed, whole = tmp_path / "killed.h5", tmp_path / "whole.h5"
    env = _environment(tmp_path, 2)
    process = _difflab("sweep", config, "--out", killed, "--json", env=env)
    deadline = time.monotonic() + 120
    while _chunks_done(killed) < 3 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    process.send_signal(signal.SIGKILL)
    process.communicate()
    done = _chunks_done(killed)
    assert 3 <= done < 40, f"{done} chunks done when the sweep was killed"
    rerun = _difflab("sweep", config, "--out", killed, "--json", env=env)
    uninterrupted = _difflab("sweep", config, "--out", whole, "--json", env=env)
    for p in (rerun, uninterrupted):
        assert p.wait(timeout=300) == 0, p.stderr.read()
    summary = json.loads(rerun.stdout.read().strip().splitlines()[-1])
    assert summary["resumed"] >= 8 * done and summary["computed"] == 320 - summary["resumed"]
    _assert_same(_group(killed, "scan"), _group(whole, "scan"))
    assert dl.open(killed).sweeps[0].complete


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_two_processes_on_localhost_equal_one(tmp_path):
    config, out = _config(tmp_path, n_rho=25, chunk=10), tmp_path / "two.h5"
    env, port = _environment(tmp_path, 1), _free_port()
    flags = ["--distributed", "--coordinator", f"127.0.0.1:{port}", "--num-processes", "2"]
    processes = [_difflab("sweep", config, "--out", out, "--json", *flags, "--process-id", i,
                          env=env) for i in (0, 1)]
    for p in processes:
        assert p.wait(timeout=300) == 0, p.stderr.read()
    summary = json.loads(processes[0].stdout.read().strip().splitlines()[-1])
    assert summary["processes"] == 2 and summary["computed"] == 50 and summary["devices"] == 2
    assert not list(tmp_path.glob("two.shard*"))  # copied into two.h5, then removed
    assert dl.open(out).stored("sweeps", "scan").provenance["difflab_version"] == dl.__version__
    single = tmp_path / "one.h5"
    job = build_job(load_config(config))
    output = dl.io.open_sweep_output(job, single, name="scan", attrs={"config": config.read_text()})
    dl.solvers.execute_sweep(job, output=output, collect=False)
    _assert_same(_group(out, "scan"), _group(single, "scan"), atol=1e-12,
                 skip=("n_processes", "per_process", "config_path"))


USER_MODEL = """\
import jax.numpy as jnp
import difflab as dl


class Growth(dl.Model):
    r: float = 1.0
    state_names = ("n",)

    def vector_field(self, t, y):
        return self.r * y

    def initial_state(self):
        return jnp.array([1.0])
"""


@pytest.mark.slow
def test_a_stored_config_runs_a_model_file_only_if_trusted(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("DIFFLAB_CONFIG_DIR", str(tmp_path / "config"))  # trusts nothing
    (tmp_path / "growth.py").write_text(USER_MODEL)
    config = _config(tmp_path, text="model = 'growth.py:Growth'\n[solve]\nt1 = 1.0\n"
                                    "dt = 1e-3\n[space.points]\nr = [0.5, 1.0]\n")
    out = tmp_path / "growth.h5"
    assert main(["sweep", str(config), "--out", str(out), "--json"]) == 0  # the user named it
    capsys.readouterr()
    np.testing.assert_allclose(np.asarray(dl.open(out).sweeps[0].y)[:, -1, 0],
                               np.exp([0.5, 1.0]), rtol=1e-12)
    assert main(["sweep", "--resume", "--out", str(out)]) == 2  # named by the file only
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "model: " in err and "has not been trusted" in err


def test_the_summary_says_why_a_period_has_no_value(tmp_path, capsys):
    """Issue 35: a period that is NaN where the system settles was printed as nothing."""
    text = CONFIG.format(t1=5.0, n_rho=2, chunk=2).replace(
        'x_max = "max(x)"', 'x_period = "period(x)"').replace("[0.0, 28.0,", "[0.2, 0.5,")
    config, out = _config(tmp_path, text=text), tmp_path / "sweep.h5"
    assert main(["sweep", str(config), "--out", str(out), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "x_period: 4 points: not periodic" in err
    assert main(["sweep", "--resume", "--out", str(out), "--json"]) == 0
    notes = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["notes"]
    assert notes["x_period"].startswith("4 points: not periodic")


def test_a_slow_sweep_s_rate_shows_its_figures_not_zero():
    """A field sweep of 128x128 points at 0.08 points a second showed "0 pts/s"."""
    from difflab.cli.sweep_command import _rate

    assert _rate(0.0813) == "0.081 pts/s" and _rate(1234.4) == "1,234 pts/s"
