"""How models are advanced: steppers and diffrax solvers, simulate and stream, sweeps over
parameter spaces on every device, fits and sensitivities.

The families live in private subpackages (``_steppers``, ``_sweeps``, ``_fits``); this
module is their public face.
"""

from .._compilation_cache import compilation_cache_dir as compilation_cache_dir
from ._accelerators import describe_devices as describe_devices
from ._accelerators import pallas_supported as pallas_supported
from ._accelerators import solve_block_pallas as solve_block_pallas
from ._analysis import BifurcationCurve as BifurcationCurve
from ._analysis import CodimTwoPoint as CodimTwoPoint
from ._analysis import Continuation as Continuation
from ._analysis import CycleCurve as CycleCurve
from ._analysis import CycleSpecialPoint as CycleSpecialPoint
from ._analysis import Equilibria as Equilibria
from ._analysis import LyapunovSpectrum as LyapunovSpectrum
from ._analysis import PeriodicOrbits as PeriodicOrbits
from ._analysis import Poincare as Poincare
from ._analysis import SpecialPoint as SpecialPoint
from ._analysis import continuation as continuation
from ._analysis import equilibria as equilibria
from ._analysis import first_lyapunov_coefficient as first_lyapunov_coefficient
from ._analysis import homoclinic as homoclinic
from ._analysis import locate as locate
from ._analysis import lyapunov as lyapunov
from ._analysis import periodic_orbits as periodic_orbits
from ._analysis import poincare as poincare
from ._auto_step import AutoStep as AutoStep
from ._auto_step import auto_step as auto_step
from ._events import Event as Event
from ._events import Events as Events
from ._field_events import FieldEvents as FieldEvents
from ._field_runs import FieldTrajectory as FieldTrajectory
from ._field_runs import simulate_fields as simulate_fields
from ._field_sweeps import FieldSweepChunk as FieldSweepChunk
from ._field_sweeps import FieldSweepInterrupted as FieldSweepInterrupted
from ._field_sweeps import FieldSweepResult as FieldSweepResult
from ._fits import FitError as FitError
from ._fits import FitProgress as FitProgress
from ._fits import FitResult as FitResult
from ._fits import FitStatistics as FitStatistics
from ._fits import Observations as Observations
from ._fits import as_observations as as_observations
from ._fits import fit as fit
from ._fits import fit_statistics as fit_statistics
from ._fits import fit_stream as fit_stream
from ._resources import check_memory as check_memory
from ._result import Result as Result
from ._sensitivity import Sensitivity as Sensitivity
from ._sensitivity import sensitivity as sensitivity
from ._settings import SolveSettings as SolveSettings
from ._settings import key_from_record as key_from_record
from ._settings import key_to_record as key_to_record
from ._sharding import initialize_distributed as initialize_distributed
from ._sharding import use_all_cpu_cores as use_all_cpu_cores
from ._simulate import SimulationError as SimulationError
from ._simulate import Trajectory as Trajectory
from ._simulate import simulate as simulate
from ._steppers import ETDRK2 as ETDRK2
from ._steppers import ETDRK4 as ETDRK4
from ._steppers import RK4 as RK4
from ._steppers import AbstractETDRK as AbstractETDRK
from ._steppers import AbstractStepper as AbstractStepper
from ._steppers import AutoAdjoint as AutoAdjoint
from ._steppers import CheckpointedAdjoint as CheckpointedAdjoint
from ._steppers import Euler as Euler
from ._steppers import EulerMaruyama as EulerMaruyama
from ._steppers import ForwardSensitivity as ForwardSensitivity
from ._steppers import Heun as Heun
from ._steppers import Leapfrog as Leapfrog
from ._steppers import available_solvers as available_solvers
from ._steppers import default_solver as default_solver
from ._steppers import resolve_solver as resolve_solver
from ._steppers import solvers_for as solvers_for
from ._chunk import Chunk as Chunk
from ._stream import stream as stream
from ._sweeps import Space as Space
from ._sweeps import SweepChunk as SweepChunk
from ._sweeps import SweepJob as SweepJob
from ._sweeps import SweepResult as SweepResult
from ._sweeps import as_space as as_space
from ._sweeps import describe_observable as describe_observable
from ._sweeps import execute_sweep as execute_sweep
from ._sweeps import grid as grid
from ._sweeps import largest_lyapunov as largest_lyapunov
from ._sweeps import latin_hypercube as latin_hypercube
from ._sweeps import parse_size as parse_size
from ._sweeps import resolve_observables as resolve_observables
from ._sweeps import set_sweep_output as set_sweep_output
from ._datasets import set_dataset_maker as set_dataset_maker
from ._sweeps import sobol as sobol
from ._sweeps import sweep as sweep
from ._sweeps import uniform as uniform


def __getattr__(name):
    if name == "Adaptive":  # imported on use: it brings in diffrax
        from ._steppers.adaptive import Adaptive

        return Adaptive
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
