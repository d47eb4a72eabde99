"""Fuzzing the command line (issue 15): random options and TOML files, hostile strings, NaN,
inf, negative and huge numbers. Whatever comes in, the CLI ends with status 0, 1, 2 or
130, never a traceback, and a refusal ends with one printable ``difflab: error:`` line.

Each example starts from a valid command or file and changes a few of its values to wild
ones, so that it gets past the first check. Runs are kept short (small t1, few steps):
the caps on steps and memory are tested where they are made.
"""

import contextlib
import io
import math
import re
import shutil
import tempfile
from pathlib import Path

import h5py
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from difflab.cli import main
from difflab.cli.errors import UsageError
from difflab.cli.main import build_parser

HOSTILE = ["", " ", "nan", "-nan", "inf", "-inf", "1e309", "-1", "0", "-0", "1e-320", "1e300",
           "2.5", "x", "\x1b[2J", "a\nb", "\u202e", "\u2603", "--t1", "=", "1,2", ",", "a/b",
           "9" * 30, "1_0", "0x10", "../x"]
ADAPTIVE = ("tsit5", "dopri5", "dopri8", "kvaerno5")
FUZZ = settings(deadline=None, suppress_health_check=list(HealthCheck), derandomize=True,
                database=None)

text = st.text(max_size=12).filter(lambda s: "\x00" not in s)  # argv never holds NUL
hostile = st.one_of(st.sampled_from(HOSTILE), text)
numeral = st.one_of(st.sampled_from(HOSTILE), st.floats().map(repr),
                    st.integers(-2**70, 2**70).map(str), text)
number = st.one_of(st.sampled_from([0.0, -1.0, 2.5, 1e300, -1e300, 1e-320, 2**63, 10**15]),
                   st.floats(), st.integers(-2**70, 2**70), st.integers(-3, 30))
scalar = st.one_of(number, st.booleans(), hostile)
wild = st.one_of(scalar, st.lists(number, max_size=3), st.just({}), st.just([]))


