"""Results written as they are computed: runs and fits appended, sweeps filled chunk by chunk.

Each writer creates its group with every dataset before ``start_swmr()``; after that it
only writes data and flushes, which SWMR readers see. Attributes that change at the end
(``complete``, ``result``) are set when the session writer closes.
"""

import numpy as np

from ..solvers import Result
from . import _h5, _netcdf
from ._netcdf import Empty, Variable, run_variables

NOT_RUN = -1


def _name_of(group) -> str:
    return group.name.rsplit("/", 1)[-1]


class RunWriter:
    """A run whose ``time`` dimension grows as chunks of a ``stream`` arrive."""

    def __init__(self, session, group):
        self.session, self.group, self.name = session, group, _name_of(group)

    @classmethod
    def create(cls, session, *, model, state_names=None, settings=None,
               key=None, name=None, chunk_size: int = 100, dtype=np.float64) -> "RunWriter":
        state_names = tuple(state_names or model.state_names)
        attrs = session.result_attrs(model=model, settings=settings, key=key,
                                     extra={"complete": 0})
        variables = run_variables(np.zeros(0), Empty((0, len(state_names)), dtype),
                                  state_names, model)
        group = session.write_result("runs", name, attrs, variables, unlimited=("time",),
                                     along=chunk_size, compress=False)
        return cls(session, group)

    @property
    def n_written(self) -> int:
        return self.group["time"].shape[0]

    def append(self, ts, ys) -> None:
        """Add saved times ``ts`` (n,) and states ``ys`` (n, n_states), then flush."""
        ts, ys = np.asarray(ts), np.asarray(ys)
        n, k = self.n_written, len(ts)
        if ys.shape != (k, self.group["y"].shape[1]):
            raise ValueError(f"ys must have shape {(k, self.group['y'].shape[1])}, not {ys.shape}")
        for dataset, values in ((self.group["y"], ys), (self.group["time"], ts)):
            dataset.resize(n + k, axis=0)
            dataset[n:] = values
        self.session.flush()

    def append_chunk(self, chunk) -> None:
        """Add one :class:`difflab.solvers.Chunk` of ``difflab.stream``."""
        self.append(chunk.ts, chunk.ys)

    def finish(self, *, result: int = 0, steps: int | None = None, wall_time=None) -> None:
        """Record how the run ended; the run is then ``complete``."""
        self.session.set_attrs_later(self.group.name, {
            "result": int(result), "result_message": Result(result).message,
            "steps": None if steps is None else int(steps), "wall_time": wall_time,
            "complete": 1})


