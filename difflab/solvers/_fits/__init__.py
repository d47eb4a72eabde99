"""Fitting parameters to observations: the problem, the optimisers and the fit's result."""

from .fit import FitError as FitError
from .fit import FitProgress as FitProgress
from .fit import FitResult as FitResult
from .fit import fit as fit
from .fit import fit_stream as fit_stream
from .observations import Observations as Observations
from .observations import as_observations as as_observations
from .statistics import FitStatistics as FitStatistics
from .statistics import fit_statistics as fit_statistics
