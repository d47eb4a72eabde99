"""How fast DiffLab's sweep writer stores results, against a plain h5py write of the same arrays.

    python benchmarks/hdf5_throughput.py [--points 8192] [--times 1001] [--states 3]
                                         [--chunk 256] [--repeat 5] [--fsync] [--dir DIR]

Both write the same (points, times, states) float64 array, its result codes and steps:

- plain h5py: one contiguous dataset, written in large blocks of 1024 points
  (the practical limit of the file system and HDF5);
- DiffLab: ``stream_session`` + ``SweepWriter``, the writer ``difflab sweep`` uses:
  chunked datasets with dimension scales, SWMR mode, one ``write_chunk`` per chunk of
  points with its two flushes and its ``chunk_done`` marker.

Two rates are printed for each, best of ``--repeat`` runs, interleaved:

- results: the bytes of results over the time spent writing them (DiffLab: the
  ``write_chunk`` loop; plain: the block writes), the rate a long sweep streams at;
- end to end: from creating the file to closing it (``--fsync``: to the data being on
  disk), including DiffLab's session metadata (models, provenance, scales).

The target is a results ratio of at least 0.8.
"""

import argparse
import os
import tempfile
import time

import numpy as np


def _plain(path, ys, result, steps, block=1024):
    import h5py

    start = time.perf_counter()
    with h5py.File(path, "w") as f:
        y = f.create_dataset("y", shape=ys.shape, dtype=ys.dtype)
        begin = time.perf_counter()
        for first in range(0, len(ys), block):
            y[first : first + block] = ys[first : first + block]
        f.create_dataset("result", data=result)
        f.create_dataset("steps", data=steps)
        results = time.perf_counter() - begin
    return results, start


def _difflab(path, ys, result, steps, chunk, model, values, ts):
    import difflab as dl

    start = time.perf_counter()
    with dl.io.stream_session(path) as session:
        writer = session.new_sweep(model=model, parameter_names=["rho"], values=values,
                                   time=ts, chunk_size=chunk, settings={"t1": float(ts[-1])})
        session.start_swmr()
        begin = time.perf_counter()
        for c in writer.pending_chunks():
            sl = writer.points(c)
            writer.write_chunk(c, ys=ys[sl], result=result[sl], steps=steps[sl])
        results = time.perf_counter() - begin
        writer.finish()
    return results, start


def _timed(write, path, fsync: bool) -> tuple[float, float]:
    """(seconds writing results, seconds end to end)."""
    if os.path.exists(path):
        os.remove(path)
    if hasattr(os, "sync"):
        os.sync()  # start clean: no writer pays for the other's dirty pages
    results, start = write(path)
    if fsync:
        with open(path, "rb+") as f:
            os.fsync(f.fileno())
    return results, time.perf_counter() - start


def main(argv=None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--points", type=int, default=8192)
    parser.add_argument("--times", type=int, default=1001)
    parser.add_argument("--states", type=int, default=3)
    parser.add_argument("--chunk", type=int, default=256, help="points per sweep chunk")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--fsync", action="store_true", help="include fsync in end to end")
    parser.add_argument("--dir", default=None, help="where to write (default: a temp dir)")
    args = parser.parse_args(argv)

    import difflab as dl

    rng = np.random.default_rng(0)
    ys = rng.standard_normal((args.points, args.times, args.states))
    result = np.zeros(args.points, dtype=np.int8)
    steps = np.full(args.points, 1000, dtype=np.int64)
    values = np.linspace(0.0, 50.0, args.points)[:, None]
    ts = np.linspace(0.0, 10.0, args.times)
    model = dl.models.get("lorenz")()
    megabytes = (ys.nbytes + result.nbytes + steps.nbytes) / 1e6

    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        plain_path, ours_path = os.path.join(tmp, "plain.h5"), os.path.join(tmp, "difflab.h5")
        plain, ours = [], []
        runs = [(plain, plain_path, lambda p: _plain(p, ys, result, steps)),
                (ours, ours_path, lambda p: _difflab(p, ys, result, steps, args.chunk, model,
                                                     values, ts))]
        for i in range(args.repeat):  # interleaved, in turns, so both see the same machine
            for times, path, write in runs[:: 1 if i % 2 else -1]:
                times.append(_timed(write, path, args.fsync))
        check = dl.open(ours_path).sweeps[0]
        assert check.complete and np.array_equal(check.y[-3:], ys[-3:])

    rate = lambda runs, i: megabytes / min(r[i] for r in runs)  # noqa: E731
    print(f"sweep results: {args.points} points x {args.times} times x {args.states} states "
          f"= {megabytes:.0f} MB, chunks of {args.chunk} points, best of {args.repeat}"
          f"{', end to end with fsync' if args.fsync else ''}")
    print(f"{'':34}{'results':>12}{'end to end':>14}")
    print(f"{'plain h5py, blocks of 1024 points':34}{rate(plain, 0):8.0f} MB/s"
          f"{rate(plain, 1):8.0f} MB/s")
    print(f"{'DiffLab SweepWriter (SWMR)':34}{rate(ours, 0):8.0f} MB/s{rate(ours, 1):8.0f} MB/s")
    ratio = rate(ours, 0) / rate(plain, 0)
    print(f"ratio: {ratio:.2f}x of plain h5py for the results (target >= 0.8x), "
          f"{rate(ours, 1) / rate(plain, 1):.2f}x end to end")
    return ratio


if __name__ == "__main__":
    main()
