"""Dynamical-systems analysis on exact derivatives: equilibria, continuation, periodic
orbits and their curves, homoclinic orbits, Lyapunov, Poincare sections."""

from .continuation import Continuation as Continuation
from .continuation import SpecialPoint as SpecialPoint
from .continuation import continuation as continuation
from .curves import BifurcationCurve as BifurcationCurve
from .curves import CodimTwoPoint as CodimTwoPoint
from .cycle_curves import CycleCurve as CycleCurve
from .equilibria import STABILITY_CLASSES as STABILITY_CLASSES
from .equilibria import Equilibria as Equilibria
from .equilibria import equilibria as equilibria
from .homoclinic import homoclinic as homoclinic
from .hopf import first_lyapunov_coefficient as first_lyapunov_coefficient
from .locate import locate as locate
from .lyapunov import LyapunovSpectrum as LyapunovSpectrum
from .lyapunov import lyapunov as lyapunov
from .periodic import CycleSpecialPoint as CycleSpecialPoint
from .periodic import PeriodicOrbits as PeriodicOrbits
from .periodic import periodic_orbits as periodic_orbits
from .poincare import Poincare as Poincare
from .poincare import poincare as poincare
