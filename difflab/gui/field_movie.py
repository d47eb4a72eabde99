"""The field view's run as a film: MP4 through imageio's ffmpeg plugin where it is
installed, an animated GIF (imageio with Pillow) otherwise.

Each film frame is the view's picture of one saved frame (its images, colour bars and
arrows, as on the screen) under a strip that names the time.
"""

import warnings
from pathlib import Path

import numpy as np
from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtWidgets import QApplication, QFileDialog

FPS = 20
STRIP = 24  # pixels: the strip above each frame that names its time


def has_ffmpeg() -> bool:
    """Whether imageio can write MP4 (the imageio-ffmpeg package and its ffmpeg)."""
    try:
        import imageio_ffmpeg

        return bool(imageio_ffmpeg.get_ffmpeg_exe())
    except (ImportError, RuntimeError):
        return False


def picture(view) -> np.ndarray:
    """The view's images as drawn now: RGB bytes of shape ``(height, width, 3)``."""
    return _rgb(view.images.grab().toImage())


def film_frame(view, k: int) -> np.ndarray:
    """Frame ``k`` of the run as the film shows it: the view's picture of it (cropped to
    even sizes, as video codecs want) under a strip with its time."""
    view.show_frame(k)
    view.draw()
    shot = view.images.grab().toImage()
    width, height = shot.width() // 2 * 2, (shot.height() + STRIP) // 2 * 2
    frame = QImage(width, height, QImage.Format.Format_RGB888)
    background = view.images.backgroundBrush().color()  # the pictures' own
    frame.fill(background)
    painter = QPainter(frame)
    painter.drawImage(0, STRIP, shot)
    painter.setPen(QColor("black" if background.lightness() > 127 else "white"))
    painter.drawText(QRect(0, 0, width - 8, STRIP), Qt.AlignmentFlag.AlignRight
                     | Qt.AlignmentFlag.AlignVCenter,
                     f"{view.session.model_name}   t = {view.session.ts[k]:.5g}")
    painter.end()
    return _rgb(frame)


def export_movie(view, path, fps: float = FPS) -> Path:
    """Write the frames of the view's run so far as a film at ``fps`` frames per second:
    MP4 for a ``.mp4`` path, else an animated GIF. The view returns to the frame it showed."""
    import imageio.v2 as imageio

    path, shown = Path(path), view.frame
    view.play_button.setChecked(False)
    options = ({"format": "FFMPEG", "fps": fps, "codec": "libx264", "quality": 8,
                "macro_block_size": 2} if path.suffix.lower() == ".mp4"
               else {"mode": "I", "duration": 1000 / fps, "loop": 0})
    try:
        with warnings.catch_warnings():
            # ffmpeg runs in a child process that execs at once: JAX's threads are safe
            warnings.filterwarnings("ignore", "os.fork", RuntimeWarning)
            with imageio.get_writer(path, **options) as writer:
                for k in range(len(view.session.frames)):
                    writer.append_data(film_frame(view, k))
    finally:
        view.show_frame(shown)
    return path


def ask_and_export(view) -> None:
    """Ask where to write the film (MP4 offered where ffmpeg is present) and write it."""
    kinds = (["MP4 video (*.mp4)"] if has_ffmpeg() else []) + ["Animated GIF (*.gif)"]
    suffix = ".mp4" if has_ffmpeg() else ".gif"
    name, _ = QFileDialog.getSaveFileName(view, "Export run as movie",
                                          f"{view.session.model_name}{suffix}", ";;".join(kinds))
    if not name:
        return
    QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
    try:
        written = export_movie(view, name)
    except (OSError, ValueError, RuntimeError) as error:
        view.hovered.emit(f"could not write {name}: {error}")
        return
    finally:
        QApplication.restoreOverrideCursor()
    view.hovered.emit(f"wrote {written} ({len(view.session.frames)} frames)")


def _rgb(image: QImage) -> np.ndarray:
    image = image.convertToFormat(QImage.Format.Format_RGB888)
    rows = np.frombuffer(image.constBits(), np.uint8).reshape(image.height(),
                                                              image.bytesPerLine())
    return rows[:, :3 * image.width()].reshape(image.height(), image.width(), 3).copy()
