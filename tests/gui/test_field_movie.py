"""The run as a film: read back by imageio, one film frame per saved frame, each the
view's picture of it under a strip with its time."""

import imageio.v3 as iio
import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog

import difflab as dl
from difflab.app.fields import FieldSession
from difflab.app.lab import Lab
from difflab.gui.field2d_view import Field2DView
from difflab.gui.field_movie import STRIP, has_ffmpeg, picture

FRAMES = 5


@pytest.fixture(scope="module")
def run():
    """A decaying Taylor-Green vortex on 32 x 32, five frames."""
    model = dl.models.get("navier_stokes")(nu=0.2).with_points((32, 32))
    x, y = (np.asarray(c) for c in model.grid.coordinates)
    ts = np.linspace(0.0, 2.0, FRAMES)
    w = np.stack([2 * np.exp(-0.4 * t) * np.sin(x) * np.sin(y) for t in ts])
    return dl.solvers.FieldTrajectory(ts, {"w": w}, model.grid, "etdrk4", model=model)


@pytest.fixture
def view(qtbot, run):
    session = FieldSession(Lab(), None)
    session.load(run, {"levels": {"w": [-2.0, 2.0]}})  # held: the decay shows
    widget = Field2DView(session)
    qtbot.addWidget(widget)
    widget.resize(800, 450)
    widget.show()
    yield widget
    widget.shutdown()


def pictures(view) -> list[np.ndarray]:
    shots = []
    for k in range(FRAMES):
        view.show_frame(k)
        view.draw()
        shots.append(picture(view).astype(float))
    return shots


@pytest.mark.filterwarnings("ignore:os.fork:RuntimeWarning")  # imageio reads MP4 by ffmpeg
@pytest.mark.parametrize("suffix", [".gif", ".mp4"])
def test_the_movie_has_a_frame_per_saved_frame_drawn_as_the_view(qtbot, view, tmp_path,
                                                                 monkeypatch, suffix):
    if suffix == ".mp4" and not has_ffmpeg():
        pytest.skip("imageio-ffmpeg is not installed")
    shots = pictures(view)
    view.show_frame(2)
    path = tmp_path / f"film{suffix}"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(path), ""))
    qtbot.mouseClick(view.movie_button, Qt.MouseButton.LeftButton)
    film = iio.imread(path, index=None)
    assert film.shape[0] == FRAMES and view.frame == 2  # back where it was
    first = film[0, STRIP:, :, :3].astype(float)  # below the strip with the time

    def differ(shot):
        return np.abs(first - shot[:first.shape[0], :first.shape[1]]).mean()

    assert differ(shots[0]) < 3.0  # GIF's palette: 0.15, MP4's compression: 1.1
    assert differ(shots[-1]) > 10.0  # and not another frame's (about 19)
