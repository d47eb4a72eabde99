"""Branch points of cycles: a Z2-symmetric pitchfork of cycles known in closed form,
detected, switched at and followed through a fold of cycles (which must not count as a
branch point too); and a Neimark-Sacker point that says its torus is out of reach."""

import jax.numpy as jnp
import numpy as np
import pytest

import difflab as dl


class SymmetricPitchfork(dl.Model):
    """The unit circle ``r' = r (1 - r^2)`` turning at ``1 + a^2`` carries ``a`` with
    ``a' = a (s + a^2 - a^4 + 1 - r^2)``, symmetric under ``a -> -a``. The symmetric cycle
    ``a = 0`` (period ``2 pi``, multipliers ``1, e^{-4 pi}, e^{2 pi s}``) has a
    subcritical pitchfork of cycles at ``s = 0``: the cycles ``s = a^4 - a^2`` of period
    ``2 pi / (1 + a^2)`` leave it, with the multiplier
    ``exp(4 pi a^2 (1 - 2 a^2) / (1 + a^2))``, and fold at ``a^2 = 1/2``, ``s = -1/4``."""

    s: float = dl.param(-0.5, bounds=(-5.0, 5.0))
    state_names = ("x", "y", "a")

    def vector_field(self, t, y):
        x, w, a = y
        r2, turn = x**2 + w**2, 1 + a**2
        return jnp.stack([x * (1 - r2) - w * turn, w * (1 - r2) + x * turn,
                          a * (self.s + a**2 - a**4 + 1 - r2)])

    def initial_state(self):
        return jnp.array([1.0, 0.0, 0.0])


@pytest.fixture(scope="module")
def branches():
    model = SymmetricPitchfork()
    symmetric = dl.periodic_orbits(model, "s", ([1.0, 0.0, 0.0], 2 * np.pi), -0.5, 0.5)
    (point,) = symmetric.special
    return model, symmetric, dl.periodic_orbits(model, "s", point, -0.5, 0.5)


def test_the_pitchfork_of_cycles_is_found_where_a_second_multiplier_is_one(branches):
    _, symmetric, _ = branches
    (point,) = symmetric.special
    assert point.kind == "branch-point-of-cycles" and "other branch" in point.note
    assert point.value == pytest.approx(0.0, abs=1e-8)
    assert point.period == pytest.approx(2 * np.pi, rel=1e-8)
    np.testing.assert_allclose(np.sort(point.multipliers.real), [np.exp(-4 * np.pi), 1, 1],
                               atol=1e-8)
    assert symmetric.status == "left the range at 0.5"
    np.testing.assert_allclose(symmetric.periods, 2 * np.pi, rtol=1e-8)
    s, mu = symmetric.values, symmetric.multipliers
    expected = np.sort(np.stack([np.ones_like(s), np.full_like(s, np.exp(-4 * np.pi)),
                                 np.exp(2 * np.pi * s)], 1), axis=1)
    np.testing.assert_allclose(np.sort(mu.real, axis=1), expected, rtol=1e-6, atol=1e-9)
    assert (symmetric.stable == (s < 0)).all()


def test_the_other_branch_breaks_the_symmetry_and_folds_where_the_closed_form_does(branches):
    _, symmetric, other = branches
    # the symmetric orbits are their own mirror images (a = 0), the others are not
    np.testing.assert_allclose(symmetric.maxima[:, 2], 0.0, atol=1e-10)
    np.testing.assert_allclose(symmetric.minima[:, 2], 0.0, atol=1e-10)
    a = other.states[1:, 2]
    assert np.all(np.abs(a) > 1e-3) and len(set(np.sign(a))) == 1
    np.testing.assert_allclose(other.minima[1:, 2], a, rtol=1e-6)  # a constant on each orbit
    assert other.values[0] == pytest.approx(0.0, abs=1e-8) and other.values[-1] == 0.5
    np.testing.assert_allclose(other.values[1:], a**4 - a**2, atol=1e-8)
    np.testing.assert_allclose(other.periods[1:], 2 * np.pi / (1 + a**2), rtol=1e-6)
    mu = np.sort(other.multipliers[1:].real, axis=1)
    a2 = a**2
    expected = np.sort(np.stack([np.ones_like(a2), np.exp(-4 * np.pi / (1 + a2)),
                                 np.exp(4 * np.pi * a2 * (1 - 2 * a2) / (1 + a2))], 1), axis=1)
    np.testing.assert_allclose(mu, expected, rtol=1e-5, atol=1e-9)
    # the fold of cycles is one special point, never also a branch point
    (fold,) = other.special
    assert fold.kind == "fold-of-cycles" and fold.value == pytest.approx(-0.25, abs=1e-8)
    assert fold.period == pytest.approx(2 * np.pi / 1.5, rel=1e-7)
    assert other.status == "left the range at 0.5"


