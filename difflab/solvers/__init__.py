"""How models are advanced: fixed-step steppers, diffrax solvers, simulate and stream."""

from ._catalog import available_solvers as available_solvers
from ._catalog import default_solver as default_solver
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
from ._simulate import Trajectory as Trajectory
from ._settings import SolveSettings as SolveSettings
from ._spaces import Space as Space
from ._spaces import grid as grid
from ._spaces import latin_hypercube as latin_hypercube
from ._spaces import sobol as sobol
from ._spaces import uniform as uniform
from ._sweep import SweepResult as SweepResult
from ._sweep import sweep as sweep
from ._sweep_job import SweepChunk as SweepChunk
from ._sharding import use_all_cpu_cores as use_all_cpu_cores
from ._adjoint import AutoAdjoint as AutoAdjoint
from ._adjoint import CheckpointedAdjoint as CheckpointedAdjoint
from ._adjoint import ForwardSensitivity as ForwardSensitivity
from ._observations import Observations as Observations
from ._observations import as_observations as as_observations
from ._fit import FitError as FitError
from ._fit import FitProgress as FitProgress
from ._fit import FitResult as FitResult
from ._fit import fit as fit
from ._fit import fit_stream as fit_stream
from ._sensitivity import Sensitivity as Sensitivity
from ._sensitivity import sensitivity as sensitivity


def __getattr__(name):
    if name == "Adaptive":  # imported on use: it brings in diffrax
        from ._adaptive import Adaptive

        return Adaptive
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
