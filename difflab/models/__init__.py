"""What is simulated: the Model base classes, the built-in library and its registry."""

from . import _biology, _chaos, _fields, _mechanics, _neural, _stochastic  # noqa: F401  (registers the built-in models)
from ._base import HamiltonianModel as HamiltonianModel
from ._base import Model as Model
from ._base import ParamSpec as ParamSpec
from ._base import SDEModel as SDEModel
from ._base import param as param
from ._registry import available as available
from ._registry import get as get
from ._registry import register as register
