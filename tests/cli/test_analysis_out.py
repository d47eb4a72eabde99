"""``--out FILE.h5`` on ``difflab equilibria``, ``continue`` (with its curves in two
parameters), ``lyapunov`` and ``cycles``: the result is added to a session file as
``difflab run --out`` adds a run, and ``difflab open`` lists it."""

import json

import h5py
import numpy as np
import pytest

import difflab as dl
from difflab.cli.main import main

EQUILIBRIA = ("equilibria", "lorenz", "--set", "rho=10", "--box", "z=-1:40", "--starts", "16")
CONTINUE = ("continue", "lorenz", "--param", "rho", "--from", "0", "--to", "2",
            "--state", "x=0", "--state", "y=0", "--state", "z=0")
LYAPUNOV = ("lyapunov", "lorenz", "--t1", "2")

# x' = r - x^2 (a fold at r = 0) driving the Bautin normal form in w = y + i z:
# w' = (x - 1 + i) w + b w |w|^2 - w |w|^4, a Hopf point at r = 1 (a Bautin point at b = 0)
FOLD_BAUTIN = """\
params: r = 0.5 in (-5, 5), b = 1 in (-5, 5)
init: x = 0.7, y = 0, z = 0
r2 = y*y + z*z
g = x - 1 + b*r2 - r2*r2
dx/dt = r - x*x
dy/dt = g*y - z
dz/dt = y + g*z
"""


@pytest.fixture
def fold_bautin(tmp_path):
    path = tmp_path / "fold_bautin.eqn"
    path.write_text(FOLD_BAUTIN)
    return path


def _run(capsys, *args):
    """``(status, stdout, stderr)`` of one command."""
    status = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


def _json(capsys, *args):
    status, out, err = _run(capsys, *args, "--json")
    assert status == 0, err
    return json.loads(out), err  # stdout holds the JSON alone; "saved ..." goes to stderr


def test_each_command_adds_its_result_and_prints_the_same_json(tmp_path, capsys):
    path = tmp_path / "s.h5"
    found, err = _json(capsys, *EQUILIBRIA, "--out", path)
    assert f"saved {path} (/analyses/equilibria0)" in err
    branch, _ = _json(capsys, *CONTINUE, "--out", path, "--name", "origin")
    spectrum, _ = _json(capsys, *LYAPUNOV, "--out", path)

    session = dl.open(path)
    assert session.analyses.names() == ["equilibria0", "origin", "lyapunov_spectrum0"]
    assert session.analyses["equilibria0"].to_dict() == found
    assert session.analyses["origin"].to_dict() == branch
    assert session.analyses["lyapunov_spectrum0"].to_dict() == spectrum
    assert session.analyses["origin"].model.rho == 28.0  # with its model, as a run has

    with h5py.File(path) as f:
        group = f["analyses/equilibria0"]
        states = [[e["state"][s] for s in "xyz"] for e in found["equilibria"]]
        np.testing.assert_array_equal(group["states"][()], states)
        kinds = [b"".join(row).decode() for row in group["stability"][()]]
        assert kinds == [e["stability"] for e in found["equilibria"]]
        assert group.attrs["model"].decode() == "lorenz" and f["models/lorenz"].attrs["param_rho"] == 10
        (point,) = branch["special"]
        assert f["analyses/origin/special_value"][()].tolist() == [point["value"]]
        assert f["analyses/origin"].attrs["start"] == 0.0 and f["analyses/origin"].attrs["stop"] == 2.0
        np.testing.assert_array_equal(f["analyses/lyapunov_spectrum0/exponents"][()],
                                      spectrum["exponents"])


def test_open_lists_the_analyses(tmp_path, capsys):
    path = tmp_path / "s.h5"
    _json(capsys, *CONTINUE, "--out", path, "--name", "origin")
    status, out, _ = _run(capsys, "open", path)
    assert status == 0 and "analyses (1):" in out
    assert "origin  continuation  model=lorenz" in out and "param=rho" in out
    summary, _ = _json(capsys, "open", path)
    (entry,) = summary["analyses"]
    assert entry["name"] == "origin" and entry["analysis"] == "continuation"
    assert entry["dims"]["special"] == 1 and entry["status"] == "left the range at 2"


