"""Fields on grids: Cartesian grids, their boundaries, finite-difference and spectral
operators, the field model base and the built-in field models."""

from . import heat  # noqa: F401 (registers heat1d)
from .boundaries import AbstractBoundary as AbstractBoundary
from .boundaries import Dirichlet as Dirichlet
from .boundaries import Neumann as Neumann
from .boundaries import Periodic as Periodic
from .boundaries import Robin as Robin
from .burgers import Burgers as Burgers
from .diffusion import Diffusion as Diffusion
from .excitable import Barkley as Barkley
from .flows import AdvectionDiffusion as AdvectionDiffusion
from .flows import NavierStokes as NavierStokes
from .grid import Grid as Grid
from .heat import Heat1D as Heat1D
from .model import AbstractFieldModel as AbstractFieldModel
from .model import initial_fields_of as initial_fields_of
from .operators import advection as advection
from .operators import derivative as derivative
from .operators import divergence as divergence
from .operators import gradient as gradient
from .operators import laplace as laplace
from .operators import second_derivative as second_derivative
from .pattern_formation import AllenCahn as AllenCahn
from .pattern_formation import CahnHilliard as CahnHilliard
from .pattern_formation import KuramotoSivashinsky as KuramotoSivashinsky
from .pattern_formation import SwiftHohenberg as SwiftHohenberg
from .reaction_diffusion import GrayScott as GrayScott
from .spectral import dealias_mask as dealias_mask
from .spectral import derivative_multiplier as derivative_multiplier
from .spectral import dominant_wavelength as dominant_wavelength
from .spectral import fourier_shape as fourier_shape
from .spectral import from_fourier as from_fourier
from .spectral import laplace_multiplier as laplace_multiplier
from .spectral import spectral_derivative as spectral_derivative
from .spectral import spectral_laplace as spectral_laplace
from .spectral import stack_fields as stack_fields
from .spectral import to_fourier as to_fourier
from .spectral import unstack_fields as unstack_fields
from .spectral import wavenumbers as wavenumbers
from .waves import Wave as Wave
