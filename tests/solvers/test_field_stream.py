"""``dl.stream`` on field models: the streamed frames are ``dl.simulate``'s, chunk by chunk,
with only one chunk's frames made at a time."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difflab as dl
from difflab.models import GrayScott, Grid


@pytest.fixture(scope="module")
def spots():
    """Gray-Scott on a 16-point periodic line, fast enough to change in 50 time units."""
    return GrayScott(Du=2e-4, Dv=1e-4, grid=Grid(((0.0, 1.0),), (16,)))


def _joined(chunks):
    ts = np.concatenate([c.ts for c in chunks])
    return ts, {n: np.concatenate([c.ys[n] for c in chunks]) for n in chunks[0].ys}


@pytest.mark.parametrize("solver", ["etdrk4", "rk4"])
def test_streamed_frames_are_simulates_frames(spots, solver):
    """Four frames a chunk, and a last chunk of two: every frame equal to the last bit on
    a CPU; on an accelerator, where XLA may fuse the two programs' sums differently (a
    GPU's fused multiply-adds), to a few units of rounding."""
    traj = dl.simulate(spots, 50.0, dt=0.5, n_save=11, solver=solver)
    chunks = list(dl.stream(spots, 50.0, dt=0.5, n_save=11, solver=solver, chunk_size=4))
    assert [(c.start, len(c.ts)) for c in chunks] == [(0, 1), (1, 4), (5, 4), (9, 2)]
    assert chunks[-1].progress == 1.0 and all(c.result == dl.Result.SUCCESS for c in chunks)
    ts, fields = _joined(chunks)
    np.testing.assert_array_equal(ts, traj.ts)
    exact = jax.default_backend() == "cpu"
    for name in ("u", "v"):
        scale = 0 if exact else 1e-15 * np.abs(traj[name]).max()  # 2e-16 seen on a GPU
        np.testing.assert_allclose(fields[name], traj[name], rtol=0, atol=scale)
    assert np.ptp(fields["v"][-1]) > 1e-3  # the field changed along the way


def test_an_adaptive_stream_agrees_with_simulate_to_its_tolerance(spots):
    traj = dl.simulate(spots, 50.0, n_save=5, solver="tsit5", rtol=1e-8, atol=1e-10)
    chunks = list(dl.stream(spots, 50.0, n_save=5, solver="tsit5", rtol=1e-8, atol=1e-10,
                            chunk_size=2))
    ts, fields = _joined(chunks)
    np.testing.assert_allclose(ts, traj.ts, rtol=1e-14)
    np.testing.assert_allclose(fields["v"], traj["v"], atol=1e-7)


def test_a_run_too_big_to_keep_streams_in_chunks(spots, monkeypatch):
    """Memory for a few frames only: ``simulate`` refuses 4001 frames; the stream runs
    them 10 at a time and stops when the loop is left."""
    big = spots.with_points(4096)
    monkeypatch.setenv("DIFFLAB_MEMORY_LIMIT", "12 MiB")
    with pytest.raises(ValueError, match="frames"):
        dl.simulate(big, 4000.0, dt=1.0, n_save=4001)
    chunks = dl.stream(big, 4000.0, dt=1.0, n_save=4001, chunk_size=10)
    first, second = next(chunks), next(chunks)
    assert first.ys["v"].shape == (1, 4096) and first.ts[0] == 0.0
    chunks.close()
    assert second.ys["v"].shape == (10, 4096) and second.total == 4001
    np.testing.assert_allclose(second.ts, np.arange(1.0, 11.0))


def test_a_diverging_stream_names_the_field_and_ends(spots):
    """A kill rate below zero feeds v without bound: the chunk where a field is first not
    finite ends the stream: with ``throw`` its finite frames come first, then the error;
    without, the chunk is kept whole with its code."""
    bad = spots.replace(k=-0.05, F=0.0)
    chunks, seen = dl.stream(bad, 400.0, dt=1.0, n_save=81, solver="rk4", chunk_size=4), []
    with pytest.raises(dl.SimulationError, match="field 'u' is not finite at t = 35,"):
        seen.extend(chunks)
    np.testing.assert_array_equal(np.concatenate([c.ts for c in seen]), np.arange(0, 35, 5))
    chunks = list(dl.stream(bad, 400.0, dt=1.0, n_save=81, solver="rk4", chunk_size=2,
                            throw=False))
    assert [c.start for c in chunks] == [0, 1, 3, 5, 7]
    assert chunks[-1].result == dl.Result.DIVERGED
    assert all(jnp.isfinite(c.ys["u"]).all() for c in chunks[:-1])
