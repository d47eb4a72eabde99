"""Render the SVG icon to the PNG sizes desktops look for: linux/icons/<N>x<N>.png.

    QT_QPA_PLATFORM=offscreen python packaging/render_icons.py
"""

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

SIZES = (16, 32, 48, 64, 128, 256, 512)
HERE = Path(__file__).parent / "linux"


def main() -> None:
    app = QGuiApplication([])  # noqa: F841  (Qt needs an application to paint)
    renderer = QSvgRenderer(str(HERE / "io.github.difflab.DiffLab.svg"))
    (HERE / "icons").mkdir(exist_ok=True)
    for size in SIZES:
        image = QImage(size, size, QImage.Format.Format_ARGB32)
        image.fill(Qt.GlobalColor.transparent)
        with_painter = QPainter(image)
        renderer.render(with_painter)
        with_painter.end()
        image.save(str(HERE / "icons" / f"{size}x{size}.png"))


if __name__ == "__main__":
    main()
