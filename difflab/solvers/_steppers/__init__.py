"""How one trajectory is advanced: fixed-step steppers, diffrax's adaptive solvers, the
integration loop, and how it is differentiated (adjoints)."""

from .adjoint import AbstractAdjoint as AbstractAdjoint
from .adjoint import AutoAdjoint as AutoAdjoint
from .adjoint import CheckpointedAdjoint as CheckpointedAdjoint
from .adjoint import ForwardSensitivity as ForwardSensitivity
from .catalog import available_solvers as available_solvers
from .catalog import default_solver as default_solver
from .catalog import resolve_solver as resolve_solver
from .catalog import solver_name as solver_name
from .catalog import solvers_for as solvers_for
from .etdrk import ETDRK2 as ETDRK2
from .etdrk import ETDRK4 as ETDRK4
from .etdrk import AbstractETDRK as AbstractETDRK
from .etdrk import ETD_SOLVERS as ETD_SOLVERS
from .fixed import RK4 as RK4
from .fixed import AbstractStepper as AbstractStepper
from .fixed import Euler as Euler
from .fixed import EulerMaruyama as EulerMaruyama
from .fixed import Heun as Heun
from .fixed import Leapfrog as Leapfrog
