"""Fuzzing: mutated session files (bytes and structure) open or raise SessionFileError.

The cases run in a child process with a time limit, so a crash of the process (HDF5 is
C code) or a hang is caught and names the case; the test prints the seed to replay it.
"""

import collections
import os
import subprocess
import sys
import textwrap
import types

import numpy as np
import pytest

import difflab as dl

BYTE_CASES, STRUCTURE_CASES, SEED = 320, 200, 20251121

WORKER = textwrap.dedent("""
    import faulthandler, os, shutil, sys, types
    import numpy as np
    import h5py

    # difflab.io reads files without JAX: load it without the package's __init__, so each
    # case forks a small process (opening a file forks a checking child).
    package = types.ModuleType("difflab")
    package.__path__ = [sys.argv[6]]
    sys.modules["difflab"] = package
    from difflab.io import SessionFileError, open_session

    faulthandler.enable()
    base, folder, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
    n_bytes, n_structure = int(sys.argv[4]), int(sys.argv[5])
    data = open(base, "rb").read()

    def mutate_bytes(rng):
        b = bytearray(data)
        kind = rng.integers(5)
        if kind == 0:  # truncate
            return bytes(b[: rng.integers(0, len(b))])
        hot = min(len(b), 8192) if rng.random() < 0.6 else len(b)  # metadata lives early
        for _ in range(rng.integers(1, 12)):
            i = int(rng.integers(0, hot))
            if kind == 1:
                b[i] = int(rng.integers(256))
            elif kind == 2:
                b[i : i + 64] = bytes(len(b[i : i + 64]))
            elif kind == 3:
                b[i] ^= 1 << int(rng.integers(8))
            else:
                j = int(rng.integers(0, len(b)))
                b[i : i + 16] = b[j : j + 16]
        return bytes(b[: len(data)])

    HOSTILE = [np.int64(-1), np.int64(2**62), np.float64("nan"), np.float64("inf"), "x" * 5000,
               "", np.zeros(0), np.arange(7), np.array(["a", "b"], dtype=object), b"\\xff\\xfe",
               np.int8(3), np.float32(1.5), np.array([[1.0, 2.0]]), "{]", np.bool_(True)]

    def names(f):
        out = []
        f.visit(out.append)
        return out

    def structure_op(f, rng):
        objects = names(f)
        target = objects[rng.integers(len(objects))] if objects else "/"
        op = rng.integers(7)
        if op == 0:
            del f[target]
        elif op == 1:
            obj = f[target]
            keys = list(obj.attrs) or ["model"]
            value = HOSTILE[rng.integers(len(HOSTILE))]
            obj.attrs[keys[rng.integers(len(keys))] if rng.random() < 0.8 else "new"] = value
        elif op == 2 and isinstance(f[target], h5py.Dataset):
            del f[target]
            shape = tuple(int(n) for n in rng.integers(0, 5, size=rng.integers(0, 4)))
            dtype = ["f8", "i1", "u8", "S3", "f2"][rng.integers(5)]
            f.create_dataset(target, data=np.zeros(shape, dtype=dtype))
        elif op == 3 and isinstance(f[target], h5py.Dataset):
            del f[target]
            f.create_dataset(target, shape=(2**33,), dtype="f8", chunks=(4096,), maxshape=(None,))
        elif op == 4:
            f.attrs["difflab_schema_version"] = HOSTILE[rng.integers(len(HOSTILE))]
        elif op == 5 and target != "/":
            del f[target]
            f[target] = h5py.SoftLink("/" + target) if rng.random() < 0.5 else \\
                h5py.ExternalLink("/etc/hostname", "/")
        else:
            other = objects[rng.integers(len(objects))]
            if other != target and not other.startswith(target + "/") \\
                    and not target.startswith(other + "/") and other in f and target in f:
                f.move(target, other + "_moved")

    def check(path, i):
        try:
            session = open_session(path, stall_s=3.0)
            session.summary()
            for result in session.groups():
                for var in result.variables.values():
                    if hasattr(var.data, "read") and var.data.size:
                        var.data[(0,) * var.data.ndim]
            for kind in ("runs", "sweeps", "fits", "sensitivities"):  # the objects, too
                results = getattr(session, kind)
                for j in range(len(results)):
                    obj = results[j]
                    assert results[obj.name] is obj
                    repr(obj)
            print(f"{i} ok", flush=True)
        except SessionFileError as error:
            assert error.path == path and str(error).startswith(path), error
            print(f"{i} refused", flush=True)
        except Exception as error:
            text = " ".join(str(error).split())[:300]
            print(f"{i} OTHER {type(error).__name__}: {text}", flush=True)

    for i in range(n_bytes + n_structure):
        rng = np.random.default_rng([seed, i])
        path = os.path.join(folder, f"case{i % 4}.h5")
        if i < n_bytes:
            with open(path, "wb") as f:
                f.write(mutate_bytes(rng))
        else:
            shutil.copyfile(base, path)
            try:
                with h5py.File(path, "r+") as f:
                    for _ in range(rng.integers(1, 4)):
                        structure_op(f, rng)
            except Exception:
                pass  # an edit h5py refuses: the file is whatever it left
        print(f"{i} start", flush=True)
        check(path, i)
    print("done", flush=True)
""")


