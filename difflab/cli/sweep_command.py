"""``difflab sweep CONFIG.toml --out sweep.h5``: a parameter sweep from a TOML file.

The file format is documented in ``docs/sweeps.md`` (example: ``examples/sweep_lorenz.toml``).
A bad file gives one line naming the key at fault and exit status 2. Progress (points/s,
ETA, failed points) goes to stderr; the summary to stderr, or as JSON to stdout.
"""

import contextlib
import dataclasses
import json
import os
import sys
from pathlib import Path

import numpy as np

from .config_file import (
    ConfigError,
    initial_state,
    keyed,
    naming,
    number,
    one_line,
    parse,
    read,
    solve_table,
    table,
)
from .distributed import join
from .errors import EXIT_INTERRUPTED, UsageError

TOP = {"model", "name", "parameters", "solve", "space", "output", "run",
       "solver", "initial_state"}  # the last two: older files' names, read as [solve]
SAMPLE = {"method", "n", "seed", "ranges", "scramble"}
OUTPUT = {"trajectories", "observables", "n_save"}  # n_save: older files', read as solve.n_save
RUN = {"chunk_size", "memory_budget", "block_size"}
METHODS = ("uniform", "latin_hypercube", "sobol")
SPACING = ("linspace", "logspace", "geomspace")


@dataclasses.dataclass
class SweepConfig:
    """A sweep file, read and checked: what to build and how to run it."""

    path: str
    text: str
    model_ref: str
    name: str | None
    parameters: dict
    solve: dict
    space: dict
    output: dict
    run: dict
    trust: object = True  # may a Python model file it names run? (True: the user gave it)


def load_config(path) -> SweepConfig:
    """Read and check the structure of a sweep file (values are checked when built)."""
    with naming(path):
        return parse_config(read(path), path)


def parse_config(text: str, path) -> SweepConfig:
    """A sweep config from its TOML ``text``; relative model files are found beside ``path``."""
    data = parse(text, path)
    for key in data:
        if key not in TOP:
            raise ConfigError(f"unknown key {key!r} (allowed: {', '.join(sorted(TOP))})")
    if not isinstance(data.get("model"), str):
        raise ConfigError("model must be a model name, e.g. model = \"lorenz\"")
    name = data.get("name")
    if name is not None and not isinstance(name, str):
        raise ConfigError("name must be a string")
    solve = solve_table(data)
    output = _output(data)
    if "n_save" in output:
        if "n_save" in solve:
            raise ConfigError("give n_save once, in [solve]")
        solve["n_save"] = number(output.pop("n_save"), "solve.n_save", integer=True,
                                 positive=True)
    if "t1" not in solve:
        raise ConfigError("solve.t1 is missing: the end time of every simulation")
    return SweepConfig(os.fspath(path), text, data["model"], name,
                       _numbers_table(data, "parameters"), solve, table(data, "space"), output,
                       _run(data))


def _output(data) -> dict:
    output = dict(table(data, "output", OUTPUT))
    if not isinstance(output.get("trajectories", False), bool):
        raise ConfigError("output.trajectories must be true or false")
    for name, spec in table(output, "output.observables").items():
        if not isinstance(spec, str):
            raise ConfigError(f"output.observables.{name} must be a spec like \"max(x)\"")
    return output


def _run(data) -> dict:
    run = table(data, "run", RUN)
    for key in ("chunk_size", "block_size"):
        if key in run:
            number(run[key], f"run.{key}", integer=True, positive=True)
    budget = run.get("memory_budget", "512 MiB")
    if not isinstance(budget, (int, str)) or isinstance(budget, bool):
        raise ConfigError("run.memory_budget must be bytes or a size like \"512 MiB\"")
    from difflab.solvers import parse_size

    keyed("run.memory_budget", parse_size, budget)
    return run


def _numbers_table(data, key) -> dict:
    section = table(data, key)
    for k, v in section.items():
        number(v, f"{key}.{k}")
    return section


# -- building the sweep ------------------------------------------------------------------


