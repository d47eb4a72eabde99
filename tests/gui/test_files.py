"""Sessions (Save, Open, recent files, the unsaved-changes prompt), export, persistence."""

import csv
import fcntl
import os

import h5py
import numpy as np
import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox, QPushButton

import difflab as dl

from .conftest import LONG


@pytest.mark.slow
def test_save_and_reopen_a_session(qtbot, make_window, tmp_path):
    window = make_window()
    lab = window.lab
    lab.select_model("lorenz")
    lab.set_settings(t1=3.0)
    qtbot.waitUntil(lambda: lab.current is not None and lab.current.settings.t1 == 3.0, timeout=LONG)
    lab.keep_current("reference")
    lab.set_param("rho", 15.0)
    qtbot.waitUntil(lambda: lab.current.model.rho == 15.0, timeout=LONG)
    lab.set_layout(time_states=("x", "z"), phase_x="y", phase_y="z", view="phase")
    lab.set_run_visible("reference", False)
    window.time_plot.plot.getPlotItem().setRange(xRange=(0.5, 2.5), yRange=(-5, 5), padding=0)
    path = tmp_path / "lab.h5"
    window.files.save_as = lambda: window.files._save_to(path)
    window.actions["save"].trigger()
    assert path.exists() and not lab.dirty and window.windowTitle().startswith("lab.h5")
    assert window.files.recent()[0] == str(path)

    session = dl.open(path)  # the file is a plain session in DiffLab's schema
    assert session.runs.names() == ["current", "reference"]
    np.testing.assert_array_equal(np.asarray(session.runs["current"].ys), lab.current.ys)
    assert session.plot_layout["phase"] == ["y", "z"]
    assert session.plot_layout["ranges"]["time"] == pytest.approx([0.5, 2.5, -5, 5])
    assert "phase" not in session.plot_layout["ranges"]  # not zoomed: auto-ranges

    window.actions["new"].trigger()
    assert lab.model_name == "lorenz" and not lab.runs and lab.path is None
    window.recent_menu.actions()[0].trigger()  # File > Open Recent > lab.h5
    assert lab.path == path and not lab.dirty
    assert lab.params["rho"] == 15.0 and lab.settings.t1 == 3.0
    assert list(lab.runs) == ["reference"] and not lab.is_visible("reference")
    assert lab.runs["reference"].model.rho == 28.0
    assert lab.layout.time_states == ("x", "z") and window.tabs.currentWidget() is window.phase_plot
    expected = np.asarray(dl.simulate(dl.models.get("lorenz")(rho=15.0), 3.0).ys)
    np.testing.assert_allclose(lab.current.ys, expected, rtol=0, atol=1e-12)
    assert window.parameter_panel.rows["rho"].value() == 15.0
    (x0, x1), _ = window.time_plot.plot.getPlotItem().viewRange()
    assert (x0, x1) == pytest.approx((0.5, 2.5))


@pytest.mark.slow
def test_opening_a_bad_file_says_why_in_the_log(qtbot, window, tmp_path, monkeypatch):
    bad = tmp_path / "not-a-session.h5"
    bad.write_bytes(b"this is not HDF5")
    shown = []
    monkeypatch.setattr(window.files, "show_error", lambda title, text: shown.append(text))
    assert not window.files.open(str(bad))
    assert shown and "not-a-session.h5" in shown[0]


@pytest.mark.slow
def test_unsaved_changes_prompt_can_cancel_closing(qtbot, window, tmp_path):
    window.lab.set_param("g", 5.0)
    assert window.isWindowModified()
    answers = []
    window.files.ask_unsaved = lambda: answers.append("cancel") or "cancel"
    assert not window.close()
    assert answers == ["cancel"] and window.isVisible()
    window.files.ask_unsaved = lambda: "save"
    window.files.save_as = lambda: window.files._save_to(tmp_path / "closing.h5")
    assert window.close()
    assert (tmp_path / "closing.h5").exists()


@pytest.mark.slow
def test_export_plot_png_svg_and_data_csv(qtbot, window, tmp_path):
    png, svg, table = tmp_path / "plot.png", tmp_path / "plot.svg", tmp_path / "data.csv"
    assert window.files.export_plot("png", str(png))
    assert window.files.export_plot("svg", str(svg))
    assert window.files.export_csv(str(table))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert b"<svg" in svg.read_bytes()[:2000]
    with open(table) as f:
        rows = [row for row in csv.reader(f) if not row[0].startswith("#")]
    assert rows[0] == ["t", "theta", "omega"]
    values = np.array(rows[1:], dtype=float)
    np.testing.assert_array_equal(values[:, 1], window.lab.current.ys[:, 0])


