"""File > Export figure…: the plot in front as PNG, SVG and PDF on a light background,
with a title naming the model and its parameters, in either theme (issue 35, item 8)."""

import xml.etree.ElementTree as ET

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QImage

from difflab.app.lab import Lab
from difflab.gui.export import PNG_WIDTH, export_figure, figure_title
from difflab.gui.plots import configure_plot, outside_legend
from difflab.gui.theme import apply_theme, theme_colors


def _dark_plot(qtbot):
    """A plot drawn in the dark theme, with a legend and two curves."""
    apply_theme("dark")
    plot = pg.PlotWidget()
    qtbot.addWidget(plot)
    configure_plot(plot, "t", "x")
    outside_legend(plot.getPlotItem())
    t = np.linspace(0.0, 10.0, 200)
    plot.plot(t, np.sin(t), pen=pg.mkPen("#1f77b4", width=2), name="x")
    plot.plot(t, np.cos(t), pen=pg.mkPen("#d62728", width=2), name="y")
    plot.resize(640, 420)
    plot.show()
    qtbot.waitExposed(plot)
    return plot


def _light_fraction(image: QImage) -> float:
    """The share of pixels brighter than 230 in each channel (a sample of them)."""
    image = image.convertToFormat(QImage.Format.Format_RGB32)
    w, h = image.width(), image.height()
    pixels = [image.pixelColor(x, y) for x in range(0, w, 7) for y in range(0, h, 7)]
    return np.mean([min(c.red(), c.green(), c.blue()) > 230 for c in pixels])


def test_a_figure_is_light_titled_and_the_plot_keeps_its_theme(qtbot, tmp_path):
    plot = _dark_plot(qtbot)
    try:
        lab = Lab()
        lab.select_model("lorenz")
        title = figure_title(lab)
        assert title.startswith("lorenz: ") and "rho=28" in title
        written = export_figure(plot, tmp_path / "figure.png", title)
        assert [p.suffix for p in written] == [".png", ".svg", ".pdf"]
        image = QImage(str(tmp_path / "figure.png"))
        assert image.width() == PNG_WIDTH and image.height() > PNG_WIDTH / 3
        assert _light_fraction(image) > 0.8
        svg = ET.parse(tmp_path / "figure.svg").getroot()
        assert any(title in "".join(e.itertext()) for e in svg.iter())
        assert (tmp_path / "figure.pdf").read_bytes().startswith(b"%PDF")
        # the plot on screen is as it was: dark, untitled
        assert plot.backgroundBrush().color().name() == theme_colors("dark")["background"]
        assert not plot.getPlotItem().titleLabel.isVisible()
        screen = plot.grab().toImage()
        assert _light_fraction(screen) < 0.2
    finally:
        apply_theme("light")


def test_file_export_figure_writes_the_plot_in_front(qtbot, window, tmp_path):
    window.files.ask_save_path = lambda *args: str(tmp_path / "front.png")
    action = next(a for a in window.menuBar().actions()[0].menu().actions()
                  if a.text() == "Export &figure…")
    action.trigger()
    for kind in ("png", "svg", "pdf"):
        assert (tmp_path / f"front.{kind}").stat().st_size > 0
    svg = ET.parse(tmp_path / "front.svg").getroot()
    assert any(figure_title(window.lab) in "".join(e.itertext()) for e in svg.iter())
