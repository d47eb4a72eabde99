"""A session file keeps the command as typed, never a folder of the machine that wrote it."""

import subprocess
import sys
from pathlib import Path

import h5py
import pytest

DIFFLAB = Path(sys.executable).parent / "difflab"  # the installed command, by its full path


def _strings(path) -> list[str]:
    """Every text attribute of the file, decoded."""
    found = []

    def visit(_, obj):
        found.extend(v.decode() if isinstance(v, bytes) else v
                     for v in obj.attrs.values() if isinstance(v, (bytes, str)))

    with h5py.File(path, "r") as f:
        visit("", f)
        f.visititems(visit)
    return found


@pytest.mark.skipif(not DIFFLAB.exists(), reason="the difflab command is not installed")
def test_a_cli_run_keeps_the_command_as_typed_and_no_folder(tmp_path):
    args = ["run", "lorenz", "--t1", "0.1", "--dt", "0.01", "--solver", "rk4", "--out", "run.h5"]
    done = subprocess.run([str(DIFFLAB), *args], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    path = tmp_path / "run.h5"
    strings = _strings(path)
    assert "difflab " + " ".join(args) in strings  # provenance's command_line
    folders = {str(tmp_path), str(tmp_path.resolve()), str(DIFFLAB.parent),
               str(DIFFLAB.resolve().parent)}
    assert [s for s in strings if any(f in s for f in folders)] == []
    raw = path.read_bytes()  # nor anywhere else in the file (the data are not compressed)
    assert [f for f in folders if f.encode() in raw] == []
