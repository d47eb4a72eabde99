"""One model at many points: parameter spaces, the sweep job and its compiled kernel,
observables reduced on the device, and the results (in memory or through an output)."""

from .chaos import largest_lyapunov as largest_lyapunov
from .job import SweepChunk as SweepChunk
from .job import SweepJob as SweepJob
from .job import parse_size as parse_size
from .observables import describe_observable as describe_observable
from .observables import resolve_observables as resolve_observables
from .spaces import Space as Space
from .spaces import as_space as as_space
from .spaces import grid as grid
from .spaces import latin_hypercube as latin_hypercube
from .spaces import sobol as sobol
from .spaces import uniform as uniform
from .sweep import SweepResult as SweepResult
from .sweep import execute_sweep as execute_sweep
from .sweep import set_sweep_output as set_sweep_output
from .sweep import sweep as sweep
