"""``difflab fit CONFIG.toml --out fit.h5``: fit a model to observations from a TOML file.

The format is documented in ``docs/fitting.md`` (example:
``examples/fit_lotka_volterra/fit.toml``). A bad file gives one line naming the key at
fault and exit status 2; a fit that does not converge exits with status 1. The loss goes
to stderr chunk by chunk and to the output file as it comes (SWMR: the app can follow
it); the fitted values, standard errors and correlations to stdout (``--json``: as JSON).
"""

import dataclasses
import json
import os
from pathlib import Path

import numpy as np

from .config_file import (
    SOLVE,
    ConfigError,
    initial_state,
    keyed,
    naming,
    number,
    parse,
    read,
    solve_table,
    table,
)
from .errors import EXIT_FAILED, UsageError

TOP = {"model", "data", "params", "name", "parameters", "solve", "fit", "bounds",
       "solver"}  # [solver]: older files' name, read as [solve]
FIT = {"method", "sigma", "starts", "seed", "fit_max_steps", "fit_rtol", "fit_atol",
       "learning_rate", "chunk_size", "log_scale"}
_RENAMED = {"max_steps": "fit_max_steps", "rtol": "fit_rtol", "atol": "fit_atol"}
FIT_SOLVE = tuple(k for k in SOLVE if k != "key")  # fitted models are deterministic


@dataclasses.dataclass
class FitConfig:
    """A fit file, read and checked."""

    path: str
    model_ref: str
    data: str
    params: list[str] | None
    name: str | None
    parameters: dict
    solve: dict
    fit: dict
    bounds: dict


def load_config(path) -> FitConfig:
    """Read a fit file and check its structure (values are checked when the fit starts)."""
    with naming(path):
        return _load_config(path)


def _load_config(path) -> FitConfig:
    data = parse(read(path), path)
    unknown = [k for k in data if k not in TOP]
    if unknown:
        raise ConfigError(f"unknown key {unknown[0]} (allowed: {', '.join(sorted(TOP))})")
    for key in ("model", "data"):
        if not isinstance(data.get(key), str):
            raise ConfigError(f"{key} must be given as a string")
    params = data.get("params")
    if params is not None and (not isinstance(params, list) or not params
                               or not all(isinstance(p, str) for p in params)):
        raise ConfigError("params must be a non-empty list of parameter names")
    if not isinstance(data.get("name", ""), str):
        raise ConfigError("name must be a string")
    config = FitConfig(str(path), data["model"], data["data"], params, data.get("name"),
                       table(data, "parameters"), solve_table(data, FIT_SOLVE),
                       _fit_table(data), table(data, "bounds"))
    _check_values(config)
    return config


def _fit_table(data) -> dict:
    renamed = [k for k in table(data, "fit") if k in _RENAMED]
    if renamed:
        old = renamed[0]
        raise ConfigError(f"fit.{old} is now fit.{_RENAMED[old]} (the optimizer's; the "
                          f"simulation's is solve.{old})")
    return table(data, "fit", FIT)


def _check_values(config: FitConfig) -> None:
    for name, value in config.parameters.items():
        number(value, f"parameters.{name}")
    for key in ("starts", "fit_max_steps", "chunk_size"):
        if key in config.fit:
            number(config.fit[key], f"fit.{key}", integer=True, positive=True)
    if "seed" in config.fit:
        number(config.fit["seed"], "fit.seed", integer=True)
    for key in ("fit_rtol", "fit_atol", "learning_rate"):
        if key in config.fit:
            number(config.fit[key], f"fit.{key}", positive=True)
    sigma = config.fit.get("sigma")
    if isinstance(sigma, dict):
        for state, value in sigma.items():
            number(value, f"fit.sigma.{state}", positive=True)
    elif sigma is not None:
        number(sigma, "fit.sigma", positive=True)
    for name, pair in config.bounds.items():
        if not (isinstance(pair, list) and len(pair) == 2):
            raise ConfigError(f"bounds.{name} must be [lower, upper]")
        for value in pair:
            number(value, f"bounds.{name}")
        if not pair[0] < pair[1]:
            raise ConfigError(f"bounds.{name} must be [lower, upper] with lower < upper, "
                              f"not {pair}")


def build(config: FitConfig):
    """The starting model, the observations and the keyword arguments of ``difflab.fit``."""
    import difflab as dl

    base = Path(config.path).parent
    cls = keyed("model", dl.models.resolve, config.model_ref, base_dir=base)
    model = keyed("model", cls)
    for name, value in config.parameters.items():
        model = keyed(f"parameters.{name}", model.replace, **{name: value})
    data_path = Path(config.data) if os.path.isabs(config.data) else base / config.data
    data = keyed("data", dl.io.read_observations, data_path)
    solve = {**config.solve, "y0": initial_state(model, config.solve.get("y0"))}
    kwargs = {"method": "lm", **solve, **config.fit,
              "bounds": {k: tuple(v) for k, v in config.bounds.items()} or None}
    return model, data, kwargs


