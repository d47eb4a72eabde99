"""How models are advanced: fixed-step steppers, diffrax solvers, simulate and stream."""

from ._catalog import available_solvers as available_solvers
from ._result import Result as Result
from ._simulate import SimulationError as SimulationError
from ._simulate import simulate as simulate
from ._steppers import RK4 as RK4
from ._steppers import AbstractStepper as AbstractStepper
from ._steppers import Euler as Euler
from ._steppers import EulerMaruyama as EulerMaruyama
from ._steppers import Heun as Heun
from ._steppers import Leapfrog as Leapfrog
from ._stream import Chunk as Chunk
from ._stream import stream as stream
from ._trajectory import Trajectory as Trajectory


def __getattr__(name):
    if name == "Adaptive":  # imported on use: it brings in diffrax
        from ._adaptive import Adaptive

        return Adaptive
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
