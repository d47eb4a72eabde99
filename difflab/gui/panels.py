"""The side panels: model browser, run settings, kept runs, device and log."""

import html
import time

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QIcon, QPainter, QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

import difflab as dl

from ..app import accuracy
from ..app.lab import Lab
from ..app.runs import complete, format_params, params_of
from .plots import run_color, run_pen
from .theme import theme_colors
from .widgets import FloatSpinBox, hint_label


class ModelBrowser(QWidget):
    """The built-in models grouped by domain, then the user's models; a click selects one."""

    load_file_requested = Signal()

    def __init__(self, lab: Lab, parent=None):
        super().__init__(parent)
        self.lab = lab
        self.tree = QTreeWidget()
        self.tree.setObjectName("model_tree")
        self.tree.setHeaderHidden(True)
        self.tree.setColumnCount(1)
        self.tree.itemClicked.connect(self._clicked)
        self.tree.itemActivated.connect(self._clicked)
        self.load_button = QPushButton("Load model file…")
        self.load_button.clicked.connect(self.load_file_requested)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.load_button)
        lab.events.model.connect(lambda e: self.refresh())
        self.refresh()

    def refresh(self) -> None:
        self.tree.clear()
        for domain, names in self.lab.catalog().items():
            group = QTreeWidgetItem(self.tree, [domain])
            group.setFlags(Qt.ItemFlag.ItemIsEnabled)
            font = group.font(0)
            font.setBold(True)
            group.setFont(0, font)
            for name in names:
                cls = self.lab.model_class(name)
                item = QTreeWidgetItem(group, [name])
                item.setData(0, Qt.ItemDataRole.UserRole, name)
                item.setToolTip(0, f"{name}: {cls.description}")
                if name == self.lab.model_name:
                    self.tree.setCurrentItem(item)
            group.setExpanded(True)

    def _clicked(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        name = item.data(0, Qt.ItemDataRole.UserRole)
        if name and name != self.lab.model_name:
            self.lab.select_model(name)


class RunSettingsPanel(QWidget):
    """t1, dt, solver, saved points and seed: the arguments of ``difflab.simulate``."""

    def __init__(self, lab: Lab, parent=None):
        super().__init__(parent)
        self.lab = lab
        self.t1 = FloatSpinBox(log_steps=True)
        self.t1.setRange(1e-9, 1e9)
        self.t1.setObjectName("t1")
        self.dt_auto = QCheckBox("auto")
        self.dt = FloatSpinBox(log_steps=True)
        self.dt.setRange(1e-12, 1e6)
        self.dt.setObjectName("dt")
        self.solver = QComboBox()
        self.solver.setObjectName("solver")
        self.n_auto = QCheckBox("auto")
        self.n_save = QSpinBox()
        self.n_save.setRange(2, 50_000_000)
        self.n_save.setObjectName("n_save")
        self.n_save.setKeyboardTracking(False)
        self.seed = QSpinBox()
        self.seed.setRange(0, 2**31 - 1)
        self.seed.setKeyboardTracking(False)
        form = QFormLayout(self)
        form.setContentsMargins(6, 6, 6, 6)
        form.addRow("t1", self.t1)
        form.addRow("dt", _pair(self.dt, self.dt_auto))
        form.addRow("solver", self.solver)
        form.addRow("saved points", _pair(self.n_save, self.n_auto))
        form.addRow("seed", self.seed)
        self.chosen = hint_label("")
        self.chosen.setObjectName("auto_chosen")
        self.chosen.setWordWrap(True)
        form.addRow("auto chose", self.chosen)
        self.t1.setToolTip("end time of the run (t0 = 0)")
        self.dt.setToolTip("step of fixed-step solvers; initial step of adaptive ones (auto: "
                           "the engine's rule, from the model's stability and accuracy, at "
                           "most t1 / 1000; greyed, it shows the step of the current run)")
        self.n_save.setToolTip("saved points, evenly spaced (auto: enough per characteristic "
                               "time of the model, at least two per pixel of the plot, within "
                               "a memory budget; greyed, the points of the current run)")
        self.solver.setToolTip("the solvers that can advance this model")
        self.seed.setToolTip("random seed of stochastic (SDE) models")
        self.t1.valueChanged.connect(lambda v: self._set(t1=v))
        self.dt.valueChanged.connect(lambda v: self._set(dt=v))
        self.dt_auto.toggled.connect(lambda on: self._set(dt=None if on else self.dt.value()))
        self.n_save.valueChanged.connect(lambda v: self._set(n_save=v))
        self.n_auto.toggled.connect(lambda on: self._set(n_save=None if on else self.n_save.value()))
        self.solver.currentIndexChanged.connect(lambda i: self._set(solver=self.solver.itemData(i)))
        self.seed.valueChanged.connect(lambda v: self._set(seed=v))
        lab.events.settings.connect(lambda e: self.show_settings())
        lab.events.model.connect(lambda e: self.show_settings())
        lab.events.current.connect(lambda e: self.show_chosen(e.run))
        self.show_settings()

    def show_chosen(self, run) -> None:
        """Say what the settings on auto came to for ``run``."""
        if run is not None and complete(run):
            self.chosen.setText(accuracy.chosen(run, self.lab.settings) or "nothing (all set by hand)")
            self._show_used(run.settings)

    def _show_used(self, made) -> None:
        """The greyed boxes (settings on auto) show the step and points ``made`` used, so
        that unticking "auto" keeps them."""
        if made is None:
            return
        s = self.lab.settings
        for box, auto, used in ((self.dt, s.dt is None, made.dt),
                                (self.n_save, s.n_save is None, made.n_save)):
            if auto and used is not None:
                blocked = box.blockSignals(True)
                box.setValue(used)
                box.blockSignals(blocked)

    def _set(self, **changes) -> None:
        try:
            self.lab.set_settings(**changes)
        except ValueError as error:
            self.lab.log(str(error), "error")
            self.show_settings()

    def show_settings(self) -> None:
        s = self.lab.settings
        widgets = (self.t1, self.dt, self.dt_auto, self.solver, self.n_save, self.n_auto, self.seed)
        blocked = [w.blockSignals(True) for w in widgets]
        self.t1.setValue(s.t1)
        self.dt_auto.setChecked(s.dt is None)
        self.dt.setEnabled(s.dt is not None)
        self.n_auto.setChecked(s.n_save is None)
        self.n_save.setEnabled(s.n_save is not None)
        for box, value in ((self.dt, s.dt), (self.n_save, s.n_save)):
            if value is not None:
                box.setValue(value)  # on auto: the current run's, set by show_chosen
        current = self.lab.current
        if current is not None and complete(current):
            self._show_used(current.settings)
        self.seed.setValue(s.seed)
        self.seed.setEnabled(isinstance(self.lab.model, dl.SDEModel))
        self._fill_solvers()
        for w, b in zip(widgets, blocked):
            w.blockSignals(b)

    def _fill_solvers(self) -> None:
        self.solver.clear()
        self.solver.addItem(f"default ({dl.solvers.default_solver(self.lab.model)})", None)
        for name in dl.solvers.solvers_for(self.lab.model_class(self.lab.model_name)):
            self.solver.addItem(name, name)
        index = self.solver.findData(self.lab.settings.solver)
        self.solver.setCurrentIndex(max(index, 0))


def _pair(*widgets) -> QWidget:
    box = QWidget()
    row = QHBoxLayout(box)
    row.setContentsMargins(0, 0, 0, 0)
    for w in widgets:
        row.addWidget(w)
    return box


def _swatch(index: int) -> QIcon:
    pixmap = QPixmap(28, 12)
    pixmap.fill(QColor(0, 0, 0, 0))
    painter = QPainter(pixmap)
    pen = run_pen(index, run_color(index))
    pen.setWidthF(2.5)
    painter.setPen(pen)
    painter.drawLine(1, 6, 27, 6)
    painter.end()
    return QIcon(pixmap)


class RunsPanel(QWidget):
    """The kept runs: check to overlay, double-click to rename, Delete (undoable)."""

    def __init__(self, lab: Lab, parent=None):
        super().__init__(parent)
        self.lab = lab
        self.list = QListWidget()
        self.list.setObjectName("runs_list")
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.list.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked
                                  | QAbstractItemView.EditTrigger.EditKeyPressed)
        self.list.itemChanged.connect(self._item_changed)
        self.keep = QPushButton("Keep current run")
        self.keep.setToolTip("Keep the current run as a named run, overlaid on the plots (Ctrl+K)")
        self.keep.clicked.connect(self.keep_current)
        delete = QPushButton("Delete")
        delete.setObjectName("delete_runs")
        delete.setToolTip("Delete the selected runs; Undo brings them back")
        delete.clicked.connect(self.delete_selected)
        buttons = QHBoxLayout()
        buttons.addWidget(self.keep, 1)
        buttons.addWidget(delete)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.list, 1)
        layout.addLayout(buttons)
        lab.events.runs.connect(lambda e: self.refresh())
        lab.events.model.connect(lambda e: self.refresh())
        self.refresh()

    def keep_current(self) -> None:
        try:
            name = self.lab.keep_current()
        except ValueError as error:
            self.lab.log(str(error), "warning")
            return
        self.lab.log(f"kept the current run as {name!r}")

    def delete_selected(self) -> None:
        for name in [item.data(Qt.ItemDataRole.UserRole) for item in self.list.selectedItems()]:
            self.lab.delete("run", name)

    def refresh(self) -> None:
        blocked = self.list.blockSignals(True)
        self.list.clear()
        for i, (name, run) in enumerate(self.lab.runs.items()):
            item = QListWidgetItem(_swatch(i), name)
            item.setData(Qt.ItemDataRole.UserRole, name)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable
                          | Qt.ItemFlag.ItemIsEditable)
            checked = self.lab.is_visible(name)
            item.setCheckState(Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked)
            model = self.lab.name_of(run.model)
            other = "" if model == self.lab.model_name else " (another model: not shown)"
            if other:
                item.setForeground(QColor("#999999"))
            item.setToolTip(f"{model} ({format_params(params_of(run.model))}), "
                            f"t1={run.settings.t1:g}, {run.message}{other}")
            self.list.addItem(item)
        self.list.blockSignals(blocked)

    def _item_changed(self, item: QListWidgetItem) -> None:
        name = item.data(Qt.ItemDataRole.UserRole)
        try:
            if item.text() != name:
                self.lab.rename_run(name, item.text())
            else:
                self.lab.set_run_visible(name, item.checkState() == Qt.CheckState.Checked)
        except ValueError as error:
            self.lab.log(str(error), "error")
            self.refresh()


