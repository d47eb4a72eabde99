"""``SolveSettings``: everything ``simulate`` was told, as plain values, to save and rerun a run."""

import dataclasses

import jax
import numpy as np


@dataclasses.dataclass(frozen=True)
class SolveSettings:
    """How a run was solved: the solver's name and every argument that made the run.

    ``dt`` is the step actually used (the default one included); ``y0`` the initial
    state; ``key`` the PRNG key as ``(impl, data)`` (``None`` for deterministic models).
    ``simulate(model, **settings.kwargs())`` runs it again, bit for bit.
    """

    solver: str
    t0: float
    t1: float
    dt: float | None
    n_save: int
    rtol: float
    atol: float
    max_steps: int
    y0: tuple[float, ...]
    key: tuple | None = None
    precision: str = "float64"

    def kwargs(self) -> dict:
        """``simulate``'s keyword arguments (``t1`` included)."""
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        values.pop("precision")
        values["y0"] = np.asarray(self.y0, dtype=self.precision)
        values["key"] = None if self.key is None else key_from_record(*self.key)
        return values

    def as_dict(self) -> dict:
        """The settings as plain values (``y0`` a list, ``key`` its impl and data)."""
        values = dataclasses.asdict(self)
        values["y0"] = list(self.y0)
        return values


def key_to_record(key) -> tuple | None:
    """A ``jax.random`` key as ``(impl, data)`` of plain ints (typed or raw ``uint32`` keys)."""
    if key is None:
        return None
    if jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key):
        impl, data = str(jax.random.key_impl(key)), jax.random.key_data(key)
    else:
        impl, data = "raw_uint32", key
    return impl, tuple(int(v) for v in np.asarray(data, dtype=np.uint32).reshape(-1))


def key_from_record(impl: str, data):
    """The key :func:`key_to_record` described."""
    data = np.asarray(data, dtype=np.uint32)
    if impl == "raw_uint32":
        return jax.numpy.asarray(data)
    return jax.random.wrap_key_data(data, impl=impl)
