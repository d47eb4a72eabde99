"""The analysis views of the window: sweep, fit, sensitivity, phase plane, Poincaré
section, bifurcation.

Each view appears when the engine API it drives is present in this installation.
"""

import difflab as dl


def views(window) -> list[tuple[str, str, object]]:
    """(key, tab title, widget) of the analysis views the engine supports."""
    out = []
    if hasattr(dl, "sweep"):
        from .sweep_panel import SweepPanel

        out.append(("sweep", "Sweep", SweepPanel(window.lab, window)))
    if hasattr(dl, "fit"):
        from .fit_panel import FitPanel

        out.append(("fit", "Fit", FitPanel(window.lab, window)))
    if hasattr(dl, "sensitivity"):
        from .sensitivity_view import SensitivityView

        out.append(("sensitivity", "Sensitivity", SensitivityView(window.lab, window)))
    if hasattr(dl, "equilibria"):
        from .phase_plane_view import PhasePlaneView

        out.append(("phase_plane", "Phase plane", PhasePlaneView(window.lab, window)))
    if hasattr(dl, "poincare"):
        from .poincare_view import PoincareView

        out.append(("poincare", "Poincaré", PoincareView(window.lab, window)))
    if hasattr(dl, "continuation"):
        from .bifurcation_view import BifurcationView

        out.append(("bifurcation", "Bifurcation", BifurcationView(window.lab, window)))
    return out
