"""Following a streamed field run frame by frame, at the pace its frames arrive.

A run's frames come in chunks (several frames per program call). Jumping to the newest
frame of each chunk would show one frame in every chunk; instead the scrubber steps
through every frame on a steady timer that spreads the frames not yet shown over the
time the next chunk is expected to take (the time between chunks, smoothed), so the
picture moves as fast as the run computes. It stays within a couple of chunks of the
newest frame: further behind (a GUI slower than the run), it skips on.
"""

import time

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QSlider

FASTEST_MS = 16  # at most about 60 frames a second
SLOWEST_MS = 250
FIRST_MS = 33  # before the second chunk tells the pace
BEHIND_CHUNKS = 2  # frames behind the newest, in chunks, before skipping on


class FramePacer:
    """Moves ``scrubber`` (its value is the frame shown) along a streamed run's frames.

    ``follow``: whether the view follows the run; moving the scrubber off the newest
    frame (by hand, by Play) turns it off, coming back to the newest turns it on.
    """

    def __init__(self, scrubber: QSlider, parent=None):
        self.scrubber = scrubber
        self.follow = True
        self._stepping = False
        self._chunk_at: float | None = None
        self._gap: float | None = None  # seconds between chunks, smoothed
        self.timer = QTimer(parent, interval=FIRST_MS)
        self.timer.timeout.connect(self._step)
        scrubber.valueChanged.connect(self._moved)

    def _moved(self, value: int) -> None:
        if not self._stepping:
            self.follow = value >= self.scrubber.maximum()

    def set_last(self, last: int, show_last: bool) -> None:
        """The frames now end at ``last``; ``show_last``: show it now if following (or
        at once, following or not, for a painted frame: pass ``follow`` True first)."""
        blocked = self.scrubber.blockSignals(True)
        self.scrubber.setRange(0, last)
        if self.scrubber.value() >= last:
            self.follow = True
        if show_last and self.follow:
            self.scrubber.setValue(last)
            self.timer.stop()
        self.scrubber.blockSignals(blocked)

    def arrived(self, new: int) -> None:
        """``new`` frames of the stream just came: step through them at their pace."""
        now = time.perf_counter()
        if self._chunk_at is not None:
            gap = now - self._chunk_at
            self._gap = gap if self._gap is None else 0.5 * (self._gap + gap)
        self._chunk_at = now
        if not self.follow:
            return
        behind = self.scrubber.maximum() - self.scrubber.value()
        if behind > BEHIND_CHUNKS * new:
            self._show(self.scrubber.maximum() - new)
            behind = new
        if self._gap is not None:  # the frames to show, spread over the next chunk's time
            period_ms = 1e3 * self._gap / max(behind, 1)
            self.timer.setInterval(int(min(max(period_ms, FASTEST_MS), SLOWEST_MS)))
        if not self.timer.isActive():
            self._step()
            self.timer.start()

    def stop(self) -> None:
        """Stop stepping (the frames shown stay); the next stream starts its pace afresh."""
        self.timer.stop()
        self._chunk_at = self._gap = None

    def _step(self) -> None:
        if not self.follow or self.scrubber.value() >= self.scrubber.maximum():
            self.timer.stop()
            return
        self._show(self.scrubber.value() + 1)

    def _show(self, k: int) -> None:
        self._stepping = True
        try:
            self.scrubber.setValue(k)
        finally:
            self._stepping = False
