"""The test files are handed to the workers longest first, as ``tests/conftest.py`` orders
them. xdist re-sorted them by their numbers of tests unless told not to, so the view
matrix (one test of minutes) started last and kept one worker busy alone at the end."""

import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

HOOK = f'''
import importlib.util, os, time

spec = importlib.util.spec_from_file_location("project_conftest", {str(ROOT / "tests" /
                                                                        "conftest.py")!r})
project = importlib.util.module_from_spec(spec)
spec.loader.exec_module(project)
pytest_collection_modifyitems = project.pytest_collection_modifyitems


def pytest_runtest_setup(item):
    with open(os.environ["STARTED"], "a") as f:
        f.write(os.environ["PYTEST_XDIST_WORKER"] + " " + item.path.name + "\\n")
'''


def test_the_longest_file_of_one_test_starts_first(tmp_path):
    tests = tmp_path / "tests"
    (tests / "gui").mkdir(parents=True)
    (tests / "conftest.py").write_text(HOOK)
    (tests / "gui" / "test_view_matrix.py").write_text("def test_all():\n    pass\n")
    for k in range(6):  # files of many quick tests, which xdist would hand out first
        (tests / f"test_many_{k}.py").write_text(
            "".join(f"def test_{i}():\n    pass\n" for i in range(20 + k)))
    ini = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    markers = "".join(f"\n    {marker}" for marker in ini["markers"])
    (tmp_path / "pytest.ini").write_text(
        f"[pytest]\naddopts = {ini['addopts']}\nmarkers ={markers}\n")
    started = tmp_path / "started.txt"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2",
         "--dist", "loadfile", "tests"], cwd=tmp_path, capture_output=True, text=True,
        timeout=300, env={**_without_pytest_settings(), "STARTED": str(started)})
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    first = {}  # each worker's first test file: the files it was handed first
    for line in started.read_text().splitlines():
        worker, name = line.split()
        first.setdefault(worker, name)
    assert "test_view_matrix.py" in first.values(), first


def _without_pytest_settings() -> dict:
    """This process's environment without its PYTEST_* settings (xdist's own, the
    caller's PYTEST_ADDOPTS)."""
    return {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
