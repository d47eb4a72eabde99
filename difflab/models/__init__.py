"""What is simulated: the Model base classes, the built-in library and its registry."""

from .. import _config
from . import _biology, _chaos, _fields, _mechanics, _neural, _stochastic  # noqa: F401 (registers)
from ._base import HamiltonianModel as HamiltonianModel
from ._base import Model as Model
from ._base import ParamSpec as ParamSpec
from ._base import SDEModel as SDEModel
from ._base import param as param
from ._equations import EquationError as EquationError
from ._equations import Problem as Problem
from ._equations import check_equations as check_equations
from ._equations import compile_formula as compile_formula
from ._equations import from_equations as from_equations
from ._plugins import PluginError as PluginError
from ._plugins import refresh as refresh_plugins  # noqa: F401 (public)
from ._registry import available as available
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
