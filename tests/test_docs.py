"""The documentation runs as written.

Every fenced ``python``, ``bash``/``sh`` and ``console`` block of README.md, docs/*.md and
examples/**/README.md is run in document order, in a fresh folder per document (holding a
copy of ``examples/``), by one Python process per document: python blocks share one
namespace, as a reader's session would; shell blocks run with the environment's
``difflab`` first on ``PATH``. A block whose fence is preceded by ``<!-- skip: reason -->``
is reported as skipped with that reason. Outputs shown in the docs are compared: the lines
after each ``$ command`` of a console block, and a ``text`` block that directly follows a
python or shell block (its stdout); ``...`` matches anything and runs of whitespace match
any whitespace.

Run as a script (``python tests/test_docs.py PLAN.json RESULTS.jsonl``) it is that process.
"""

import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import time
import traceback
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUNNABLE = {"python": "python", "py": "python", "bash": "shell", "sh": "shell",
            "shell": "shell", "console": "console"}
SKIP = re.compile(r"<!--\s*skip:\s*(.*?)\s*-->")
FENCE = re.compile(r"^(\s*)(```+)\s*([\w+-]*)")
# Blocks that change the machine (installs, root) are never run: they must be marked skip.
UNSAFE = re.compile(r"\b(pip3?|apt-get|apt|brew|conda)\s+install\b|\bsudo\b|packaging/")
# Documents that take more than a few seconds (measured; they still run in CI).
SLOW = {"docs/analysis.md", "docs/sweeps.md", "docs/fitting.md", "README.md",
        "examples/fit_lotka_volterra/README.md", "docs/solvers.md", "docs/user-models.md"}


def documents():
    """The documents whose blocks are run, relative to the repository root."""
    paths = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
             *sorted((ROOT / "examples").rglob("README.md"))]
    return [p.relative_to(ROOT).as_posix() for p in paths]


def parse(text):
    """The fenced blocks of a Markdown text: dicts of lang, code, line, skip, expected."""
    blocks, lines, i, last_end = [], text.splitlines(), 0, -2
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, lang = m.group(1), m.group(2), m.group(3).lower()
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            j += 1
        body = [line[len(indent):] if line.startswith(indent) else line for line in lines[i + 1:j]]
        code, before = "\n".join(body) + "\n", _previous_line(lines, i)
        skip = SKIP.search(before)
        follows = blocks and last_end >= 0 and not any(s.strip() for s in lines[last_end + 1:i])
        if lang == "text" and follows and blocks[-1]["kind"] in ("python", "shell"):
            blocks[-1]["expected"] = code
        else:
            blocks.append({"kind": RUNNABLE.get(lang), "code": code, "line": i + 2,
                           "skip": skip.group(1) if skip else None, "expected": None})
        last_end, i = j, j + 1
    return [b for b in blocks if b["kind"]]


def _previous_line(lines, i):
    """The last non-blank line before line ``i`` (where a skip marker goes)."""
    for line in reversed(lines[:i]):
        if line.strip():
            return line
    return ""


def console_commands(code):
    """``(command, expected output)`` pairs of a console block (``$ `` starts a command)."""
    pairs = []
    for line in code.splitlines():
        if line.startswith("$ "):
            pairs.append([line[2:], []])
        elif pairs:
            pairs[-1][1].append(line)
    return [(cmd, "\n".join(out)) for cmd, out in pairs]


def _piece(part):
    return re.compile(r"\s+".join(map(re.escape, part.split())))


def _walk(expected, actual):
    """How far ``actual`` shows ``expected``: ``(parts matched, parts)``, leftmost first.

    ``...`` matches anything (each part is found after the one before, so a failing
    comparison of a long output costs one scan, not a backtracking search)."""
    parts = expected.split("...")
    text, pos = actual.strip(), 0
    for k, part in enumerate(parts):
        piece = _piece(part)
        if not part.strip():
            continue
        if k == 0:
            m = piece.match(text)
        elif k == len(parts) - 1:
            m = re.compile(piece.pattern + r"\Z").search(text, pos)
        else:
            m = piece.search(text, pos)
        if m is None:
            return k, parts
        pos = m.end()
    if parts[-1].strip() == "" or pos == len(text):
        return len(parts), parts
    return -1, parts


def matches(expected, actual):
    """Whether ``actual`` shows ``expected``: ``...`` is a wildcard, whitespace is loose."""
    done, parts = _walk(expected, actual)
    return done == len(parts)


def mismatch(expected, actual):
    """Where ``actual`` stops showing ``expected``: the first part between ``...`` not found."""
    done, parts = _walk(expected, actual)
    if done < 0 or done == len(parts):
        return "prints more after what it shows"
    return f"shows {parts[done].strip()!r} (part {done + 1} of {len(parts)}), not printed there"


# ---- the process that runs one document's blocks (python tests/test_docs.py ...) ----


def _run_shell(command, env):
    proc = subprocess.run(["bash", "-e", "-c", command], capture_output=True, text=True,
                          env=env, timeout=600)
    return proc.returncode, proc.stdout, proc.stderr


def _run_python(block, namespace, name):
    source = "\n" * (block["line"] - 1) + block["code"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(source, name, "exec"), namespace)
    return out.getvalue()


