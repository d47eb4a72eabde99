"""Property: any sequence of CLI, Python and app saves, overwrites, deletes and reopens on one
file keeps every object that was in it and was not deleted, bit for bit."""

import shutil
import tempfile
from pathlib import Path

import h5py
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import difflab as dl
from difflab.app.lab import Lab
from difflab.app.session_io import open_lab, save_lab
from difflab.cli import main

NAMES = ("a", "b", "c")
MODEL = dl.models.get("lorenz")

cli_run = st.tuples(st.just("cli"), st.sampled_from(NAMES), st.floats(1.0, 40.0))
python_save = st.tuples(st.just("python"), st.sampled_from(NAMES), st.floats(1.0, 40.0))
app_change = st.tuples(st.just("app"), st.none(), st.floats(1.0, 40.0))
app_delete = st.tuples(st.just("app_delete"), st.sampled_from(NAMES), st.none())
reopen = st.tuples(st.just("reopen"), st.none(), st.none())
steps = st.lists(st.one_of(cli_run, python_save, app_change, app_delete, reopen),
                 min_size=1, max_size=8)


def runs_in(path) -> dict[str, bytes]:
    """Each run's name -> the bytes of its states and attributes (what must not change)."""
    with h5py.File(path, "r") as f:
        return {name: group["y"][()].tobytes() + repr(sorted(
                    (k, np.asarray(v).tobytes()) for k, v in group.attrs.items())).encode()
                for name, group in f["runs"].items()}


def apply(step, path: Path, expected: dict) -> None:
    """Do one step; update ``expected`` (name -> bytes, ``None``: changed, re-read after)."""
    kind, name, rho = step
    if kind == "cli":
        argv = ["run", "lorenz", "--set", f"rho={rho}", "--t1", "0.05", "--dt", "1e-2",
                "--out", str(path), "--name", name]
        clash = name in expected
        assert main(argv) == (2 if clash else 0)
        if clash:  # refused without --overwrite, then replaced with it
            assert main([*argv, "--overwrite"]) == 0
        expected[name] = None
    elif kind == "python":
        traj = dl.simulate(MODEL(rho=rho), 0.05, dt=1e-2)
        dl.io.save_run(path, traj, name=name, overwrite=True)
        expected[name] = None
    elif kind in ("app", "app_delete"):
        if not path.exists():
            return
        lab = Lab("lorenz")
        open_lab(lab, path)
        if kind == "app":
            lab.set_param("rho", rho)
            lab.solve_now()
            expected["current"] = None
        elif name in lab.runs:
            lab.delete("run", name)
            expected.pop(name)
        save_lab(lab, path)
    else:
        if path.exists():
            dl.open(path)


@pytest.mark.slow
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps)
def test_saves_keep_everything_not_deleted(sequence):
    folder = Path(tempfile.mkdtemp())
    try:
        path, expected = folder / "s.h5", {}
        for step in sequence:
            apply(step, path, expected)
            if not path.exists():
                continue
            stored = runs_in(path)
            assert set(stored) == set(expected), (step, sorted(stored), sorted(expected))
            for name, value in expected.items():
                assert value is None or stored[name] == value, (step, name)
            expected.update(stored)  # what the file holds now must survive what follows
    finally:
        shutil.rmtree(folder)
