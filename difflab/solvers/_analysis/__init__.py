"""Dynamical-systems analysis on exact derivatives: equilibria, continuation, Lyapunov."""

from .continuation import Continuation as Continuation
from .continuation import SpecialPoint as SpecialPoint
from .continuation import continuation as continuation
from .equilibria import STABILITY_CLASSES as STABILITY_CLASSES
from .equilibria import Equilibria as Equilibria
from .equilibria import equilibria as equilibria
from .hopf import first_lyapunov_coefficient as first_lyapunov_coefficient
from .lyapunov import LyapunovSpectrum as LyapunovSpectrum
from .lyapunov import lyapunov as lyapunov