def _axis(value, key: str) -> np.ndarray:
    if isinstance(value, list):
        if not value:
            raise ConfigError(f"{key} is an empty list: give at least one value")
        return np.array([number(v, key) for v in value], dtype=float)
    if isinstance(value, dict) and len(value) == 1:
        (kind, spec), = value.items()
        if kind in SPACING and isinstance(spec, list) and len(spec) == 3:
            start, stop = number(spec[0], key), number(spec[1], key)
            count = number(spec[2], f"{key}.{kind}[2]", integer=True, positive=True)
            with np.errstate(all="ignore"):
                values = keyed(f"{key}.{kind}", getattr(np, kind), start, stop, count)
            if not np.all(np.isfinite(values)):
                raise ConfigError(f"{key}.{kind} gives numbers too large for a float")
            return values
    raise ConfigError(f"{key} must be a list of numbers or {{ linspace = [start, stop, n] }} "
                      "(also logspace, geomspace)")


def _flat(table: dict, key: str) -> dict:
    """``{"y0": {"x": v}}`` (TOML ``y0.x = v``) becomes ``{"y0.x": v}``."""
    out = {}
    for k, v in table.items():
        if k == "y0" and isinstance(v, dict) and not set(SPACING) & set(v):
            out.update({f"y0.{s}": w for s, w in v.items()})
        else:
            out[k] = v
    return out


def _range(value, key):
    ok = isinstance(value, list) and len(value) in (2, 3) and (len(value) == 2 or value[2] == "log")
    if not ok:
        raise ConfigError(f"{key} must be [low, high] or [low, high, \"log\"]")
    low, high = number(value[0], key), number(value[1], key)
    if not low < high or (len(value) == 3 and low <= 0):
        need = "0 < low < high on a log scale" if len(value) == 3 else "low < high"
        raise ConfigError(f"{key} must have {need}, not [{low:g}, {high:g}]")
    return (low, high, *value[2:])


def build_space(space: dict):
    """The :class:`difflab.Space` a ``[space]`` table describes."""
    import jax

    import difflab as dl

    kinds = [k for k in space if k in ("grid", "points", "sample")]
    unknown = [k for k in space if k not in ("grid", "points", "sample")]
    if unknown:
        raise ConfigError(f"unknown key space.{unknown[0]} (use space.grid, space.points or "
                          "space.sample)")
    if len(kinds) != 1:
        raise ConfigError("space needs exactly one of space.grid, space.points, space.sample")
    kind = kinds[0]
    section = table(space, f"space.{kind}", SAMPLE if kind == "sample" else None)
    if kind != "sample":
        axes = {k: _axis(v, f"space.{kind}.{k}") for k, v in _flat(section, kind).items()}
        if not axes:
            raise ConfigError(f"space.{kind} names no parameter to sweep")
        lengths = {k: len(v) for k, v in axes.items()}
        if kind == "points" and len(set(lengths.values())) > 1:
            raise ConfigError("space.points columns differ in length ("
                              + ", ".join(f"{k}: {n}" for k, n in lengths.items())
                              + "); give each the same number of values")
        return keyed(f"space.{kind}", dl.grid, axes) if kind == "grid" else axes
    method = section.get("method", "sobol")
    if method not in METHODS:
        raise ConfigError(f"space.sample.method must be one of {', '.join(METHODS)}, "
                          f"not {method!r}")
    n = number(section.get("n"), "space.sample.n", integer=True, positive=True)
    seed = number(section.get("seed", 0), "space.sample.seed", integer=True)
    ranges = {k: _range(v, f"space.sample.ranges.{k}")
              for k, v in _flat(table(section, "space.sample.ranges"), "ranges").items()}
    if not ranges:
        raise ConfigError("space.sample.ranges names no parameter to sweep")
    options = {"scramble": bool(section.get("scramble", True))} if method == "sobol" else {}
    return keyed("space.sample", getattr(dl, method), jax.random.key(seed), n, ranges,
                 **options)


def _model(config: SweepConfig):
    import difflab as dl

    cls = keyed("model", dl.models.resolve, config.model_ref, base_dir=Path(config.path).parent,
                 trust=config.trust)
    model = keyed("model", cls)
    if isinstance(model, dl.models.AbstractFieldModel):
        raise ConfigError(f"model: {config.model_ref} is a field model; a sweep file runs ODE "
                          f"models only (sweep a field model with difflab sweep "
                          f"{config.model_ref} --param NAME=START:STOP:N, docs/fields.md)")
    for name, value in config.parameters.items():
        model = keyed(f"parameters.{name}", model.replace, **{name: value})
    return model, initial_state(model, config.solve.get("y0"))


