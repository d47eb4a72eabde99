"""User models on the command line: files, equations, the trust store and sessions."""

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import difflab as dl
from difflab.cli import main
from difflab.app.trust import TrustStore, config_dir

PENDULUM = '''\
import jax.numpy as jnp
import difflab as dl

open({marker!r}, "a").write("ran\\n")


class MyPendulum(dl.Model):
    """A damped pendulum."""

    g: float = dl.param(9.81, bounds=(0.1, 30.0), unit="m/s^2", doc="gravity")
    c: float = 0.1
    state_names = ("theta", "omega")
    description = "A damped pendulum from a file"

    def vector_field(self, t, y):
        theta, omega = y
        return jnp.stack([omega, -self.g * jnp.sin(theta) - self.c * omega])

    def initial_state(self):
        return jnp.array([1.0, 0.0])
'''

SPRING = "params: k = 1.0 in (0, 10), c = 0.1\ninit: x = 1, v = 0\ndx/dt = v\ndv/dt = -k*x - c*v\n"


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.setenv("DIFFLAB_CONFIG_DIR", str(tmp_path / "config"))
    marker = tmp_path / "ran.txt"
    (tmp_path / "pendulum2.py").write_text(PENDULUM.format(marker=str(marker)))
    (tmp_path / "spring.eqn").write_text(SPRING)
    (tmp_path / "bad.eqn").write_text(SPRING.replace("-k*x", "-k*x.real"))
    (tmp_path / "shape.py").write_text(PENDULUM.format(marker=str(marker)).replace(
        "[omega, -self.g", "[omega, omega, -self.g"))
    (tmp_path / "syntax.py").write_text("import difflab\n\nclass X(difflab.Model:\n    pass\n")
    return tmp_path


def _final_line(traj):
    values = ", ".join(f"{n}={v:.6g}" for n, v in zip(traj.state_names, np.asarray(traj.final)))
    return f"t={float(traj.ts[-1]):g}: {values}"


@pytest.mark.slow
def test_run_a_python_model_file(files, capsys):
    ref = f"{files / 'pendulum2.py'}:MyPendulum"
    assert main(["run", ref, "--set", "c=0.5", "--t1", "2", "--dt", "1e-2"]) == 0
    model = dl.models.load_file(files / "pendulum2.py").get()(c=0.5)
    assert capsys.readouterr().out.strip() == _final_line(dl.simulate(model, 2.0, dt=1e-2))


@pytest.mark.slow
def test_run_an_equation_file(files, capsys):
    assert main(["run", str(files / "spring.eqn"), "--set", "k=4", "--t1", "2"]) == 0
    model = dl.models.from_equations(SPRING)(k=4.0)
    assert capsys.readouterr().out.strip() == _final_line(dl.simulate(model, 2.0))


def test_models_shows_a_user_model(files, capsys):
    assert main(["models", str(files / "pendulum2.py")]) == 0
    out = capsys.readouterr().out
    assert "MyPendulum" in out and "A damped pendulum from a file" in out and "m/s^2" in out


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("syntax.py", "syntax.py:3:22: SyntaxError"),
        ("shape.py", "shape.py:15: MyPendulum.vector_field returns shape (3,)"),
        ("bad.eqn", "bad.eqn:4:12: attribute access ('.') is not allowed"),
        ("pendulum2.py:Nope", "pendulum2.py: defines no model class 'Nope'"),
        ("missing.py:X", "missing.py: no such file"),
        ("missing.eqn", "missing.eqn: no such file"),
    ],
)
def test_errors_in_model_files_are_one_line_with_file_and_line(files, capsys, ref, message):
    assert main(["run", str(files / ref)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"difflab: error: {files}/") and message in err


@pytest.mark.slow
def test_the_installed_command_shows_no_traceback_for_a_broken_file(files):
    result = subprocess.run([sys.executable, "-m", "difflab", "run", str(files / "shape.py")],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr


def test_trust_store_persists_by_content(tmp_path):
    path = tmp_path / "store" / "trusted.json"
    store = TrustStore(path)
    sha = "a" * 64
    assert not store.is_trusted(sha) and store.entries() == {}
    store.trust(sha, "/models/x.py")
    again = TrustStore(path)  # another process (the app, the CLI) sees it
    assert sha in again and again(sha, None) and again.entries()[sha]["path"] == "/models/x.py"
    assert again.revoke(sha) and not again.revoke(sha) and sha not in store
    with pytest.raises(ValueError, match="not a SHA-256"):
        store.trust("../../etc", None)
    path.write_text("{not json")
    assert TrustStore(path).entries() == {}  # unreadable: trusts nothing


def test_trust_command_adds_lists_and_revokes(files, capsys):
    path = files / "pendulum2.py"
    assert main(["trust", str(path)]) == 0
    sha = dl.models.file_sha256(path)
    assert f"trusted: {sha[:12]}" in capsys.readouterr().out
    assert TrustStore().is_trusted(sha)
    assert TrustStore().path == config_dir() / "trusted-models.json"
    assert main(["trust", "--list"]) == 0
    assert sha in capsys.readouterr().out
    assert main(["trust", "--revoke", str(path)]) == 0
    assert not TrustStore().is_trusted(sha) and not (files / "ran.txt").exists()
    assert main(["trust", str(files / "syntax.py")]) == 2


@pytest.mark.slow
def test_opening_a_session_with_a_user_model_runs_nothing(files, capsys):
    marker, out = files / "ran.txt", files / "run.h5"
    ref = f"{files / 'pendulum2.py'}:MyPendulum"
    assert main(["run", ref, "--t1", "0.5", "--dt", "1e-2", "--out", str(out)]) == 0
    marker.unlink()
    assert main(["open", str(out)]) == 0 and "MyPendulum" in capsys.readouterr().out
    code = textwrap.dedent(f"""
        import json, os, sys
        import numpy as np
        import difflab as dl

        session = dl.open({str(out)!r})
        session.summary()
        run = session.runs[0]
        record = session.stored("runs", run.name).model
        np.asarray(run.ys)
        report = {{"origin": record.origin, "model_is_record": run.model is record}}
        try:
            run.rerun()
        except ValueError:
            report["rerun"] = "refused"
        try:
            dl.models.from_source(record)
        except dl.models.UntrustedModelError:
            report["untrusted"] = True
        report["modules"] = [m for m in sys.modules if m.startswith("difflab_user_")]
        report["ran_before_trust"] = os.path.exists({str(marker)!r})
        cls = dl.models.from_source(record, trust=True)
        again = run.rerun(model=cls())
        report["same"] = bool(np.allclose(again.ys, np.asarray(run.ys), rtol=1e-12))
        report["ran_after_trust"] = os.path.exists({str(marker)!r})
        print(json.dumps(report))
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.splitlines()[-1]) == {
        "origin": "user", "model_is_record": True, "rerun": "refused", "untrusted": True,
        "modules": [],
        "ran_before_trust": False, "same": True, "ran_after_trust": True,
    }
