"""The analysis views of the window (sweep, fit, sensitivity) and loading user model files.

Each view appears when the engine API it drives is present in this installation.
"""

from PySide6.QtWidgets import QFileDialog

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
    return out


def load_model_file(window) -> None:
    """File dialog, then ``difflab.models.load_file``; the file's models join the browser."""
    load = getattr(dl.models, "load_file", None)
    if load is None:
        window.lab.log("loading model files needs difflab.models.load_file (issue 7)", "warning")
        return
    path, _ = QFileDialog.getOpenFileName(window, "Load model file", "",
                                          "Python model files (*.py);;All files (*)")
    if not path:
        return
    try:
        loaded = load(path)
    except Exception as error:  # noqa: BLE001 (the file's own error, shown in words)
        window.lab.log(f"cannot load {path}: {error}", "error")
        return
    classes = loaded if isinstance(loaded, (list, tuple)) else list(getattr(loaded, "values", lambda: [loaded])())
    for cls in classes:
        window.lab.add_user_model(cls)
    window.lab.log(f"loaded {len(classes)} model(s) from {path}")