def build_job(config: SweepConfig, *, chunk_size=None, devices=None):
    """The :class:`difflab.solvers.SweepJob` of a config; bad values raise ``ConfigError``."""
    import jax

    import difflab as dl
    from difflab.solvers import Space, SweepJob

    model, y0 = _model(config)
    built = build_space(config.space)
    kind = next(iter(config.space))
    space = keyed(f"space.{kind}", dl.solvers.as_space, built)
    for column in space.names:
        keyed(f"space.{kind}.{column}", Space({column: space[column]}, (len(space),)).check, model)
    s, out, run = config.solve, config.output, config.run
    keyed("solve.solver", dl.solvers.resolve_solver, s.get("solver"), model)
    observables = table(out, "output.observables")
    for name, spec in observables.items():
        keyed(f"output.observables.{name}", dl.solvers.resolve_observables, {name: spec},
              model.state_names)
    key = jax.random.key(s.get("key", 0)) if isinstance(model, dl.SDEModel) else None
    options = dict(t0=s.get("t0"), dt=s.get("dt"), solver=s.get("solver"),
                   n_save=s.get("n_save"), y0=y0, key=key, rtol=s.get("rtol"),
                   atol=s.get("atol"), max_steps=s.get("max_steps"),
                   observables=observables or None, trajectories=out.get("trajectories"),
                   chunk_size=chunk_size or run.get("chunk_size"),
                   memory_budget=run.get("memory_budget", 512 * 2**20),
                   block_size=run.get("block_size"), devices=devices)
    return keyed(config.path, SweepJob, model, space, s["t1"], **options)


# -- the command -------------------------------------------------------------------------


def _stored_config(out: str, name: str | None) -> SweepConfig:
    """The config text a sweep in ``out`` was started from (``--resume`` without a file)."""
    import difflab as dl

    if not os.path.exists(out):
        raise UsageError(f"--resume without a config needs an existing --out file; "
                         f"{out} is missing")
    sweeps = dl.open(out).stored("sweeps")
    stored = {s.name: s.attrs.get("config") for s in sweeps}
    paths = {s.name: s.attrs.get("config_path") for s in sweeps}
    candidates = [n for n, config in stored.items() if config and name in (None, n)]
    if len(candidates) != 1:
        which = f"sweep {name!r}" if name else "exactly one sweep started from a config file"
        raise UsageError(f"{out} holds no {which}; give the config file (or --name)")
    config = parse_config(stored[candidates[0]], Path(paths[candidates[0]] or out))
    from difflab.app import TrustStore

    # Read from a file, so a Python model file it names runs only if the user trusts it.
    return dataclasses.replace(config, trust=TrustStore())


class _Meter:
    """A rich progress bar on stderr: points, points/s, ETA and failed points (none when
    ``quiet``)."""

    def __init__(self, quiet: bool = False):
        import time

        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
        )

        self.clock, self.points, self.failed = time.perf_counter, 0, 0
        self.start = self.clock()
        self.progress = Progress(
            TextColumn("sweep"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[rate]:>12}"), TextColumn("ETA"), TimeRemainingColumn(),
            TextColumn("{task.fields[failed]} failed"),
            console=Console(stderr=True, highlight=False), disable=quiet)
        self.task = self.progress.add_task("sweep", total=None, rate="", failed=0)

    def begin(self, total: int, done: int) -> None:
        """Called before the first chunk: the points in all, and those already in the file."""
        self.progress.update(self.task, total=total, completed=done)
        self.start = self.clock()

    def __enter__(self):
        self.progress.start()
        return self

    def __exit__(self, *exc):
        self.progress.stop()

    def __call__(self, chunk) -> None:
        n = chunk.stop - chunk.start
        self.points += n
        self.failed += chunk.n_failed
        rate = self.points / max(self.clock() - self.start, 1e-9)
        self.progress.update(self.task, advance=n, rate=_rate(rate), failed=self.failed)


def _rate(points_per_second: float) -> str:
    """``"1,234 pts/s"``; below one a second, two figures (``"0.081 pts/s"``), not 0."""
    if points_per_second >= 1:
        return f"{points_per_second:,.0f} pts/s"
    return f"{points_per_second:.2g} pts/s"


