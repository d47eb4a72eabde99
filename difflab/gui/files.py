"""File menu work: New, Open, Save, Save As, recent files, the unsaved-changes prompt, export.

Sessions are HDF5 files in DiffLab's schema (``difflab.app.session_io``); plots export
as PNG or SVG through pyqtgraph's exporters, data as CSV. A save is written on a worker
thread with its progress in the status bar: the window never waits for it (a caller that
needs the outcome, such as closing, waits in an event loop that keeps the window live).
"""

import csv
import os
from pathlib import Path

import numpy as np
import pyqtgraph.exporters as exporters
from PySide6.QtCore import QCoreApplication, QEventLoop, QSettings
from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

import difflab as dl

from ..app.lab import Lab
from ..app.session_io import finish_save, open_lab, plan_save, write_plan
from .workers import TaskWorker, while_alive

SESSION_FILTER = "DiffLab sessions (*.h5 *.hdf5);;All files (*)"
MAX_RECENT = 8


class FileActions:
    """The file commands of a window; dialogs go through methods tests can replace."""

    def __init__(self, window: QWidget, lab: Lab, settings: QSettings):
        self.window, self.lab, self.settings = window, lab, settings
        self.saving: TaskWorker | None = None  # the save under way

    # -- dialogs (replaced in tests) --------------------------------------------------

    def ask_unsaved(self) -> str:
        """``"save"``, ``"discard"`` or ``"cancel"`` for a session with unsaved changes."""
        name = self.lab.path.name if self.lab.path else "the new session"
        answer = QMessageBox.question(
            self.window, "Unsaved changes", f"Save the changes to {name}?",
            QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
            | QMessageBox.StandardButton.Cancel, QMessageBox.StandardButton.Save)
        return {QMessageBox.StandardButton.Save: "save",
                QMessageBox.StandardButton.Discard: "discard"}.get(answer, "cancel")

    def ask_open_path(self) -> str:
        path, _ = QFileDialog.getOpenFileName(self.window, "Open session", self._last_dir(),
                                              SESSION_FILTER)
        return path

    def ask_save_path(self, title: str, filters: str, suffix: str) -> str:
        start = self._last_dir()
        if self.lab.path is not None and suffix in (".h5", ".hdf5"):
            start = str(self.lab.path)
        path, _ = QFileDialog.getSaveFileName(self.window, title, start, filters)
        if path and not Path(path).suffix:
            path += suffix
        return path

    def show_error(self, title: str, text: str) -> None:
        self.lab.log(text, "error")
        QMessageBox.warning(self.window, title, text)

    # -- sessions --------------------------------------------------------------------

    def may_discard(self) -> bool:
        """True when the session may be replaced: no unsaved changes, saved, or discarded
        (after the save under way, if any, is done)."""
        self.wait_for_save()
        if not self.lab.dirty:
            return True
        answer = self.ask_unsaved()
        if answer == "save":
            return self.save()
        return answer == "discard"

    def new(self) -> bool:
        if not self.may_discard():
            return False
        self.lab.reset(self.lab.model_name)
        self.lab.log("new session")
        return True

    def open(self, path: str | None = None) -> bool:
        if not self.may_discard():
            return False
        path = path or self.ask_open_path()
        if not path:
            return False
        try:
            open_lab(self.lab, path)
        except (dl.io.SessionFileError, OSError, ValueError) as error:
            self.show_error("Cannot open session", str(error))
            self.forget_recent(path)
            return False
        self.add_recent(path)
        self.window.restore_plot_layout(self.lab.gui_layout)
        self.lab.log(f"opened {path}: {self.lab.summary()}")
        return True

    def save(self) -> bool:
        """Save to the session's file (asking for one if it has none); whether it saved.
        The save runs on a worker; the window stays live while this waits for it."""
        if self.lab.path is None:
            return self.save_as()
        return self._save_to(self.lab.path)

    def save_as(self) -> bool:
        path = self.ask_save_path("Save session as", SESSION_FILTER, ".h5")
        return bool(path) and self._save_to(path)

    def _save_to(self, path, wait: bool = True) -> bool:
        """Save to ``path`` on a worker thread; a failure of any kind is shown, the session
        stays unsaved. ``wait``: return whether it saved, once it is done (the window
        stays live meanwhile); else whether it started."""
        if self.saving is not None:
            self.lab.log("a save is under way already", "warning")
            return False
        try:
            plan = plan_save(self.lab, path, plot_layout=self.window.plot_layout())
        except Exception as error:  # noqa: BLE001 (whatever it is, the user must see it)
            self._save_failed(path, error)
            return False
        outcome = {}
        worker = TaskWorker(lambda emit, stop: write_plan(
            plan, lambda done, total: emit((done, total)), self._log_later(emit)), "save")
        worker.label = f"save of {Path(path).name}"
        worker.item.connect(while_alive(self, lambda item: self._save_progress(plan, item)))
        worker.failed.connect(lambda text: outcome.setdefault("error", worker.error or text))
        worker.done.connect(while_alive(self, lambda ok, _: self._saved(worker, plan, outcome)))
        self.saving = worker
        self.window.show_saving(f"saving {plan.path.name}…", 0)
        worker.start()
        if wait:
            self.wait_for_save()
        return outcome.get("saved", not wait)

    def wait_for_save(self) -> None:
        """Wait for the save under way, if any, in an event loop (the window stays live)."""
        worker = self.saving
        while worker is not None and self.saving is worker:
            QCoreApplication.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents, 50)

    def _log_later(self, emit):
        """``log(text, level)`` for the save's worker: messages go through ``emit``."""
        return lambda text, level: emit((text, level))

    def _save_progress(self, plan, item) -> None:
        first, second = item
        if isinstance(first, str):  # a message of the writer
            self.lab.log(first, second)
        else:
            self.window.show_saving(f"saving {plan.path.name}: {first} of {second}…",
                                    first / max(1, second))

    def _saved(self, worker, plan, outcome: dict) -> None:
        worker.wait()
        worker.deleteLater()
        self.saving = None
        self.window.show_saving("", None)
        error = outcome.get("error")
        if error is not None:
            self._save_failed(plan.path, error)
            outcome["saved"] = False
            return
        finish_save(self.lab, plan)
        self.add_recent(str(plan.path))
        self.lab.log(f"saved {plan.path}")
        outcome["saved"] = True

    def _save_failed(self, path, error: BaseException) -> None:
        reason = error.problem if isinstance(error, dl.io.SessionFileError) else (
            str(error) or type(error).__name__)
        self.show_error("Cannot save session", f"cannot save {path}: {reason}")

    # -- recent files ---------------------------------------------------------------

    def recent(self) -> list[str]:
        value = self.settings.value("recent_files", [])
        if isinstance(value, str):
            value = [value]
        return [str(v) for v in (value or [])]

    def add_recent(self, path: str) -> None:
        path = os.path.abspath(path)
        self.settings.setValue("recent_files", [path, *[p for p in self.recent() if p != path]][:MAX_RECENT])
        self.settings.setValue("last_dir", os.path.dirname(path))
        self.window.recent_changed()

    def forget_recent(self, path: str) -> None:
        path = os.path.abspath(path)
        self.settings.setValue("recent_files", [p for p in self.recent() if p != path])
        self.window.recent_changed()

    def _last_dir(self) -> str:
        return str(self.settings.value("last_dir", str(Path.home())))

    # -- export ------------------------------------------------------------------------

    def export_plot(self, kind: str, path: str | None = None) -> bool:
        """Export the plot in front as ``"png"`` or ``"svg"``."""
        plot = self.window.front_plot()
        if plot is None:
            self.lab.log("the view in front has no plot to export", "warning")
            return False
        path = path or self.ask_save_path(f"Export plot as {kind.upper()}",
                                          f"{kind.upper()} (*.{kind})", f".{kind}")
        if not path:
            return False
        item = plot.getPlotItem()
        if kind == "png":
            exporter = exporters.ImageExporter(item)
            exporter.parameters()["width"] = max(1200, int(item.width()) * 2)
            exporter.export(str(path))
        else:
            export_svg(plot, str(path))
        self.lab.log(f"exported the plot to {path}")
        return True

    def export_csv(self, path: str | None = None) -> bool:
        """Export the data of the view in front as CSV (runs: t and states), opened by
        ``#`` lines naming the model, its parameters and the current run's settings."""
        columns = self.window.front_data()
        if not columns:
            self.lab.log("there is no data to export; simulate first", "warning")
            return False
        path = path or self.ask_save_path("Export data as CSV", "CSV (*.csv)", ".csv")
        if not path:
            return False
        run = self.lab.current
        header = dl.io.csv_header(model=self.lab.model,
                                  settings=run.settings if run is not None else None)
        write_columns(path, columns, header)
        self.lab.log(f"exported the data to {path}")
        return True