def one_in(n: int):
    """True about once in ``n`` draws (not the first value tried, which hypothesis favours)."""
    return st.integers(0, n - 1).map(lambda i: i == n // 2)


def _cli(argv) -> tuple[int, str]:
    """``main(argv)`` in this process: its exit status and what it wrote to stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, err.getvalue()


def _check(argv) -> int:
    code, err = _cli(argv)
    assert code in (0, 1, 2, 130), (argv, code, err)
    assert "Traceback" not in err, (argv, err)
    if code == 2:
        last = err.rstrip("\n").split("\n")[-1]
        assert last.startswith("difflab: error: ") and last.isprintable(), (argv, err)
    return code


@contextlib.contextmanager
def _folder():
    folder = Path(tempfile.mkdtemp())
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _out(draw, folder: Path, suffixes=(".h5",)) -> str:
    """An --out value: a file in ``folder``, now and then something odd (kept inside it)."""
    kind = draw(st.sampled_from(["file"] * 6 + ["odd", "empty", "folder", "missing", "hostile"]))
    if kind in ("file", "odd"):
        odd = [".txt", ".h5.h5", "", ".H5", ".csv"]
        return str(folder / ("out" + draw(st.sampled_from(suffixes if kind == "file" else odd))))
    if kind == "empty":
        return draw(st.sampled_from(["", " "]))
    if kind == "folder":
        return str(folder)
    if kind == "missing":
        return str(folder / "no" / "such" / "out.h5")
    return str(folder / (draw(hostile).replace("/", "_") + draw(st.sampled_from(suffixes))))


def _mutate(draw, options: dict, values) -> dict:
    """``options`` with zero to two of its entries given a wild value or removed."""
    for _ in range(draw(st.integers(0, 2))):
        key = draw(st.sampled_from(sorted(options)))
        if draw(one_in(5)):
            options.pop(key)
        else:
            options[key] = draw(values)
    return options


# -- run ---------------------------------------------------------------------------------

MODELS = {  # name: (parameters, states, solvers)
    "lorenz": (["rho", "sigma", "beta"], 3, ["rk4", "euler", "heun", "tsit5"]),
    "pendulum": (["g", "length", "theta0"], 2, ["rk4", "leapfrog", "dopri5"]),
    "lotka_volterra": (["alpha", "beta", "prey0"], 2, ["rk4", "heun"]),
    "ornstein_uhlenbeck": (["theta", "mu", "sigma"], 1, ["euler_maruyama"]),
}


@st.composite
def run_argv(draw, folder: Path):
    model = draw(st.sampled_from(sorted(MODELS)))
    params, n_states, solvers = MODELS[model]
    options = {"model": model, "--t1": draw(st.sampled_from(["0.01", "0.05", "1e-300"]))}
    usual = {"--t0": ["0", "-0.5"], "--dt": ["1e-3", "0.01"], "--n-save": ["2", "5"],
             "--solver": solvers, "--rtol": ["1e-6", "1e-3"], "--atol": ["1e-9"],
             "--max-steps": ["100", "100000"], "--key": ["0", "7"],
             "--y0": [",".join(["0.5"] * n_states)], "--name": ["r1", "run_2"],
             "--set": [f"{p}=1.5" for p in params]}
    for flag, values in usual.items():
        if draw(one_in(4)):
            options[flag] = draw(st.sampled_from(values))
    if draw(st.booleans()):
        options["--out"] = _out(draw, folder, (".h5", ".csv"))
    wild_value = st.one_of(numeral, hostile, st.lists(numeral, max_size=4).map(",".join),
                           st.sampled_from([f"{p}={v}" for p in params for v in HOSTILE[:8]]))
    options = _mutate(draw, options, wild_value)
    argv = ["run", options.pop("model", draw(hostile))]
    for flag, value in options.items():
        argv += [flag, value]
    return argv + draw(st.lists(st.sampled_from(["--overwrite", "--compress"]), max_size=2))


def _short(argv) -> bool:
    """True unless the run could take long (many steps), so the fuzz test stays quick."""
    try:
        args = build_parser().parse_args([str(a) for a in argv])
    except UsageError:
        return True  # refused before running
    if args.t1 <= args.t0:
        return True
    if args.solver in ADAPTIVE:
        return args.t1 - args.t0 <= 1.0 and (args.n_save is None or args.n_save <= 1e4)
    dt = args.dt
    return dt is None or not dt > 0 or (args.t1 - args.t0) / dt <= 1e5


@pytest.mark.slow
@settings(FUZZ, max_examples=30)
@given(data=st.data())
def test_run_with_random_options_never_shows_a_traceback(data):
    with _folder() as folder:
        argv = data.draw(run_argv(folder))
        assume(_short(argv))
        _check(argv)


# -- TOML files ----------------------------------------------------------------------------

def toml_value(value) -> str:
    """``value`` as TOML (NaN and inf included; quotes and control characters in text
    written as ``\\uXXXX``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return '"' + "".join(f"\\u{ord(c):04x}" if c in '"\\' or (c < "\x80" and not
                             c.isprintable()) else c for c in value) + '"'
    if isinstance(value, list):
        return "[" + ", ".join(map(toml_value, value)) + "]"
    return "{" + ", ".join(f"{_key(k)} = {toml_value(v)}" for k, v in value.items()) + "}"


def _key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else toml_value(key)


def toml(data: dict) -> str:
    """A TOML document: the top-level values, then one ``[table]`` per dict (dotted)."""
    lines, tables = [], []
    for key, value in data.items():
        if isinstance(value, dict) and value and all(isinstance(v, dict) for v in value.values()):
            tables += [(f"{_key(key)}.{_key(k)}", v) for k, v in value.items()]
        elif isinstance(value, dict):
            tables.append((_key(key), value))
        else:
            lines.append(f"{_key(key)} = {toml_value(value)}")
    for name, table in tables:
        lines += [f"[{name}]", *(f"{_key(k)} = {toml_value(v)}" for k, v in table.items())]
    return "\n".join(lines) + "\n"


def _mutate_tree(draw, tree: dict) -> dict:
    """``tree`` (nested dicts) with zero to three leaves given a wild value or removed."""
    for _ in range(draw(st.integers(0, 3))):
        node, path = tree, []
        while isinstance(node, dict) and node and not draw(one_in(4)):
            key = draw(st.sampled_from(sorted(node)))
            path.append((node, key))
            node = node[key]
        if not path:
            continue
        parent, key = path[-1]
        if draw(one_in(5)):
            parent.pop(key)
        else:
            parent[key] = draw(wild)
    return tree


@st.composite
def sweep_config(draw) -> dict:
    space = draw(st.sampled_from([
        {"grid": {"rho": [1.0, 2.0]}},
        {"grid": {"rho": {"linspace": [1.0, 2.0, 3]}, "sigma": {"logspace": [0.0, 1.0, 2]}}},
        {"points": {"rho": [1.0, 2.0], "y0": {"x": [0.5, 1.5]}}},
        {"sample": {"method": "sobol", "n": 4, "ranges": {"rho": [1.0, 10.0, "log"]}}},
        {"sample": {"method": "uniform", "n": 3, "seed": 1, "ranges": {"beta": [1.0, 2.0]}}},
    ]))
    config = {"model": "lorenz", "name": draw(st.sampled_from(["s1", "s_2"])),
              "parameters": {"beta": 2.5},
              "solve": {"t1": draw(st.sampled_from([0.01, 0.001])), "dt": 1e-3,
                        "solver": draw(st.sampled_from(["rk4", "euler", "tsit5"])),
                        "n_save": draw(st.sampled_from([2, 5])), "y0": {"x": 1.0}},
              "space": space,
              "output": {"observables": {"m": draw(st.sampled_from(["max(x)", "period(x)"]))}},
              "run": {"chunk_size": draw(st.sampled_from([1, 2, 64])),
                      "memory_budget": "64 MiB"}}
    return _mutate_tree(draw, config)


def _integers(tree):
    if isinstance(tree, dict | list):
        for value in tree.values() if isinstance(tree, dict) else tree:
            yield from _integers(value)
    elif isinstance(tree, int) and not isinstance(tree, bool):
        yield tree


def _small_sweep(config: dict) -> bool:
    """True unless the sweep could take long or be huge (many points, steps or states)."""
    solve, space = config.get("solve"), config.get("space")
    if not (isinstance(solve, dict) and isinstance(space, dict)):
        return True
    if any(n > 100 for n in _integers(space)) or any(n > 10**4 for n in _integers(solve)):
        return False
    numbers = [solve.get(k, d) for k, d in (("t0", 0.0), ("t1", 0.0), ("dt", math.nan))]
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in numbers):
        return True
    t0, t1, dt = (float(v) for v in numbers)
    if solve.get("solver") == "tsit5" and not t1 - t0 <= 0.1:
        return False
    return not (t1 > t0 and dt > 0 and (t1 - t0) / dt > 1e4)


@pytest.mark.slow
@settings(FUZZ, max_examples=15)
@given(data=st.data())
def test_sweep_with_random_config_files_never_shows_a_traceback(data):
    config = data.draw(sweep_config())
    assume(_small_sweep(config))
    with _folder() as folder:
        path = folder / "sweep.toml"
        text = toml(config)
        if data.draw(one_in(10)):  # now and then, a line of garbage
            lines = text.splitlines()
            lines.insert(data.draw(st.integers(0, len(lines))), data.draw(text_line))
            text = "\n".join(lines)
        path.write_text(text, encoding="utf-8")
        argv = ["sweep", path, "--out", _out(data.draw, folder)]
        for flag, values in (("--name", hostile), ("--chunk-size", numeral),
                             ("--devices", numeral)):
            if data.draw(one_in(6)):
                argv += [flag, data.draw(values)]
        argv += data.draw(st.lists(st.sampled_from(["--resume", "--overwrite", "--json"]),
                                   max_size=2))
        _check(argv)


text_line = st.text(max_size=20).filter(lambda s: "\n" not in s and "\r" not in s)


@st.composite
def fit_config(draw) -> dict:
    config = {"model": "lotka_volterra", "data": "obs.csv", "params": ["alpha"],
              "name": "f1", "parameters": {"alpha": 1.0},
              "solve": {"solver": "rk4", "dt": 0.1},
              "fit": {"fit_max_steps": 2, "starts": 1, "seed": 0, "sigma": 0.5,
                      "method": draw(st.sampled_from(["lm", "bfgs"]))},
              "bounds": {"alpha": [0.1, 5.0]}}
    return _mutate_tree(draw, config)


@pytest.mark.slow
@settings(FUZZ, max_examples=10)
@given(data=st.data())
def test_fit_with_random_config_files_never_shows_a_traceback(data):
    config = data.draw(fit_config())
    steps = config.get("fit", {}).get("fit_max_steps") if isinstance(config.get("fit"), dict) \
        else None
    assume(not (isinstance(steps, int | float) and 3 < steps < 10**6))
    with _folder() as folder:
        (folder / "obs.csv").write_text("t,prey,predator\n0,10,10\n1,5,11\n2,2,10\n")
        path = folder / "fit.toml"
        path.write_text(toml(config), encoding="utf-8")
        argv = ["fit", path, "--out", _out(data.draw, folder), "--quiet"]
        if data.draw(one_in(4)):
            argv += ["--devices", data.draw(numeral)]
        _check(argv)


# -- open ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def session_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("open") / "s.h5"
    assert main(["run", "lorenz", "--t1", "0.05", "--dt", "1e-2", "--out", str(path)]) == 0
    return path


@pytest.mark.slow
@settings(FUZZ, max_examples=25)
@given(kind=st.sampled_from(["session", "hostile", "truncated", "text", "hdf5", "folder",
                             "missing", "name"]),
       value=hostile, as_json=st.booleans())
def test_open_with_random_files_never_shows_a_traceback(session_file, kind, value, as_json):
    with _folder() as folder:
        path = folder / "f.h5"
        if kind in ("session", "hostile", "truncated"):
            shutil.copy(session_file, path)
        if kind == "hostile":
            with h5py.File(path, "r+") as f:
                f["runs/run0"].attrs["result_message"] = value
                f.attrs["created"] = value
        elif kind == "truncated":
            path.write_bytes(path.read_bytes()[: len(value) * 997 % path.stat().st_size])
        elif kind == "text":
            path.write_text(value)
        elif kind == "hdf5":
            with h5py.File(path, "w") as f:
                f.attrs["difflab_format"] = value
        elif kind == "folder":
            path = folder
        elif kind == "name":
            path = folder / value.replace("/", "_")
        assert _check(["open", path, *(["--json"] if as_json else [])]) in (0, 2)