def _summary_line(stats: dict) -> str:
    failures = ", ".join(f"{k} {v}" for k, v in stats["failures"].items())
    where = f"{stats['name']} in {stats['out']}" if stats.get("out") else "sweep"
    resumed = f", {stats['resumed']} resumed from the file" if stats["resumed"] else ""
    return (f"{where}: {stats['points']} points, {stats['failed']} failed"
            + (f" ({failures})" if failures else "") + resumed
            + f"; {stats['run_time']:.2f} s run + {stats['compile_time']:.2f} s compile, "
            + f"{stats['points_per_second']:,.0f} points/s on {stats['devices']} devices"
            + (f" in {stats['processes']} processes" if stats["processes"] > 1 else ""))


def sweep(args) -> int:
    """``difflab sweep CONFIG --out FILE``: run (or resume) the sweep a TOML file describes."""
    if getattr(args, "param", None):
        from .field_sweep_command import sweep_field_model

        return sweep_field_model(args, _Meter)
    if args.distributed:
        join(args)  # says what it waits for, and gives up after --coordinator-timeout
    if Path(args.out).suffix.lower() not in (".h5", ".hdf5", ".nc"):
        raise UsageError(f"--out must end in .h5, .hdf5 or .nc (an HDF5 session file), "
                         f"not {Path(args.out).name!r}")
    if args.chunk_size is not None and args.chunk_size < 1:
        raise UsageError(f"--chunk-size must be at least 1, got {args.chunk_size}")
    if args.resume and args.overwrite:
        raise UsageError("--resume and --overwrite contradict each other")
    if args.config is None and not args.resume:
        raise UsageError("give a sweep config file (or --resume to continue the sweep in --out)")
    config = load_config(args.config) if args.config else _stored_config(args.out, args.name)
    with naming(config.path):
        job = build_job(config, chunk_size=args.chunk_size, devices=args.devices)
    try:
        stats = _execute(job, config, args)
    except KeyboardInterrupt:
        print(f"difflab: interrupted; the chunks done are kept in {args.out}: run the same "
              "command again to resume", file=sys.stderr)
        return EXIT_INTERRUPTED
    import jax

    if jax.process_index() == 0:
        stats["notes"] = _notes(args.out, stats.get("name"))
        if args.json:
            print(json.dumps(stats, sort_keys=True))
        else:
            from rich.console import Console

            console = Console(stderr=True, highlight=False)
            console.print(_summary_line(stats), soft_wrap=True)
            for observable, why in stats["notes"].items():
                console.print(f"{observable}: {why}", soft_wrap=True, markup=False)
    return 0


def _notes(out: str, name: str | None) -> dict[str, str]:
    """The stored sweep's ``notes``: why an observable has no value at points that solved."""
    import difflab as dl

    try:
        return dict(dl.open(out).sweeps[name].notes) if name else {}
    except (KeyError, ValueError, OSError) as error:
        return {"notes": f"could not be read: {one_line(error)}"}


def _say_size(job, out: str) -> None:
    """A line on stderr before a sweep starts whose results take a GiB or more."""
    import jax

    size = job.output_bytes() / 2**30
    if size >= 1 and jax.process_index() == 0:
        shown = f"{size:,.1f} GiB" if size < 1024 else f"{size / 1024:,.1f} TiB"
        print(f"difflab: the sweep's {job.n_points:,} points take about {shown} in {out}",
              file=sys.stderr)


def _execute(job, config: SweepConfig, args) -> dict:
    import jax

    import difflab as dl
    from difflab.io import SessionFileError, open_sweep_output

    attrs = {"config": config.text, "config_path": os.path.abspath(config.path)}
    resume = True if args.resume else (False if args.overwrite else None)
    single = jax.process_count() == 1  # many processes write shards, the first one --out
    try:
        with dl.io.writing(args.out) if single else contextlib.nullcontext():
            job.program()  # compile before the progress bar starts
            output = open_sweep_output(  # before the progress bar: a refusal is one line
                job, args.out, name=args.name or config.name, resume=resume, attrs=attrs,
                command_line=" ".join(["difflab", *sys.argv[1:]]),
                keep_shards=args.keep_shards)
            _say_size(job, args.out)
            with _Meter(getattr(args, "quiet", False)) as meter:
                return dl.solvers.execute_sweep(job, output=output, progress=meter,
                                                collect=False)
    except (ValueError, SessionFileError) as error:
        raise UsageError(one_line(error)) from None