def export_svg(plot, path: str) -> None:
    """The plot as SVG: pyqtgraph's exporter, or Qt's SVG generator where that one fails.

    pyqtgraph 0.14's exporter cannot parse the closing ``Z`` that Qt 6.12 writes in
    SVG paths (a ``ValueError``); the plain generator output is a valid SVG too.
    """
    try:
        exporters.SVGExporter(plot.getPlotItem()).export(path)
        return
    except ValueError:
        pass
    from PySide6.QtGui import QPainter
    from PySide6.QtSvg import QSvgGenerator

    generator = QSvgGenerator()
    generator.setFileName(path)
    generator.setSize(plot.size())
    generator.setViewBox(plot.rect())
    generator.setTitle("DiffLab plot")
    painter = QPainter(generator)
    try:
        plot.render(painter)
    finally:
        painter.end()


def write_columns(path, columns: dict[str, np.ndarray], header: list[str] = ()) -> None:
    """Named columns of possibly different lengths as CSV (short columns padded empty),
    after the ``#`` lines of ``header``."""
    names = list(columns)
    arrays = [np.asarray(columns[n]).reshape(-1) for n in names]
    rows = max(len(a) for a in arrays)
    with open(path, "w", newline="") as f:
        f.writelines(line + "\n" for line in header)
        writer = csv.writer(f)
        writer.writerow(names)
        for i in range(rows):
            writer.writerow([repr(float(a[i])) if i < len(a) else "" for a in arrays])