def test_the_other_way_from_the_branch_point_is_the_mirror_branch(branches):
    model, symmetric, other = branches
    mirror = dl.periodic_orbits(model, "s", symmetric.special[0], -0.5, 0.5, direction=-1,
                                max_points=6)
    assert np.all(np.sign(mirror.states[1:, 2]) == -np.sign(other.states[1, 2]))
    np.testing.assert_allclose(mirror.values[1:], mirror.states[1:, 2] ** 4
                               - mirror.states[1:, 2] ** 2, atol=1e-8)


def test_a_branch_point_read_back_from_a_session_starts_the_same_branch(branches, tmp_path):
    model, symmetric, other = branches
    dl.io.save(tmp_path / "cycles.h5", symmetric)
    (back,) = dl.open(tmp_path / "cycles.h5").analyses["periodic_orbits0"].special
    np.testing.assert_array_equal(back.tangent, symmetric.special[0].tangent)
    again = dl.periodic_orbits(model, "s", back, -0.5, 0.5, max_points=4)
    np.testing.assert_allclose(again.states, other.states[:4], atol=1e-9)


class TransverseRotation(dl.Model):
    """The unit circle (``theta' = 1``, period ``2 pi``) with ``rho = r^2 - 1`` and ``z``
    turning about it at ``nu`` and growing at ``s - 1``: the multipliers
    ``exp(2 pi (s - 1 +- i nu))`` cross the unit circle at ``s = 1`` (Neimark-Sacker)."""

    s: float = dl.param(0.8, bounds=(0.0, 2.0))
    nu: float = 0.7
    state_names = ("x", "y", "z")

    def vector_field(self, t, y):
        x, w, z = y
        rho = x**2 + w**2 - 1
        g = self.s - 1
        h = (g * rho - self.nu * z) / 2  # (r^2)' = 2 r^2 h
        return jnp.stack([x * h - w, w * h + x, self.nu * rho + g * z])

    def initial_state(self):
        return jnp.array([1.0, 0.0, 0.0])


@pytest.mark.slow  # a model of its own to compile
def test_a_neimark_sacker_point_says_its_torus_is_out_of_reach():
    model = TransverseRotation()
    orbits = dl.periodic_orbits(model, "s", ([1.0, 0.0, 0.0], 2 * np.pi), 0.8, 1.2)
    (torus,) = orbits.special
    assert torus.kind == "neimark-sacker" and torus.value == pytest.approx(1.0, abs=1e-8)
    pair = torus.multipliers[np.abs(torus.multipliers.imag) > 1e-3]
    turn = np.angle(np.exp(2j * np.pi * 0.7))
    np.testing.assert_allclose(np.abs(pair), 1.0, atol=1e-7)
    np.testing.assert_allclose(np.sort(np.angle(pair)), [-abs(turn), abs(turn)], atol=1e-7)
    assert "torus is born" in torus.note and "out of reach" in torus.note
    with pytest.raises(ValueError, match="out of reach") as error:
        dl.periodic_orbits(model, "s", torus, 0.8, 1.2)
    assert torus.note in str(error.value) and "\n" not in str(error.value)
