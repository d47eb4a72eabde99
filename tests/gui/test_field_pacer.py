"""Following a streamed run: every frame of each chunk in turn, at the chunks' pace; a
view not shown draws nothing."""

import numpy as np
from PySide6.QtWidgets import QSlider

from difflab.app.fields import FieldSession
from difflab.app.lab import Lab
from difflab.gui.field2d_view import Field2DView
from difflab.gui.field_pacer import FASTEST_MS, SLOWEST_MS, FramePacer

from .conftest import LONG


def test_every_frame_of_each_chunk_is_shown_in_turn_at_their_pace(qtbot):
    slider = QSlider()
    pacer = FramePacer(slider)
    shown = []
    slider.valueChanged.connect(shown.append)
    pacer.set_last(0, show_last=True)
    for end in (4, 8, 12):  # three chunks of four frames, 100 ms apart or more
        pacer.set_last(end, show_last=False)
        pacer.arrived(4)
        qtbot.waitUntil(lambda end=end: slider.value() == end, timeout=2_000)
        qtbot.wait(100)
    assert shown == list(range(1, 13))
    # four frames in at least 100 ms: a frame every 25 ms or more
    assert max(100 // 4, FASTEST_MS) <= pacer.timer.interval() <= SLOWEST_MS


def test_far_behind_it_skips_on_and_off_the_newest_frame_it_stays(qtbot):
    slider = QSlider()
    pacer = FramePacer(slider)
    pacer.set_last(0, show_last=True)
    pacer.set_last(40, show_last=False)  # ten chunks came while the view was busy
    pacer.arrived(4)
    assert slider.value() == 37  # within a chunk of the newest frame, then on by one
    qtbot.waitUntil(lambda: slider.value() == 40, timeout=2_000)
    slider.setValue(5)  # moved back by hand: the view stays there
    assert not pacer.follow
    pacer.set_last(44, show_last=True)
    pacer.arrived(4)
    qtbot.wait(100)
    assert slider.value() == 5 and not pacer.timer.isActive()


def test_a_hidden_view_draws_nothing_until_shown(qtbot):
    session = FieldSession(Lab(), "gray_scott", 32)
    session.t1, session.n_frames = 400.0, 11
    view = Field2DView(session)
    qtbot.addWidget(view)
    shown = []
    view.drawn.connect(shown.append)
    view.run(0)  # never shown yet: as in a tab behind another
    qtbot.waitUntil(lambda: session.complete and view.worker is None, timeout=LONG)
    qtbot.wait(50)
    assert shown == [] and view.frame == 10  # it keeps up, but draws nothing
    view.show()
    qtbot.waitUntil(lambda: shown == [10])
    for panel in view.panels:
        assert np.array_equal(np.asarray(panel.image.image), session.frames[10][panel.name])
    view.shutdown()