def _small_session(path):
    """A valid session with one result of each kind, small so each case opens quickly."""
    model = dl.models.get("lorenz")()
    ts, ys = np.linspace(0.0, 1.0, 5), np.arange(15.0).reshape(5, 3)
    traj = types.SimpleNamespace(ts=ts, ys=ys, result=0, steps=4, state_names=("x", "y", "z"),
                                 wall_time=0.1)
    with dl.io.write_session(path, command_line="fuzz") as s:
        s.add_run(traj, model=model, settings=dict(t1=1.0, n_save=5))
        sweep = s.new_sweep(model=model, parameter_names=["rho"], values=[[1.0], [2.0], [3.0]],
                            time=ts, chunk_size=2, settings=dict(t1=1.0))
        sweep.write_chunk(0, ys=np.stack([ys, ys]), result=[0, 2], steps=[4, 4])
        s.add_fit(model=model, parameter_names=["rho"], loss=[2.0, 1.0], parameters=[[1.0], [2.0]],
                  fitted_model=model.replace(rho=2.0), data=dict(time=ts, y=ys[:, :1],
                                                                 state_names=["x"]))
        s.add_sensitivity(model=model, parameter_names=["rho"], gradient=[0.5])
        s.set_app(plot_layout={"plots": []})
    return path


@pytest.mark.slow
def test_mutated_session_files_open_or_raise_session_file_error(tmp_path):
    base = _small_session(tmp_path / "base.h5")
    args = [sys.executable, "-c", WORKER, str(base), str(tmp_path), str(SEED),
            str(BYTE_CASES), str(STRUCTURE_CASES), os.path.dirname(dl.__file__)]
    try:
        child = subprocess.run(args, capture_output=True, text=True, timeout=240)
        out, err, code = child.stdout, child.stderr, child.returncode
    except subprocess.TimeoutExpired as timeout:
        out, err, code = (timeout.stdout or b"").decode(), "", "timeout"
    lines = out.splitlines()
    started = [line for line in lines if line.endswith(" start")]
    last = started[-1].split()[0] if started else "none"
    assert code == 0 and lines and lines[-1] == "done", (
        f"the child stopped ({code}) at case {last} (seed {SEED}): {err[-2000:]}")
    outcomes = collections.Counter(line.split()[1] for line in lines if not line.endswith(
        (" start", "done")))
    others = [line for line in lines if " OTHER " in line]
    assert not others, others[:5]
    assert outcomes["ok"] + outcomes["refused"] == BYTE_CASES + STRUCTURE_CASES >= 500
    assert outcomes["refused"] > 100 and outcomes["ok"] > 20, outcomes  # both paths exercised
