"""A pattern's dominant wavelength, from the peak of its power spectrum, against the
wavelengths a field is made of; and as a sweep's observable spec."""

import numpy as np
import pytest

import difflab as dl
from difflab.solvers._field_sweeps import field_observable


def test_the_dominant_wavelength_is_the_strongest_modes():
    grid = dl.models.Grid([(0.0, 2.0), (0.0, 3.0)], (32, 48))
    x, y = grid.coordinates
    u = 7.0 + np.cos(2 * np.pi * 5 * x / 2.0) + 0.4 * np.sin(2 * np.pi * 2 * y / 3.0)
    assert float(dl.models.dominant_wavelength(u, grid)) == pytest.approx(2.0 / 5, rel=1e-12)
    v = 0.3 * np.cos(2 * np.pi * 5 * x / 2.0) + np.sin(2 * np.pi * (3 * x / 2.0 + 4 * y / 3.0))
    k = 2 * np.pi * np.hypot(3 / 2.0, 4 / 3.0)  # an oblique wave's |k|
    assert float(dl.models.dominant_wavelength(v, grid)) == pytest.approx(2 * np.pi / k,
                                                                           rel=1e-12)


def test_wavelength_is_a_field_sweep_spec():
    grid = dl.models.Grid([(0.0, 1.0)], (64,))
    (x,) = grid.coordinates

    class Frames:  # what the spec reads of a point's run: its fields and grid
        def __getitem__(self, name):
            return np.stack([0 * x, np.cos(2 * np.pi * 8 * x)])

    Frames.grid = grid
    assert float(field_observable("wavelength(u)", ["u"])(Frames())) == pytest.approx(1 / 8)
    with pytest.raises(ValueError, match="wavelength"):
        field_observable("spectrum(u)", ["u"])
