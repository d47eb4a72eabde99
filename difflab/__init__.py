"""DiffLab: a lab for differentiable physics.

Define a model as an Equinox module (or pick one with ``difflab.models.get``), then
``simulate``, ``stream``, sweep and fit it with JAX.
"""

from . import _config
from . import io as io
from . import models as models
from . import solvers as solvers
from ._config import precision as precision
from ._config import set_precision as set_precision
from ._version import __version__ as __version__
from .io import open_session as open  # noqa: A004  (difflab.open, not builtins.open)
from .models import HamiltonianModel as HamiltonianModel
from .models import Model as Model
from .models import SDEModel as SDEModel
from .models import param as param
from .solvers import Continuation as Continuation
from .solvers import Equilibria as Equilibria
from .solvers import FitResult as FitResult
from .solvers import LyapunovSpectrum as LyapunovSpectrum
from .solvers import Result as Result
from .solvers import Sensitivity as Sensitivity
from .solvers import SimulationError as SimulationError
from .solvers import Space as Space
from .solvers import SweepResult as SweepResult
from .solvers import Trajectory as Trajectory
from .solvers import continuation as continuation
from .solvers import equilibria as equilibria
from .solvers import fit as fit
from .solvers import grid as grid
from .solvers import latin_hypercube as latin_hypercube
from .solvers import lyapunov as lyapunov
from .solvers import sensitivity as sensitivity
from .solvers import simulate as simulate
from .solvers import sobol as sobol
from .solvers import stream as stream
from .solvers import sweep as sweep
from .solvers import uniform as uniform

del _config
