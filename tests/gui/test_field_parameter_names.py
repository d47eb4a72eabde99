"""Long parameter names in the Fields tab's parameter panel: shown whole where the row
has room (the description gives way first), cut with "…" only where it has not, and
always whole in the name's text and tooltip; no row runs past the panel."""

import dataclasses

import pytest

from difflab.app.fields import FieldSession
from difflab.app.lab import Lab
from difflab.gui.field2d_view import Field2DView
from difflab.gui.parameters import ParameterRow


@pytest.fixture
def view(qtbot):
    widget = Field2DView(FieldSession(Lab(), "navier_stokes", 16))
    qtbot.addWidget(widget)
    widget.resize(1100, 700)
    widget.show()
    qtbot.waitExposed(widget)
    yield widget
    widget.shutdown()


def test_a_long_name_is_shown_whole_and_the_row_fits_the_panel(qtbot, view):
    panel = view.parameters
    row = panel.rows["forcing_wavenumber"]
    name = row.title
    qtbot.waitUntil(lambda: name.width() > 0 and row.spin.width() > 0)
    assert name.text() == "forcing_wavenumber"
    assert name.toolTip().startswith("forcing_wavenumber:")
    assert name.width() >= name.fontMetrics().horizontalAdvance(name.text())
    assert name.shown_text() == "forcing_wavenumber"
    viewport = row.parentWidget().parentWidget()  # the scroll area's viewport
    for widget in (name, row.spin, row.range_button):  # nothing past the panel's edge
        right = widget.mapTo(viewport, widget.rect().topRight()).x()
        assert right <= viewport.width()


def test_a_name_cut_for_room_keeps_its_whole_text_and_tooltip(qtbot, view):
    long = "forcing_wavenumber_" * 6  # wider than a row at its narrowest
    spec = dataclasses.replace(view.session.specs["forcing_wavenumber"], name=long)
    row = ParameterRow(spec, 4.0)
    qtbot.addWidget(row)
    row.resize(row.minimumSizeHint().width(), 80)
    row.show()
    qtbot.waitUntil(lambda: row.title.isVisible() and 0 < row.title.width()
                    < row.title.fontMetrics().horizontalAdvance(long))
    shown = row.title.shown_text()
    assert shown.endswith("…") and long.startswith(shown[:-1]) and len(shown) > 3
    assert row.title.text() == long and row.title.toolTip().startswith(long + ":")