def _outcome(block, name, namespace, env):
    """What one block did: ``{"error": ..., "outputs": [(line, expected, stdout, stderr)]}``."""
    if block["kind"] == "python":
        try:
            return {"outputs": [(block["line"], block["expected"], _run_python(block, namespace, name), "")]}
        except BaseException:
            return {"error": traceback.format_exc(limit=-3)}
    commands = console_commands(block["code"]) if block["kind"] == "console" else [
        (block["code"], block["expected"])]
    outputs = []
    for k, (command, expected) in enumerate(commands):
        status, stdout, stderr = _run_shell(command, env)
        line = block["line"] + block["code"].splitlines().index("$ " + command) if block[
            "kind"] == "console" else block["line"]
        if status:
            return {"error": f"line {line}: `{command.strip()}` exited {status}\n{stdout}\n{stderr}"}
        outputs.append((line, expected, stdout, stderr))
    return {"outputs": outputs}


def main(plan_path, results_path):
    """Run the blocks of a plan in order; one JSON line per block, stopping at an error."""
    plan = json.loads(Path(plan_path).read_text())
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    namespace = {"__name__": "__main__"}
    with open(results_path, "w") as results:
        for block in plan["blocks"]:
            if block["skip"]:
                continue
            start = time.perf_counter()
            outcome = dict(_outcome(block, plan["name"], namespace, env), line=block["line"])
            outcome["seconds"] = round(time.perf_counter() - start, 2)
            results.write(json.dumps(outcome) + "\n")
            results.flush()
            if "error" in outcome:
                break


# ---- the tests ----

def _params(slow_docs):
    return [pytest.param(doc, id=doc, marks=[pytest.mark.slow] if doc in slow_docs else [])
            for doc in documents()]

def _skipped():
    return [pytest.param(f"{doc}:{b['line']}: {b['skip']}", id=f"{doc}:{b['line']}")
            for doc in documents() for b in parse((ROOT / doc).read_text()) if b["skip"]]

def _clip(text, n=3000):
    return text if len(text) <= n else f"{text[:n // 2]}\n[...]\n{text[-n // 2:]}"


def _reader_env(folder):
    """A reader's environment: the machine's own JAX devices (not the tests' eight), and a
    config folder of its own (trust store)."""
    env = dict(os.environ, DIFFLAB_CONFIG_DIR=str(folder / "config"), COLUMNS="100")
    env.pop("XLA_FLAGS", None)
    return env

@pytest.mark.parametrize("doc", _params(SLOW))
def test_document_runs_as_written(doc, tmp_path):
    blocks = parse((ROOT / doc).read_text())
    unsafe = [b["line"] for b in blocks if not b["skip"] and UNSAFE.search(b["code"])]
    assert not unsafe, f"{doc}: blocks at lines {unsafe} install or build: mark them skip"
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    (tmp_path / "plan.json").write_text(json.dumps({"name": doc, "blocks": blocks}))
    results = tmp_path / "results.jsonl"
    proc = subprocess.run([sys.executable, __file__, "plan.json", str(results)],
                          cwd=tmp_path, env=_reader_env(tmp_path), capture_output=True, text=True,
                          timeout=900)
    outcomes = [json.loads(line) for line in results.read_text().splitlines()]
    problems = [f"{doc}:{o['line']}: {o['error']}" for o in outcomes if "error" in o]
    for o in outcomes:
        for line, expected, stdout, stderr in o.get("outputs", []):
            if expected and not (matches(expected, stdout) or matches(expected, stdout + stderr)):
                problems.append(f"{doc}:{line}: {mismatch(expected, stdout)}; it prints\n"
                                f"{_clip(stdout)}\n(stderr: {_clip(stderr)})")
    if proc.returncode:
        problems.append(f"the process running {doc} exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    assert not problems, "\n\n".join(problems)

@pytest.mark.parametrize("reason", _skipped())
def test_partial_block_is_marked(reason):
    pytest.skip(reason)

def test_parse_reads_blocks_markers_and_outputs():
    text = ("<!-- skip: needs a display -->\n```bash\ndifflab\n```\n\n"
            "```python\nprint(1 + 1)\n```\n\n```text\n2\n```\n\nprose\n\n```text\nlayout\n```\n"
            "```console\n$ echo hi\nhi\n```\n")
    blocks = parse(text)
    assert [(b["kind"], b["line"], b["skip"]) for b in blocks] == [
        ("shell", 3, "needs a display"), ("python", 7, None), ("console", 20, None)]
    assert blocks[1]["expected"] == "2\n"
    assert console_commands(blocks[2]["code"]) == [("echo hi", "hi")]

def test_matches_is_loose_on_whitespace_and_ellipses_only():
    assert matches("rho from 2 to 24.4...: stable", "rho from 2 to 24.4567: stable\n")
    assert matches('{"a": [1,\n  2], ...}', '{"a": [1, 2], "b": 3}')
    assert not matches("rho from 2 to 24.6...: stable", "rho from 2 to 24.4567: stable")
    assert not matches("[0.9017]", "[0.90322]")
    assert not matches("a", "a b") and matches("a ...", "a b")
    start, long = time.perf_counter(), '{"v": 1.5, "w": [2, 3]}, ' * 5000
    assert not matches("..." + "...".join(['"v": 1.5', '"w": [2', "4]"] * 20) + "...", long)
    assert time.perf_counter() - start < 1.0   # one scan, no backtracking


if __name__ == "__main__":
    main(*sys.argv[1:3])
