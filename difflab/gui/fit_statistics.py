"""A finished fit's statistics: chi-square, reduced chi-square, correlations and residuals.

:class:`FitStatisticsView` shows the numbers of a :class:`difflab.solvers.FitStatistics`
(a line of words and the correlation matrix); :class:`ResidualPlot` draws the residuals
``data - model`` against time, one series per observed state, around a zero line.
"""

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from .plots import configure_plot, state_color


def correlation_color(value: float) -> QColor:
    """Red for strong positive, blue for strong negative correlation, white near zero."""
    if not np.isfinite(value):
        return QColor("#dddddd")
    strength = int(200 * min(abs(value), 1.0))
    base = (255, 255 - strength, 255 - strength) if value > 0 else \
        (255 - strength, 255 - strength, 255)
    return QColor(*base)


class FitStatisticsView(QWidget):
    """The fit's chi-square in words and its correlation matrix."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.summary = QLabel("")
        self.summary.setObjectName("fit_statistics")
        self.summary.setWordWrap(True)
        self.correlation = QTableWidget(0, 0)
        self.correlation.setObjectName("fit_correlation")
        self.correlation.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.correlation.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.summary)
        layout.addWidget(QLabel("Correlation of the estimates"))
        layout.addWidget(self.correlation)

    def show_statistics(self, stats) -> None:
        """Show ``stats`` (``None``: clear)."""
        names = [] if stats is None else list(stats.names)
        self.summary.setText("" if stats is None else stats.describe())
        self.correlation.setRowCount(len(names))
        self.correlation.setColumnCount(len(names))
        self.correlation.setHorizontalHeaderLabels(names)
        self.correlation.setVerticalHeaderLabels(names)
        for i in range(len(names)):
            for j in range(len(names)):
                value = float(stats.correlation[i, j])
                item = QTableWidgetItem(f"{value:+.3f}" if np.isfinite(value) else "–")
                item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
                item.setBackground(correlation_color(value))
                item.setForeground(QColor("#111111"))
                self.correlation.setItem(i, j, item)
        rows = max(len(names), 1)
        height = self.correlation.horizontalHeader().height() + 26 * rows + 4
        self.correlation.setFixedHeight(min(height, 220))


class ResidualPlot(pg.PlotWidget):
    """Observed minus fitted values against time, with a line at zero."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("fit_residuals")
        configure_plot(self, "t", "residual (data − model)")
        self.addItem(pg.InfiniteLine(0.0, angle=0, pen=pg.mkPen("#888", width=1)))
        self.series: dict[str, pg.PlotDataItem] = {}

    def show_statistics(self, stats, state_names=()) -> None:
        """Draw the residuals of ``stats`` (``None``: none)."""
        states = () if stats is None else stats.states
        for key in [k for k in self.series if k not in states]:
            self.removeItem(self.series.pop(key))
        for j, state in enumerate(states):
            index = list(state_names).index(state) if state in state_names else j
            item = self.series.get(state)
            if item is None:
                item = self.plot(pen=None, symbol="o", symbolSize=5, symbolPen=None,
                                 symbolBrush=state_color(index, len(state_names)), name=state)
                self.series[state] = item
            r = stats.residuals[:, j]
            keep = np.isfinite(r)
            item.setData(stats.t[keep], r[keep])
