"""A chunk of a streamed run: what ``stream`` hands to the host as each part ends."""

import dataclasses

import numpy as np

from ._result import Result
from ._settings import SolveSettings


@dataclasses.dataclass(frozen=True)
class Chunk:
    """Saved points ``start .. start + len(ts) - 1`` of a streamed run, on the host.

    ``settings`` are those of the whole run (what ``simulate`` would record; a field
    run's as ``(name, value)`` pairs).
    """

    ts: np.ndarray
    ys: np.ndarray  # a field model's: {field: (len(ts), *grid.shape)}
    start: int
    total: int
    result: Result
    settings: SolveSettings | None = None

    @property
    def progress(self) -> float:
        """The fraction of the run done once this chunk is in."""
        return (self.start + len(self.ts)) / self.total
