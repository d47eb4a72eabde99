"""The Device tab: the JAX backend and devices in use, and the choice of device and
precision for the solves of the next start.

JAX fixes its backend when it first runs something, and its precision for every program
it traces: switching either under a running window would leave models, compiled programs
and kept results of the other kind side by side. The choices are therefore remembered
(``QSettings``) and applied by :func:`apply_device_choices` as the app starts, before
anything is computed; the tab says so and shows what is in use now.
"""

import jax
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QComboBox, QFormLayout, QLabel, QWidget

import difflab as dl

from .widgets import hint_label

DEVICE_KEY, PRECISION_KEY = "device/platform", "device/precision"
PRECISIONS = ("float64", "float32")
PLATFORMS = {"default": "GPU when present, else CPU", "cpu": "CPU only"}


def available_platforms() -> list[str]:
    """The accelerator platforms JAX can use here besides the CPU (``gpu``, ``tpu``)."""
    found = []
    for name in ("gpu", "tpu"):
        try:
            if jax.devices(name):
                found.append(name)
        except RuntimeError:  # no such backend in this process
            pass
    return found


def apply_device_choices(settings: QSettings) -> list[str]:
    """Use the device and precision chosen in the Device tab; call it before JAX computes
    anything. Returns what it set, in words (nothing where the choices are the defaults
    or JAX has already started)."""
    done = []
    precision = str(settings.value(PRECISION_KEY, "float64"))
    if precision in PRECISIONS and precision != dl.precision():
        dl.set_precision(precision)
        done.append(f"precision {precision}")
    if str(settings.value(DEVICE_KEY, "default")) == "cpu":
        try:
            jax.config.update("jax_platforms", "cpu")
            done.append("CPU only")
        except RuntimeError:  # the backends are up: too late for this process
            pass
    return done


class DevicePanel(QWidget):
    """The backend and devices in use; the device and precision for the next start."""

    def __init__(self, settings: QSettings | None = None, parent=None):
        super().__init__(parent)
        self.settings = settings or QSettings("DiffLab", "DiffLab")
        form = QFormLayout(self)
        form.setContentsMargins(6, 6, 6, 6)
        devices = jax.devices()
        self.platform, self.precision = QComboBox(), QComboBox()
        self.platform.setObjectName("device_platform")
        self.precision.setObjectName("device_precision")
        accelerators = self.accelerators = available_platforms()
        for key, text in PLATFORMS.items():
            self.platform.addItem(text if accelerators or key == "cpu" else "CPU", key)
        self.precision.addItems(PRECISIONS)
        self.precision.setToolTip("float64 for physics accuracy; float32 is faster on GPUs")
        self.platform.setCurrentIndex(max(0, self.platform.findData(
            str(self.settings.value(DEVICE_KEY, "default")))))
        self.precision.setCurrentText(str(self.settings.value(PRECISION_KEY, dl.precision())))
        self.note = hint_label("")
        self.note.setWordWrap(True)
        form.addRow("device", self.platform)
        form.addRow("precision", self.precision)
        form.addRow(self.note)
        form.addRow("in use", QLabel(f"{dl.precision()} on {jax.default_backend()}"))
        form.addRow("devices", QLabel(str(len(devices))))
        for d in devices[:16]:
            form.addRow("", hint_label(f"{d.id}: {d.device_kind} ({d.platform})"))
        if len(devices) > 16:
            form.addRow("", hint_label(f"... and {len(devices) - 16} more"))
        form.addRow("JAX", hint_label(jax.__version__))
        self.platform.activated.connect(lambda _: self._chosen())
        self.precision.activated.connect(lambda _: self._chosen())
        self._say()

    def _chosen(self) -> None:
        self.settings.setValue(DEVICE_KEY, self.platform.currentData())
        self.settings.setValue(PRECISION_KEY, self.precision.currentText())
        self._say()

    def _say(self) -> None:
        """Say when the choices differ from what is in use: they apply at the next start."""
        backend = jax.default_backend()
        platform = self.platform.currentData()
        differs = self.precision.currentText() != dl.precision() or (
            platform == "cpu" and backend != "cpu") or (
            platform == "default" and backend == "cpu" and bool(self.accelerators))
        self.note.setText("used by every solve after the next start of DiffLab (JAX keeps "
                          "its device and precision while it runs)" if differs else
                          "the solves use these; a change applies at the next start")
