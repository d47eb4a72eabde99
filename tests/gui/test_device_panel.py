"""The Device tab chooses the device and precision of the solves (issue 35, item 8): the
choice is remembered and a fresh start of DiffLab solves with it."""

import os
import subprocess
import sys

import jax
from PySide6.QtCore import QSettings

import difflab as dl
from difflab.gui.device_panel import DEVICE_KEY, PRECISION_KEY, DevicePanel

FRESH_START = """
import sys
from PySide6.QtCore import QSettings
import jax, jax.numpy as jnp
import difflab as dl
from difflab.gui.device_panel import apply_device_choices
print(apply_device_choices(QSettings(sys.argv[1], QSettings.Format.IniFormat)))
run = dl.simulate(dl.models.get("lorenz")(), 0.5)
print(jnp.asarray(run.ys).dtype, jax.default_backend())
"""


def _choose(box, text):
    box.setCurrentIndex(box.findText(text))
    box.activated.emit(box.currentIndex())


def test_the_chosen_device_and_precision_are_used_from_the_next_start(qtbot, tmp_path):
    ini = str(tmp_path / "difflab.ini")
    settings = QSettings(ini, QSettings.Format.IniFormat)
    panel = DevicePanel(settings)
    qtbot.addWidget(panel)
    assert panel.precision.currentText() == dl.precision() == "float64"
    assert "the solves use these" in panel.note.text()
    _choose(panel.precision, "float32")
    panel.platform.setCurrentIndex(panel.platform.findData("cpu"))
    panel.platform.activated.emit(panel.platform.currentIndex())
    assert settings.value(PRECISION_KEY) == "float32" and settings.value(DEVICE_KEY) == "cpu"
    assert "after the next start" in panel.note.text()
    assert dl.precision() == "float64"  # this process keeps what it traced with
    settings.sync()
    env = {k: v for k, v in os.environ.items() if k not in ("JAX_ENABLE_X64", "XLA_FLAGS")}
    env["DIFFLAB_CPU_DEVICES"] = "1"
    out = subprocess.run([sys.executable, "-c", FRESH_START, ini], env=env, text=True,
                         capture_output=True, timeout=120, check=True).stdout.splitlines()
    assert out[-2] == "['precision float32', 'CPU only']"
    assert out[-1] == "float32 cpu"
    reopened = DevicePanel(QSettings(ini, QSettings.Format.IniFormat))
    qtbot.addWidget(reopened)
    assert reopened.precision.currentText() == "float32"
    assert reopened.platform.currentData() == "cpu"
    assert jax.config.jax_enable_x64
