"""The persistent compilation cache that ``import difflab`` turns on: a folder of the user's
own, read back by the next process, off on request."""

import json
import os
import stat
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow  # each test starts Python processes

# A run whose program takes long enough to compile to be kept; prints what the process saw.
SCRIPT = """
import json, jax, warnings
hits = []
jax.monitoring.register_event_listener(
    lambda event, **_: hits.append(event) if event.endswith("cache_hits") else None)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import difflab as dl
    import difflab.solvers  # JAX's settings, the cache among them, come with what uses JAX
folder = dl.solvers.compilation_cache_dir()
dl.simulate(dl.models.get("lorenz")(), 5.0, solver="tsit5")
print(json.dumps({"folder": None if folder is None else str(folder), "hits": len(hits),
                  "warnings": [str(w.message) for w in caught]}))
"""


def _run(tmp_path, **env) -> dict:
    base = {k: v for k, v in os.environ.items()
            if k not in ("DIFFLAB_NO_COMPILATION_CACHE", "JAX_COMPILATION_CACHE_DIR")}
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                         check=True, env={**base, "XDG_CACHE_HOME": str(tmp_path), **env})
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_second_process_reads_the_programs_the_first_compiled(tmp_path):
    folder = tmp_path / "difflab" / "jax"
    first = _run(tmp_path)
    assert first["folder"] == str(folder) and first["hits"] == 0
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700  # the owner's alone
    assert any(folder.iterdir())
    second = _run(tmp_path)
    assert second["hits"] >= 1 and second["warnings"] == []


def test_the_variable_turns_it_off(tmp_path):
    seen = _run(tmp_path, DIFFLAB_NO_COMPILATION_CACHE="1")
    assert seen["folder"] is None and not (tmp_path / "difflab").exists()


def test_a_folder_others_may_write_to_is_not_used(tmp_path):
    folder = tmp_path / "difflab" / "jax"
    folder.mkdir(parents=True)
    folder.chmod(0o777)
    seen = _run(tmp_path)
    assert seen["folder"] is None and not any(folder.iterdir())
    assert any("only you can write to" in text for text in seen["warnings"])


def test_a_folder_chosen_for_jax_is_kept(tmp_path):
    chosen = tmp_path / "mine"
    seen = _run(tmp_path, JAX_COMPILATION_CACHE_DIR=str(chosen))
    assert seen["folder"] == str(chosen) and not (tmp_path / "difflab").exists()
