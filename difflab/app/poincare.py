"""Poincaré sections in the app: what the Poincaré view asks :func:`difflab.poincare`
for, and what it draws of the answer (the section's points, a return map, the times
between crossings)."""

import dataclasses

import numpy as np

import difflab as dl

DIRECTIONS = {"upward": 1, "downward": -1, "both ways": 0}


@dataclasses.dataclass(frozen=True)
class SectionRequest:
    """The plane ``state = value`` of ``model``, crossed in ``direction`` (+1, -1, 0),
    watched for ``t1`` time units after a ``transient``, from ``y0`` (the model's own
    initial state when ``None``)."""

    model: dl.Model
    model_name: str
    state: str
    value: float = 0.0
    direction: int = 1
    t1: float = 100.0
    transient: float = 0.0
    y0: tuple | None = None

    def __post_init__(self):
        if self.state not in self.model.state_names:
            raise ValueError(f"no state {self.state!r}; the states are "
                             f"{', '.join(self.model.state_names)}")
        if not (np.isfinite(self.t1) and self.t1 > 0):
            raise ValueError(f"the time watched must be a positive number, not {self.t1:g}")

    def describe(self) -> str:
        """``lorenz: z = 27, upward, t in [50, 250]``."""
        way = next(k for k, v in DIRECTIONS.items() if v == self.direction)
        return (f"{self.model_name}: {self.state} = {self.value:g}, {way}, "
                f"t in [{self.transient:g}, {self.transient + self.t1:g}]")


def compute_section(request: SectionRequest) -> dl.Poincare:
    """The crossings :func:`difflab.poincare` finds for ``request``."""
    y0 = None if request.y0 is None else np.asarray(request.y0, dtype=float)
    return dl.poincare(request.model, request.state, request.t1, transient=request.transient,
                       value=request.value, direction=request.direction, y0=y0)


def return_map(section: dl.Poincare, state: str) -> tuple[np.ndarray, np.ndarray]:
    """``(s_k, s_k+1)``: each crossing's value of ``state`` against the next one's."""
    values = np.asarray(section[state], dtype=float)
    return values[:-1], values[1:]


def summary(section: dl.Poincare) -> str:
    """The crossings in words: how many, how many kept, the mean return time."""
    kept = len(section.ts)
    text = f"{section.found} crossings of {section.section}"
    if kept < section.found:
        text += f" ({kept} kept: raise the limit to see them all)"
    if kept > 1:
        times = section.return_times
        text += f"; return time {np.mean(times):.6g} (from {np.min(times):.4g} to {np.max(times):.4g})"
    elif kept == 0:
        text += ": try another value, the other direction or a longer time"
    return text
