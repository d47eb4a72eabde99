"""A field sweep in chunks sharded over devices: each point against diffusion's closed
form, and the chunked, sharded sweep equal to one unchunked program on one device."""

import jax
import numpy as np
import pytest

import difflab as dl
from difflab.models import Diffusion, Grid
from difflab.solvers._field_sweeps import chunk_points

T1 = 0.5


@pytest.fixture(scope="module")
def square():
    """``sin(2 pi x) sin(2 pi y)`` on 8x8 points of the unit square: it decays as
    ``exp(-8 pi^2 D t)``."""
    return Diffusion(grid=Grid(((0.0, 1.0), (0.0, 1.0)), (8, 8)))


@pytest.fixture(scope="module")
def space():
    return dl.grid({"D": np.linspace(0.005, 0.05, 5)})


@pytest.fixture(scope="module")
def whole(square, space):
    return dl.sweep(square, space, T1, dt=0.05, n_save=2, devices=1,
                    observables=["max(u)", "norm(u)"])


def test_every_point_decays_as_the_closed_form(square, space, whole):
    D = space["D"]
    decay = np.exp(-8 * np.pi**2 * D * T1)
    exact = np.stack([np.asarray(square.replace(D=d).exact(T1)["u"]) for d in D])
    np.testing.assert_allclose(whole.final["u"], exact, atol=1e-12)
    u0 = np.asarray(square.initial_fields()["u"])
    np.testing.assert_allclose(whole["max_u"], decay * u0.max(), rtol=1e-12)
    np.testing.assert_allclose(whole["norm_u"], decay * 0.5, rtol=1e-12)  # ||sin sin||_2 = 1/2
    assert (whole.result == 0).all()


@pytest.mark.skipif(len(jax.devices()) < 2, reason="needs two devices (a CPU gets eight in "
                    "tests/conftest.py; an accelerator may have one)")
def test_chunks_sharded_over_devices_equal_one_program(square, space, whole):
    seen = []
    chunked = dl.sweep(square, space, T1, dt=0.05, n_save=2, devices=2, chunk_size=2,
                       observables=["max(u)", "norm(u)"], progress=seen.append)
    assert [(c.start, c.stop) for c in seen] == [(0, 2), (2, 4), (4, 5)]
    np.testing.assert_array_equal(chunked.final["u"], whole.final["u"])
    for name in ("max_u", "norm_u"):
        np.testing.assert_array_equal(chunked[name], whole[name])
    np.testing.assert_array_equal(chunked.result, whole.result)


def test_ctrl_c_keeps_the_points_of_the_chunks_done(square, space, whole):
    """Ctrl-C lost every point a sweep had done; the sweep now stops with the chunks done
    in ``partial``, the points after them marked not run."""

    def stop_after_two(chunk):
        if chunk.stop >= 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt) as caught:
        dl.sweep(square, space, T1, dt=0.05, n_save=2, devices=1, chunk_size=2,
                 observables=["max(u)", "norm(u)"], progress=stop_after_two)
    assert isinstance(caught.value, dl.solvers.FieldSweepInterrupted)
    partial = caught.value.partial
    assert "after 2 of 5 points" in str(caught.value) and not partial.complete and whole.complete
    np.testing.assert_array_equal(partial.result, [0, 0, -1, -1, -1])
    np.testing.assert_array_equal(partial.final["u"][:2], whole.final["u"][:2])
    np.testing.assert_array_equal(partial["max_u"][:2], whole["max_u"][:2])
    assert np.isnan(partial.final["u"][2:]).all() and np.isnan(partial["norm_u"][2:]).all()


@pytest.mark.skipif(jax.devices()[0].platform != "cpu", reason="a CPU's rule")
def test_a_cpu_sweep_of_many_points_runs_in_chunks_that_show_its_progress(square):
    assert chunk_points(square, 11, 64, 1) == 8
    assert chunk_points(square, 11, 64, 4) == 8  # whole rows per device
    assert chunk_points(square, 11, 3, 1) == 1


def test_points_per_chunk_follow_the_memory_a_point_needs(square):
    point = 8 * 64 * (11 + 24)  # a point's frames and working copies, in bytes
    assert chunk_points(square, 11, 1000, 1, memory_budget=10 * point) == 10
    assert chunk_points(square, 11, 1000, 4, chunk_size=5) == 8  # whole rows per device
    assert chunk_points(square, 11, 3, 2, chunk_size=8) == 4  # no more than the sweep, padded


def test_a_sweep_too_big_for_one_program_runs_in_chunks(square):
    """A budget of one point's memory per device: the sweep runs in chunks of one point
    per device and gets every point."""
    n = len(jax.devices())
    budget = 8 * 64 * (2 + 24) * n
    seen = []
    res = dl.sweep(square, {"D": np.linspace(0.01, 0.02, 9)}, 0.1, dt=0.05, n_save=2,
                   memory_budget=budget, observables={"mean": "mean(u)"},
                   progress=seen.append)
    assert [c.stop - c.start for c in seen] == [min(n, 9 - s) for s in range(0, 9, n)]
    np.testing.assert_allclose(res["mean"], 0.0, atol=1e-13)
    assert res.final["u"].shape == (9, 8, 8)