def test_an_existing_file_is_added_to_or_refused_as_run_does(tmp_path, capsys):
    path = tmp_path / "s.h5"
    assert _run(capsys, "run", "lorenz", "--t1", "0.1", "--out", path)[0] == 0
    _json(capsys, *LYAPUNOV, "--out", path, "--name", "spectrum")
    session = dl.open(path)
    assert session.runs.names() == ["run0"] and session.analyses.names() == ["spectrum"]

    status, out, err = _run(capsys, *LYAPUNOV, "--out", path, "--name", "spectrum")
    assert status == 2 and out == "" and err.count("\n") == 1
    assert "already holds an analysis named 'spectrum'" in err
    before = dl.open(path).analyses["spectrum"].exponents
    _json(capsys, *LYAPUNOV, "--t1", "3", "--out", path, "--name", "spectrum", "--overwrite")
    after = dl.open(path).analyses["spectrum"]
    assert after.t1 == 3.0 and not np.array_equal(after.exponents, before)
    assert dl.open(path).runs.names() == ["run0"]


@pytest.mark.parametrize("out, message", [
    ("table.csv", "must be a session file ending in .h5"),
    ("notes.h5", "not an HDF5 file (so not a DiffLab session); --overwrite replaces it"),
])
def test_bad_out_is_one_line_exit_2(tmp_path, capsys, out, message):
    path = tmp_path / out
    if out == "notes.h5":
        path.write_text("not a session")
    status, stdout, err = _run(capsys, *LYAPUNOV, "--out", path)
    assert status == 2 and stdout == "" and err.count("\n") == 1 and message in err
    if out == "notes.h5":
        assert path.read_text() == "not a session"
        assert _run(capsys, *LYAPUNOV, "--out", path, "--overwrite")[0] == 0
        assert dl.open(path).analyses.names() == ["lyapunov_spectrum0"]


def test_continue_stores_the_branch_and_each_curve(tmp_path, capsys, fold_bautin):
    path = tmp_path / "s.h5"
    args = ("continue", fold_bautin, "--param", "r", "--from", "1.5", "--to", "-0.5",
            "--state", "x=1.2", "--ds", "0.2", "--max-points", "60", "--out", path,
            "--name", "hb")
    data, err = _json(capsys, *args, "--param2", "b", "--from2", "-1", "--to2", "2")
    assert f"saved {path} (/analyses/hb, /analyses/hb_curve0, /analyses/hb_curve1)" in err
    session = dl.open(path)
    assert session.analyses.names() == ["hb", "hb_curve0", "hb_curve1"]
    curves = data.pop("curves")
    assert session.analyses["hb"].to_dict() == data
    assert [session.analyses[f"hb_curve{i}"].to_dict() for i in range(2)] == curves
    assert [c["type"] for c in curves] == [p["type"] for p in data["special"]] == ["hopf", "fold"]
    (bautin,) = session.analyses["hb_curve0"].special
    assert bautin.kind == "bautin" and bautin.values == pytest.approx([1.0, 0.0], abs=1e-6)
    assert session.analyses["hb_curve1"].frequency is None

    with h5py.File(path, "a") as f:  # as older files named a curve: it still opens
        f.move("analyses/hb_curve1", "analyses/hb.curve1")
    assert dl.open(path).analyses["hb.curve1"].to_dict() == curves[1]
    _json(capsys, *args, "--overwrite")  # the branch alone now: its old curves go
    assert dl.open(path).analyses.names() == ["hb"]


def test_cycles_adds_its_orbits_and_refuses_a_name_taken(tmp_path, capsys, fold_bautin):
    path = tmp_path / "s.h5"
    args = ("cycles", fold_bautin, "--param", "r", "--from", "0.5", "--to", "1.5",
            "--segments", "4", "--steps", "120", "--max-points", "6", "--out", path)
    data, err = _json(capsys, *args)
    assert f"saved {path} (/analyses/periodic_orbits0)" in err
    orbits = dl.open(path).analyses["periodic_orbits0"]
    assert orbits.to_dict() == data and len(data["points"]) == 6
    assert orbits.hopf.kind == "hopf" and orbits.hopf.value == pytest.approx(1.0, abs=1e-9)
    params = orbits.model.parameters()  # an equations model is rebuilt: orbits rerun
    assert {k: float(v) for k, v in params.items()} == {"r": 0.5, "b": 1.0}
    ts, ys = orbits.orbit(5)
    assert ts[-1] == orbits.periods[5] and ys[:, 1].max() == pytest.approx(orbits.maxima[5, 1],
                                                                             rel=1e-4)
    with h5py.File(path) as f:
        np.testing.assert_array_equal(f["analyses/periodic_orbits0/periods"][()],
                                      [p["period"] for p in data["points"]])

    status, out, err = _run(capsys, *args, "--name", "periodic_orbits0")
    assert status == 2 and out == "" and err.count("\n") == 1
    assert "already holds an analysis named 'periodic_orbits0'" in err
