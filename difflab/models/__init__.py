"""What is simulated: the Model base classes, the built-in library and its registry."""

from .. import _config
from . import _biology, _chaos, _fields, _mechanics, _neural, _stochastic  # noqa: F401 (registers)
from ._base import HamiltonianModel as HamiltonianModel
from ._base import Model as Model
from ._base import ParamSpec as ParamSpec
from ._base import SDEModel as SDEModel
from ._base import param as param
from ._bounded import FileReadError as FileReadError
from ._bounded import read_bounded as read_bounded
from ._bounded import read_bounded_text as read_bounded_text
from ._fields import AbstractFieldModel as AbstractFieldModel
from ._fields import AllenCahn as AllenCahn
from ._fields import Diffusion as Diffusion
from ._fields import Dirichlet as Dirichlet
from ._fields import GrayScott as GrayScott
from ._fields import Grid as Grid
from ._fields import KuramotoSivashinsky as KuramotoSivashinsky
from ._fields import Neumann as Neumann
from ._fields import Periodic as Periodic
from ._fields import Robin as Robin
from ._fields import Wave as Wave
from ._fields import advection as advection
from ._fields import derivative as derivative
from ._fields import divergence as divergence
from ._fields import dominant_wavelength as dominant_wavelength
from ._fields import fourier_shape as fourier_shape
from ._fields import from_fourier as from_fourier
from ._fields import gradient as gradient
from ._fields import initial_fields_of as initial_fields_of
from ._fields import laplace as laplace
from ._fields import laplace_multiplier as laplace_multiplier
from ._fields import spectral_derivative as spectral_derivative
from ._fields import stack_fields as stack_fields
from ._fields import to_fourier as to_fourier
from ._fields import unstack_fields as unstack_fields
from ._fields import wavenumbers as wavenumbers
from ._equations import EquationError as EquationError
from ._equations import Problem as Problem
from ._equations import check_equations as check_equations
from ._equations import compile_formula as compile_formula
from ._equations import from_equations as from_equations
from ._plugins import PluginError as PluginError
from ._plugins import refresh as refresh_plugins  # noqa: F401 (public)
from ._registry import available as available
from ._registry import field_models as field_models
from ._registry import get as get
from ._registry import register as register
from ._sources import ModelSource as ModelSource
from ._sources import UntrustedModelError as UntrustedModelError
from ._sources import carry_parameters as carry_parameters
from ._sources import from_source as from_source
from ._sources import source_of as source_of
from ._user_files import FileInfo as FileInfo
from ._user_files import ModelFile as ModelFile
from ._user_files import ModelFileError as ModelFileError
from ._user_files import file_sha256 as file_sha256
from ._user_files import load_equations as load_equations
from ._user_files import load_file as load_file
from ._user_files import load_source as load_source
from ._user_files import peek_file as peek_file
from ._user_files import resolve as resolve

_config.start_jax()  # DiffLab's compilation cache
