"""Figures for papers: the plot in front as PNG, SVG and PDF on a light theme.

:func:`export_figure` restyles the plot for the time of the export (white background,
dark axes and text in a readable size, a framed legend, a title naming the model and its
parameters above any note the plot had), writes the files and puts the plot back as it
was, in either theme.
"""

import contextlib
from pathlib import Path

import pyqtgraph as pg
import pyqtgraph.exporters as exporters
from PySide6.QtCore import QCoreApplication, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QPageSize, QPainter, QPdfWriter

from ..app.runs import format_params, params_of
from .theme import theme_colors

LIGHT = theme_colors("light")
FONT_PT = 11  # ticks, labels and legend of an exported figure
PNG_WIDTH = 1800  # pixels: about 6 inches at 300 dpi
KINDS = ("png", "svg", "pdf")


def figure_title(lab) -> str:
    """``lorenz: sigma=10, rho=28, beta=2.66667``: the model and its parameters."""
    return f"{lab.model_name}: {format_params(params_of(lab.model), most=12)}"


def export_figure(plot: pg.PlotWidget, path, title: str, kinds=KINDS) -> list[Path]:
    """Write ``plot`` as ``path`` with each suffix of ``kinds`` (PNG, SVG, PDF), in the
    paper style; returns the files written."""
    from .files import export_svg  # the SVG exporter with its fallback

    base = Path(path).with_suffix("")
    written = []
    with paper_style(plot, title):
        item = plot.getPlotItem()
        for kind in kinds:
            target = base.with_suffix(f".{kind}")
            if kind == "png":
                exporter = exporters.ImageExporter(item)
                exporter.parameters()["background"] = QColor(LIGHT["background"])
                exporter.parameters()["width"] = PNG_WIDTH
                exporter.export(str(target))
            elif kind == "svg":
                export_svg(plot, str(target))
            elif kind == "pdf":
                _export_pdf(item, target)
            else:
                raise ValueError(f"unknown figure kind {kind!r}; choose from {', '.join(KINDS)}")
            written.append(target)
    return written


def _export_pdf(item: pg.PlotItem, target: Path) -> None:
    """The plot item drawn into a PDF page of its own proportions (vector output)."""
    source = item.sceneBoundingRect()
    writer = QPdfWriter(str(target))
    writer.setResolution(300)
    points = source.size() * 0.75  # screen pixels to points at 96 dpi
    writer.setPageSize(QPageSize(points, QPageSize.Unit.Point))
    writer.setPageMargins(writer.pageLayout().margins() * 0)
    painter = QPainter(writer)
    try:
        page = QRectF(painter.viewport())
        painter.fillRect(page, QColor(LIGHT["background"]))
        item.scene().render(painter, page, source, Qt.AspectRatioMode.KeepAspectRatio)
    finally:
        painter.end()


@contextlib.contextmanager
def paper_style(plot: pg.PlotWidget, title: str):
    """Restyle ``plot`` for a figure while the block runs; restore it after."""
    undo = [_title(plot.getPlotItem(), title), _background(plot)]
    for thing in plot.scene().items():
        if isinstance(thing, pg.AxisItem):
            undo.append(_axis(thing))
        elif isinstance(thing, pg.LegendItem):
            undo.append(_legend(thing))
    _settle(plot)
    try:
        yield
    finally:
        for restore in reversed(undo):
            restore()
        _settle(plot)


def _settle(plot: pg.PlotWidget) -> None:
    """Lay the plot out again (a taller title, wider ticks) before it is drawn."""
    for thing in plot.scene().items():
        if isinstance(thing, pg.LegendItem):
            thing.updateSize()
    plot.getPlotItem().layout.activate()
    QCoreApplication.processEvents()


def _title(item: pg.PlotItem, title: str):
    label = item.titleLabel
    text, opts, shown = label.text, dict(label.opts), label.isVisible() and bool(label.text)
    note = f"<br><span style='font-size:{FONT_PT - 1}pt'>{text}</span>" if shown else ""
    item.setTitle(title + note, color=LIGHT["foreground"], size=f"{FONT_PT + 2}pt")
    return lambda: item.setTitle(text, **opts) if shown else item.setTitle(None)


def _background(plot: pg.PlotWidget):
    brush = plot.backgroundBrush()
    plot.setBackground(LIGHT["background"])
    return lambda: plot.setBackgroundBrush(brush)


def _axis(axis: pg.AxisItem):
    pen, text_pen, font = axis.pen(), axis.textPen(), axis.style.get("tickFont")
    big = QFont(font) if font is not None else QFont()
    big.setPointSizeF(FONT_PT)
    axis.setPen(pg.mkPen(LIGHT["axis"]))
    axis.setTextPen(pg.mkPen(LIGHT["foreground"]))
    axis.labelStyle["font-size"] = f"{FONT_PT}pt"
    axis.setStyle(tickFont=big)
    axis._updateLabel()

    def restore():
        axis.labelStyle.pop("font-size", None)
        axis.setPen(pen)
        axis.setTextPen(text_pen)
        axis.setStyle(tickFont=font)
        axis._updateLabel()

    return restore


def _legend(legend: pg.LegendItem):
    opts = {k: legend.opts.get(k) for k in ("pen", "brush", "labelTextColor", "labelTextSize")}
    legend.setPen(pg.mkPen(LIGHT["axis"]))
    legend.setBrush(pg.mkBrush(255, 255, 255, 230))
    _labels(legend, LIGHT["foreground"], f"{FONT_PT + 2}pt")

    def restore():
        legend.setPen(opts["pen"] if opts["pen"] is not None else pg.mkPen(None))
        legend.setBrush(opts["brush"] if opts["brush"] is not None else pg.mkBrush(None))
        _labels(legend, opts["labelTextColor"] or theme_colors()["foreground"],
                opts["labelTextSize"] or "9pt")

    return restore


def _labels(legend: pg.LegendItem, color, size: str) -> None:
    """The legend's labels, those already in it included, in ``color`` and ``size``."""
    legend.setLabelTextColor(color)
    legend.setLabelTextSize(size)
    for _, label in legend.items:
        label.setText(label.text, color=pg.mkColor(color), size=size)


def export_front_figure(window, path: str | None = None) -> list[Path]:
    """File > Export figure…: the plot in front, as PNG, SVG and PDF beside one another."""
    plot = window.front_plot()
    if plot is None:
        window.lab.log("the view in front has no plot to export", "warning")
        return []
    path = path or window.files.ask_save_path(
        "Export figure (PNG, SVG and PDF)", "PNG, SVG and PDF (*.png)", ".png")
    if not path:
        return []
    written = export_figure(plot, path, figure_title(window.lab))
    window.lab.log("exported the figure to " + ", ".join(str(p) for p in written))
    return written
