"""What the app's plots show: saved with a session as its ``/app`` ``plot_layout``."""

import dataclasses
import math

SCALE_TOLERANCE = 0.01


@dataclasses.dataclass
class PlotLayout:
    """What the plots show: the time-series states, the phase-portrait axes, the front view,
    the three states of the 3-D phase view (none for a model with fewer)."""

    time_states: tuple[str, ...] = ()
    phase_x: str = ""
    phase_y: str = ""
    view: str = "time"
    phase3d: tuple[str, ...] = ()

    @classmethod
    def for_states(cls, states, view: str = "time") -> "PlotLayout":
        states = tuple(states)
        y = states[1] if len(states) > 1 else states[0]
        return cls(states[:4], states[0], y, view, states[:3] if len(states) >= 3 else ())

    def fitted_to(self, states) -> "PlotLayout":
        """This layout where it names existing states, the default where it does not."""
        states = tuple(states)
        default = PlotLayout.for_states(states, self.view)
        kept = tuple(s for s in self.time_states if s in states)
        return PlotLayout(
            kept or default.time_states,
            self.phase_x if self.phase_x in states else default.phase_x,
            self.phase_y if self.phase_y in states else default.phase_y,
            self.view,
            self.phase3d if len(self.phase3d) == 3 and set(self.phase3d) <= set(states)
            else default.phase3d,
        )

    def to_json(self) -> dict:
        return {"time_states": list(self.time_states), "phase": [self.phase_x, self.phase_y],
                "view": self.view, "phase3d": list(self.phase3d)}

    @classmethod
    def from_json(cls, data: dict) -> "PlotLayout":
        phase = list(data.get("phase") or ["", ""]) + ["", ""]
        return cls(tuple(str(s) for s in data.get("time_states", ())), str(phase[0]),
                   str(phase[1]), str(data.get("view", "time")),
                   tuple(str(s) for s in data.get("phase3d") or ()))


def same_scale(saved, current: float) -> bool:
    """Whether a window layout saved at screen scale ``saved`` (a number or its text, as
    settings files give it back; ``None`` for a layout saved before scales were kept)
    may be restored at scale ``current``: window sizes and dock widths are in pixels, so
    one laid out at 1.5x does not fit a 1x screen."""
    try:
        value = float(saved)
    except (TypeError, ValueError):
        return saved is None
    return math.isfinite(value) and abs(value - current) <= SCALE_TOLERANCE * current


def fitted(rect: tuple[int, int, int, int], area: tuple[int, int, int, int],
           frame: tuple[int, int] = (0, 0)) -> tuple[int, int, int, int]:
    """A window's ``(x, y, width, height)`` made to fit in a screen's available ``area``
    (same form), ``frame`` the extra width and height of its decorations: no larger than
    the area, moved inside it where it reaches past an edge."""
    x, y, w, h = rect
    ax, ay, aw, ah = area
    w, h = min(w, aw - frame[0]), min(h, ah - frame[1])
    x = min(max(x, ax), ax + aw - w - frame[0])
    y = min(max(y, ay), ay + ah - h - frame[1])
    return x, y, max(w, 1), max(h, 1)