class _Progress:
    """Lines on stderr: one before the first chunk (which compiles), then one per chunk
    with the step, the lowest loss and, with several starts, how many have finished."""

    def __init__(self, quiet: bool):
        from rich.console import Console

        self.console = None if quiet else Console(stderr=True, highlight=False)

    def starting(self, kwargs) -> None:
        starts = kwargs.get("starts", 1)
        n = len(next(iter(starts.values()))) if isinstance(starts, dict) else int(starts)
        if self.console is not None:
            self.console.print(f"compiling the fit ({n} start{'s' if n != 1 else ''}); "
                               "progress follows after each chunk of steps")

    def __call__(self, progress) -> None:
        if self.console is None or progress.done:
            return
        text = f"step {progress.step:>5}  loss {progress.loss:.8g}"
        done = progress.start_done
        if done is not None and len(done) > 1:
            text += f"  ({int(done.sum())} of {len(done)} starts finished)"
        self.console.print(text)


def fit(args) -> int:
    """``difflab fit CONFIG --out FILE``: run the fit a TOML file describes."""
    out = Path(args.out)
    if out.suffix not in (".h5", ".hdf5"):
        raise UsageError(f"--out must end in .h5 or .hdf5, not {out.name!r}")
    config = load_config(args.config)
    with naming(config.path):
        model, data, kwargs = build(config)
    if args.devices is not None:
        kwargs["devices"] = args.devices
    name = args.name or config.name
    with naming(config.path):
        result = _run(model, data, config.params, kwargs, out, name, _Progress(args.quiet))
    _report(result, args.json)
    return 0 if result.ok else EXIT_FAILED


def _run(model, data, params, kwargs, out, name, progress):
    import difflab as dl

    try:
        with dl.io.writing(out):
            try:
                stream = dl.solvers.fit_stream(model, data, params, **kwargs)
                progress.starting(kwargs)
                first = next(stream)
            except (ValueError, TypeError) as error:  # a value of the config file
                raise ConfigError(str(error).splitlines()[0]) from None
            with dl.io.stream_session(out) as session:
                try:
                    writer = _writer(session, model, data, first, kwargs, name)
                except ValueError as error:  # a name the file cannot hold
                    raise UsageError(str(error).splitlines()[0]) from None
                session.start_swmr()
                result = _drain(stream, first, writer, progress)
                writer.finish_with(result)
            dl.io.save_run(out, result.trajectory(), fit=writer.name)  # the run the fit kept
    except dl.io.SessionFileError as error:
        raise UsageError(str(error)) from None
    except OSError as error:
        raise UsageError(f"cannot write {out}: {error.strerror or error}") from None
    return result


def _drain(stream, first, writer, progress):
    """Write each chunk as it comes: the loss history, and each start's latest point (so
    a killed fit leaves every start's progress up to its last chunk in the file)."""
    item = first
    while True:
        progress(item)
        if len(item.losses):
            writer.append(item.losses, item.parameters)
        writer.record_starts(item.start_losses, item.start_params, item.start_done)
        if item.done:
            return item.result
        item = next(stream)


def _writer(session, model, data, first, kwargs, name):
    settings = {k: kwargs[k] for k in ("t0", "t1", "dt", "solver", "n_save", "rtol", "atol",
                                       "y0") if kwargs.get(k) is not None}
    if name is not None and name in session.file["fits"]:
        raise UsageError(f"--out already holds a fit named {name!r}; choose another --name")
    return session.new_fit(
        model=model, parameter_names=first.names, settings=settings, name=name,
        data={"time": data.t, "y": data.y, "state_names": list(data.states), "sigma": data.sigma},
        optimizer=str(kwargs.get("method", "lm")), loss_name="0.5 * chi^2",
        max_steps=kwargs.get("fit_max_steps"), learning_rate=kwargs.get("learning_rate"),
        n_starts=len(first.start_losses))


def _report(result, as_json: bool) -> None:
    if as_json:
        print(json.dumps({
            "result": int(result.result), "message": result.message, "steps": result.n_steps,
            "notes": list(result.notes),
            "params": result.params, "stderr": result.stderr, "chi2": result.chi2,
            "dof": result.dof, "names": list(result.names),
            "correlation": np.asarray(result.correlation).tolist(),
        }, sort_keys=True))
        return
    from rich.console import Console
    from rich.table import Table

    console = Console(highlight=False)
    console.print(f"{result.method}: {result.ended} after {result.n_steps} steps; "
                  f"chi^2 = {result.chi2:.6g}, {result.dof} degrees of freedom")
    for note in result.notes:
        console.print(f"but: {note}")
    table = Table()
    for column in ("parameter", "value", "std. error", *result.names):
        table.add_column(column)
    for i, n in enumerate(result.names):
        row = [f"{result.correlation[i, j]:+.3f}" for j in range(len(result.names))]
        table.add_row(n, f"{result.params[n]:.6g}", f"{result.stderr[n]:.3g}", *row)
    console.print(table)