class LogPanel(QWidget):
    """Messages and errors of background work, in words, newest last."""

    def __init__(self, lab: Lab, parent=None):
        super().__init__(parent)
        self.text = QPlainTextEdit()
        self.text.setObjectName("log_text")
        self.text.setReadOnly(True)
        self.text.setMaximumBlockCount(5000)
        clear = QPushButton("Clear")
        self.shown: list[tuple[str, str, str]] = []  # (time, level, text), oldest first
        clear.clicked.connect(self.clear)
        side = QVBoxLayout()
        side.addWidget(clear)
        side.addStretch(1)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.text, 1)
        layout.addLayout(side)
        lab.events.log.connect(lambda e: self.append(e.level, e.text))
        for level, text in lab.messages:
            self.append(level, text)

    def append(self, level: str, text: str) -> None:
        self.shown.append((time.strftime("%H:%M:%S"), level, text))
        del self.shown[:-self.text.maximumBlockCount()]
        self._show(*self.shown[-1])

    def retheme(self) -> None:
        """The messages again, in the colours of the theme now in use (``apply_theme``)."""
        self.text.clear()
        for message in self.shown:
            self._show(*message)

    def _show(self, stamp: str, level: str, text: str) -> None:
        colors = theme_colors()
        color = colors.get(level, colors["text"]) if level != "info" else colors["text"]
        body = html.escape(text).replace("\n", "<br>")
        tag = "" if level == "info" else f"<b>{level}:</b> "
        self.text.appendHtml(f"<span style='color:{colors['hint']}'>{stamp}</span> "
                             f"<span style='color:{color}'>{tag}{body}</span>")

    def clear(self) -> None:
        self.shown.clear()
        self.text.clear()

    def plain_text(self) -> str:
        return self.text.toPlainText()
