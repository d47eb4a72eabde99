"""Arrows of a 2-D field model's velocity over its images, and the box that shows them."""

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QCheckBox

from ..app.field_frames import DIVERGING_MAP
from ..app.field_vectors import arrow_lines, frame_velocity, velocity_source

#: arrows over a diverging map (white in the middle) are dark, over the others light
PENS = {True: pg.mkPen((25, 25, 25), width=1.5), False: pg.mkPen("w", width=1.5)}


class FieldArrows:
    """The velocity of the frame shown as arrows over each image (one line item each),
    on a coarse grid, while ``box`` (Arrows) is ticked; ``redraw()`` is called when it
    is toggled. The box is enabled only for a model with a velocity."""

    def __init__(self, redraw):
        self.box = QCheckBox("Arrows (velocity)")
        self.box.setObjectName("field_arrows")
        self.box.toggled.connect(lambda _: redraw())
        self.items: list[tuple[object, pg.PlotCurveItem]] = []
        self.available = False

    def attach(self, panels, model) -> None:
        """An arrow item over each panel's image (``panels`` empty: none) of ``model``."""
        source = velocity_source(model) if panels else None
        self.box.setEnabled(source is not None)
        self.box.setToolTip(f"Draw the {source} as arrows" if source else
                            "This model has no velocity to draw (2-D models only)")
        self.available = source is not None
        self.items = []
        for panel in panels:
            item = pg.PlotCurveItem(connect="pairs", antialias=True)
            item.setZValue(10)  # over the image
            panel.plot_item.addItem(item, ignoreBounds=True)
            self.items.append((panel, item))

    @property
    def shown(self) -> bool:
        return self.available and self.box.isChecked()

    def draw(self, session, frame: dict) -> None:
        """The arrows of ``frame``, a frame of the field ``session``'s model."""
        x = y = np.zeros(0)
        if self.shown:
            model = session.model
            x, y = arrow_lines(model.grid, *frame_velocity(model, frame))
        for panel, item in self.items:
            item.setPen(PENS[panel.map_name == DIVERGING_MAP])
            item.setData(x, y)
            item.setVisible(bool(x.size))