@pytest.mark.slow
def test_layout_and_run_settings_persist_between_launches(qtbot, make_window, settings):
    first = make_window()
    first.lab.set_settings(t1=4.0, solver="heun")
    first.docks["log"].hide()
    first.shutdown()
    second = make_window()
    assert second.lab.settings.t1 == 4.0 and second.lab.settings.solver == "heun"
    assert second.settings_panel.solver.currentData() == "heun"
    assert second.docks["log"].isHidden()


def _arrays(path, group) -> dict:
    with h5py.File(path, "r", locking=False) as f:
        return {k: v[()] for k, v in f[group].items()}


@pytest.mark.slow
def test_a_difflab_sweep_file_opens_in_the_sweep_tab_and_deletes_are_saved(
        qtbot, window, tmp_path):
    path = tmp_path / "scan.h5"
    made = dl.sweep(dl.models.get("lorenz")(), dl.grid(rho=np.linspace(1.0, 28.0, 6),
                                                       sigma=[5.0, 10.0]),
                    0.5, dt=1e-3, solver="rk4", observables={"x_max": "max(x)"}, out=path,
                    name="scan")
    sweep = _arrays(path, "sweeps/scan")
    assert window.files.open(str(path))
    panel = window.views["sweep"]
    assert panel.data.result is window.lab.results["sweep"]["scan"]
    assert panel.picker.names.currentText() == "scan" and panel.image.isVisible()
    np.testing.assert_array_equal(panel.image.image, made.observables["x_max"].reshape(6, 2))
    qtbot.waitUntil(lambda: window.lab.current is not None, timeout=LONG)
    window.actions["keep"].trigger()
    window.lab.set_param("rho", 3.0)
    window.actions["save"].trigger()
    assert not window.lab.dirty and dl.open(path).sweeps.names() == ["scan"]
    np.testing.assert_equal(_arrays(path, "sweeps/scan"), sweep)

    window.runs_panel.list.item(0).setSelected(True)
    window.runs_panel.findChild(QPushButton, "delete_runs").click()
    panel.picker.delete_button.click()
    assert not window.lab.runs and not window.lab.results["sweep"] and panel.data is None
    window.actions["save"].trigger()
    session = dl.open(path)
    assert session.sweeps.names() == [] and "run0" not in session.runs.names()
    window.actions["undo"].trigger()
    window.actions["undo"].trigger()
    assert list(window.lab.runs) == ["run0"] and window.runs_panel.list.count() == 1
    assert panel.data.result is window.lab.results["sweep"]["scan"]
    window.actions["save"].trigger()
    session = dl.open(path)
    assert session.sweeps.names() == ["scan"] and "run0" in session.runs.names()
    np.testing.assert_array_equal(session.stored("sweeps", "scan").variables["parameters"].data,
                                  sweep["parameters"])


def _answer_dialogs(texts: list, tries: int = 200) -> None:
    """Read and close each message box as it opens (the next one too, ``tries`` times)."""
    box = QApplication.activeModalWidget()
    if isinstance(box, QMessageBox):
        texts.append(box.text())
        box.done(0)
    elif tries:
        QTimer.singleShot(25, lambda: _answer_dialogs(texts, tries - 1))


@pytest.mark.slow
def test_a_failed_save_is_shown_the_session_stays_unsaved_and_quit_does_not_exit(
        qtbot, window, tmp_path):
    path = tmp_path / "held.h5"
    assert window.files._save_to(path)
    window.lab.set_param("g", 5.0)
    saved = path.read_bytes()
    lock = os.open(tmp_path / ".held.h5.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(lock, fcntl.LOCK_EX)  # as another process writing the file holds it
    texts = []
    try:
        _answer_dialogs(texts)
        window.actions["save"].trigger()
        assert len(texts) == 1 and window.lab.dirty and window.isWindowModified()
        window.files.ask_unsaved = lambda: "save"
        _answer_dialogs(texts)
        assert not window.close()  # Quit > Save failed: the window stays
    finally:
        os.close(lock)
    assert len(texts) == 2 and window.isVisible() and window.lab.dirty
    assert "held.h5" in texts[0] and "being written by another DiffLab process" in texts[0]
    assert path.read_bytes() == saved
    assert window.close()  # the lock is free again: Quit > Save saves and exits
    assert not window.lab.dirty and dl.open(path).app_settings["params"]["g"] == 5.0