class SweepWriter:
    """A sweep written one chunk of points at a time, resumable after a crash.

    Points ``c * chunk_size`` to ``(c + 1) * chunk_size - 1`` form chunk ``c``.
    ``write_chunk`` stores its results, flushes, then marks it done in ``chunk_done``.
    """

    def __init__(self, session, group):
        self.session, self.group, self.name = session, group, _name_of(group)
        self.chunk_size = int(group.attrs["chunk_size"])
        self.n_points = int(group.attrs["n_points"])
        self._y, self._result, self._steps, self._done = (
            _h5.RowWriter(group[name]) for name in ("y", "result", "steps", "chunk_done"))
        self.n_chunks = self._done.shape[0]

    @classmethod
    def create(cls, session, *, model, parameter_names, values, time,
               chunk_size: int, state_names=None, settings=None, key=None,
               key_scheme: str | None = None, y0=None, name=None, dtype=np.float64,
               compress: bool | None = None) -> "SweepWriter":
        """Create the sweep's group, every dataset full size; ``values`` is (n_points, P)."""
        values = np.asarray(values, dtype=np.float64)
        names = [str(p) for p in parameter_names]
        if values.ndim != 2 or values.shape[1] != len(names) or values.shape[0] < 1:
            raise ValueError(f"values must have shape (n_points, {len(names)}), not {values.shape}")
        if int(chunk_size) < 1:
            raise ValueError(f"chunk_size must be at least 1, got {chunk_size}")
        state_names = tuple(state_names or model.state_names)
        n, cs = values.shape[0], min(int(chunk_size), values.shape[0])
        n_chunks = -(-n // cs)
        attrs = session.result_attrs(model=model, settings=settings, key=key, extra={
            "n_points": n, "chunk_size": cs, "key_scheme": key_scheme, "complete": 0})
        variables = _sweep_variables(model, names, values, np.asarray(time), state_names,
                                     n_chunks, dtype, y0)
        group = session.write_result(
            "sweeps", name, attrs, variables, along=cs, compress=compress,
            fillvalues={"y": np.nan, "result": NOT_RUN, "steps": NOT_RUN, "chunk_done": 0})
        return cls(session, group)

    @classmethod
    def reopen(cls, session, name: str) -> "SweepWriter":
        """The writer of an existing sweep, to write its pending chunks."""
        if name not in session.file["sweeps"]:
            raise KeyError(f"no sweep {name!r} in {session.file.filename}")
        return cls(session, session.file["sweeps"][name])

    def points(self, chunk: int) -> slice:
        """The points of ``chunk``."""
        if not 0 <= chunk < self.n_chunks:
            raise IndexError(f"chunk {chunk} out of range (the sweep has {self.n_chunks})")
        return slice(chunk * self.chunk_size, min((chunk + 1) * self.chunk_size, self.n_points))

    def pending_chunks(self) -> list[int]:
        """The chunks not yet written, in order."""
        return [int(c) for c in np.flatnonzero(self._done.dataset[:] == 0)]

    @property
    def complete(self) -> bool:
        return not self.pending_chunks()

    def parameter_values(self, chunk: int) -> np.ndarray:
        """The (points, P) parameter values of ``chunk``, as stored at creation."""
        return self.group["parameters"][self.points(chunk)]

    def write_chunk(self, chunk: int, *, ys, result, steps=None) -> None:
        """Store the results of ``chunk``: ``ys`` (points, n_time, n_states), ``result`` (points,)."""
        sl = self.points(chunk)
        count = sl.stop - sl.start
        shape, ys = (count, *self._y.shape[1:]), np.asarray(ys)
        if ys.shape != shape:
            raise ValueError(f"chunk {chunk}: ys must have shape {shape}, not {ys.shape}")
        self._y.write(sl.start, ys.astype(self._y.dtype, copy=False))
        self._result.write(sl.start, np.broadcast_to(np.asarray(result, np.int8), (count,)))
        if steps is not None:
            self._steps.write(sl.start, np.broadcast_to(np.asarray(steps, np.int64), (count,)))
        self.session.flush()  # the results are in the file before the chunk is marked done
        self._done.write(chunk, np.ones(1, dtype=np.int8))
        self.session.flush()

    def finish(self) -> None:
        """Mark the sweep ``complete`` if every chunk is written (when the writer closes)."""
        self.session.set_attrs_later(self.group.name, {"complete": int(self.complete)})


def _sweep_variables(model, names, values, time, state_names, n_chunks, dtype, y0):
    n, n_time, n_states = values.shape[0], len(time), len(state_names)
    specs = type(model).parameter_specs() if hasattr(type(model), "parameter_specs") else {}
    variables = run_variables(time, Empty((n, n_time, n_states), dtype), state_names, model)
    variables["y"].dims = ("point", "time", "state")
    variables.update({
        "point": Variable(("point",), np.arange(n, dtype=np.int64), {"long_name": "sweep point"}),
        "parameter": Variable(("parameter",), names, {"long_name": "swept parameter"}),
        "chunk": Variable(("chunk",), np.arange(n_chunks, dtype=np.int64),
                          {"long_name": "chunk of points"}),
        "parameters": Variable(("point", "parameter"), values, _parameter_attrs(specs, names)),
        "result": Variable(("point",), Empty((n,), np.int8), dict(_netcdf.RESULT_FLAGS)),
        "steps": Variable(("point",), Empty((n,), np.int64), {"long_name": "steps taken"}),
        "chunk_done": Variable(("chunk",), Empty((n_chunks,), np.int8), {
            "long_name": "chunk written", "flag_values": np.array([0, 1], dtype=np.int8),
            "flag_meanings": "pending done"}),
    })
    if y0 is not None:
        variables["y0"] = Variable(("point", "state"), np.asarray(y0, dtype=np.float64),
                                   {"long_name": "initial state"})
    return variables


def _parameter_attrs(specs, names) -> dict:
    """Each swept parameter's declared unit ("" where none is declared: never a guess)."""
    units = [getattr(specs.get(p), "unit", "") for p in names]
    attrs = {"long_name": "parameter value", "parameter_units": units}
    if len(set(units)) == 1 and units[0]:
        attrs["units"] = units[0]
    elif not all(units):
        attrs["comment"] = "units not declared by the model for some parameters"
    return attrs


class FitWriter:
    """An optimisation whose ``step`` dimension grows as chunks of optimizer steps arrive."""

    def __init__(self, session, group):
        self.session, self.group, self.name = session, group, _name_of(group)

    @classmethod
    def create(cls, session, *, model, parameter_names, settings=None,
               key=None, name=None, data=None, optimizer=None, loss_name=None,
               learning_rate=None, max_steps=None, n_starts=None) -> "FitWriter":
        """``data``: ``dict(time=(T,), y=(T, S), state_names=[...], sigma=optional)``;
        ``max_steps``: the optimizer's limit (``fit_max_steps``; the solver's ``max_steps``
        is among the ``settings``); ``n_starts``: room for each start's latest loss and
        parameters (:meth:`record_starts`)."""
        names = [str(p) for p in parameter_names]
        attrs = session.result_attrs(model=model, settings=settings, key=key, extra={
            "optimizer": optimizer, "loss_name": loss_name, "learning_rate": learning_rate,
            "fit_max_steps": max_steps, "complete": 0})
        variables = {
            "step": Variable(("step",), np.zeros(0, np.int64), {"long_name": "optimizer step"}),
            "parameter": Variable(("parameter",), names, {"long_name": "fitted parameter"}),
            "loss": Variable(("step",), Empty((0,), np.float64), _loss_attrs(loss_name)),
            "parameters": Variable(("step", "parameter"), Empty((0, len(names)), np.float64),
                                   _parameter_attrs(_specs(model), names)),
        }
        if n_starts is not None:
            variables.update(_start_variables(int(n_starts), len(names)))
        subgroups = {"data": _data_variables(data, model)} if data is not None else None
        group = session.write_result("fits", name, attrs, variables, subgroups=subgroups,
                                     unlimited=("step",), along=256, compress=False)
        return cls(session, group)

    @property
    def n_steps(self) -> int:
        return self.group["step"].shape[0]

    def append(self, loss, parameters) -> None:
        """Add ``loss`` (k,) and ``parameters`` (k, P) of the next k steps, then flush."""
        loss = np.atleast_1d(np.asarray(loss, dtype=np.float64))
        params = np.asarray(parameters, dtype=np.float64).reshape(len(loss), -1)
        n, k = self.n_steps, len(loss)
        if params.shape[1] != self.group["parameters"].shape[1]:
            raise ValueError(f"parameters must have {self.group['parameters'].shape[1]} "
                             f"columns, not {params.shape[1]}")
        for dataset, values in ((self.group["loss"], loss), (self.group["parameters"], params),
                                (self.group["step"], np.arange(n, n + k))):
            dataset.resize(n + k, axis=0)
            dataset[n:] = values
        self.session.flush()

    def record_starts(self, losses, parameters, done) -> None:
        """Each start's latest loss, parameters and whether it has finished, then flush."""
        self.group["start_loss"][:] = np.asarray(losses, np.float64)
        self.group["start_parameters"][:] = np.asarray(parameters, np.float64)
        self.group["start_done"][:] = np.asarray(done, np.int8)
        self.session.flush()

    def finish(self, *, fitted_model=None, result: int = 0, message: str | None = None,
               **info) -> None:
        """Record the fitted model and how the fit ended; the fit is then ``complete``."""

        def record(session, group):
            attrs = {"result": int(result), "result_message": message,
                     "n_steps": int(group["step"].shape[0]), "complete": 1, **info}
            if fitted_model is not None:
                attrs["fitted_model"] = session.add_model(fitted_model)
            return attrs

        self.session.later(self.group.name, record)

    def finish_with(self, result) -> None:
        """Record a finished :class:`difflab.FitResult`: best values, errors, chi^2."""
        self.finish(fitted_model=result.model, result=int(result.result),
                    message=result.message, **fit_info(result))


def fit_info(result) -> dict:
    """The end-of-fit attributes: best values, standard errors, correlation, chi^2."""
    return {"best_parameters": np.array([result.params[n] for n in result.names]),
            "stderr": np.array([result.stderr[n] for n in result.names]),
            "correlation": np.asarray(result.correlation, dtype=np.float64).reshape(-1),
            "chi2": float(result.chi2), "dof": int(result.dof),
            "absolute_sigma": int(result.absolute_sigma), "method": result.method,
            "n_starts": int(len(result.start_losses)), "wall_time": result.wall_time,
            **({"null_directions": np.asarray(result.null_directions, np.float64).reshape(-1)}
               if getattr(result, "null_directions", None) is not None
               and len(result.null_directions) else {})}


def _specs(model) -> dict:
    return type(model).parameter_specs() if hasattr(type(model), "parameter_specs") else {}


def _loss_attrs(loss_name) -> dict:
    """A chi-square of residuals scaled by their noise is a pure number; another loss's
    units are not known here."""
    unit = "1" if loss_name == "0.5 * chi^2" else None
    return {"long_name": "loss", **({"units": unit} if unit else {"comment": _netcdf.UNDECLARED})}


def _start_variables(n: int, p: int) -> dict[str, Variable]:
    return {
        "start": Variable(("start",), np.arange(n, dtype=np.int64), {"long_name": "start"}),
        "start_loss": Variable(("start",), np.full(n, np.nan), {"long_name": "latest loss"}),
        "start_parameters": Variable(("start", "parameter"), np.full((n, p), np.nan),
                                     {"long_name": "latest parameter values"}),
        "start_done": Variable(("start",), np.zeros(n, np.int8),
                               {"long_name": "start finished", "flag_values": np.array(
                                   [0, 1], np.int8), "flag_meanings": "running finished"}),
    }


def _data_variables(data, model) -> dict[str, Variable]:
    variables = run_variables(np.asarray(data["time"]), np.asarray(data["y"], dtype=np.float64),
                              data.get("state_names") or model.state_names, model)
    if data.get("sigma") is not None:
        variables["sigma"] = Variable(("time", "state"), np.asarray(data["sigma"], np.float64),
                                      {"long_name": "standard deviation of the data"})
    return variables
