"""DiffLab: a lab for differentiable physics.

Define a model as an Equinox module (or pick one with ``difflab.models.get``), then
``simulate``, ``stream``, sweep and fit it with JAX.

The names below are imported on first use, so ``import difflab`` (and ``difflab
--version``) does not load JAX; it leaves DiffLab's JAX defaults (float64, one CPU
device per core) where JAX reads them as it loads (``_config``).
"""

import importlib

from . import _config  # noqa: F401 (JAX's defaults, set before JAX loads)
from ._version import __version__ as __version__

_SUBPACKAGES = ("io", "models", "solvers")
_FROM = {
    "_config": ("precision", "set_precision"),
    "models": ("HamiltonianModel", "Model", "SDEModel", "param"),
    "solvers": (
        "BifurcationCurve", "Continuation", "CycleCurve", "Equilibria", "Event", "Events",
        "FitResult", "LyapunovSpectrum", "PeriodicOrbits", "Poincare", "Result", "Sensitivity",
        "SimulationError", "Space", "SweepResult", "Trajectory", "continuation",
        "equilibria", "fit", "grid", "homoclinic", "latin_hypercube", "locate", "lyapunov",
        "periodic_orbits", "poincare", "sensitivity", "simulate", "sobol", "stream", "sweep",
        "uniform"),
}
_RENAMED = {"open": ("io", "open_session")}  # difflab.open, not builtins.open
_WHERE = {name: (module, name) for module, names in _FROM.items() for name in names}
_WHERE.update(_RENAMED)


def __getattr__(name: str):
    importlib.import_module(".io", __name__)  # the engine, with io's sweep output set
    if name in _SUBPACKAGES:
        return importlib.import_module(f".{name}", __name__)
    if name not in _WHERE:
        raise AttributeError(f"module 'difflab' has no attribute {name!r}")
    module, attribute = _WHERE[name]
    value = getattr(importlib.import_module(f".{module}", __name__), attribute)
    globals()[name] = value  # looked up once
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_SUBPACKAGES, *_WHERE})
