"""Names in session files are CF names (a letter first, then letters, digits and ``_``),
and files written with the older names (``param.rho``, ``leaves/0``, ``text.<name>``) still
open, and are saved with the new ones."""

import re
import shutil
from pathlib import Path

import h5py
import numpy as np

import difflab as dl

CF_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
NETCDF_INTERNAL = {"DIMENSION_LIST", "REFERENCE_LIST", "CLASS", "NAME", "_FillValue",
                   "_Netcdf4Dimid", "_Netcdf4Coordinates", "_Encoding", "_nc3_strict"}
OLD_FILE = Path(__file__).parent / "data" / "labels_v1.h5"  # param.<p>, unit.<p>, leaves/0


def _bad_names(path) -> list[str]:
    """Every attribute or member name DiffLab chose that is not a CF name (the names of
    results and models themselves are the user's)."""
    bad = []

    def visit(name, obj):
        parts = name.split("/")
        own = parts[2:] if parts[0] in ("models", "runs", "sweeps", "fits", "sensitivities",
                                        "analyses") else parts
        bad.extend(f"{name}" for part in own if not CF_NAME.fullmatch(part))
        bad.extend(f"{name}@{a}" for a in obj.attrs
                   if a not in NETCDF_INTERNAL and not CF_NAME.fullmatch(a))

    with h5py.File(path, "r") as f:
        bad.extend(f"@{a}" for a in f.attrs if not CF_NAME.fullmatch(a))
        f.visititems(visit)
    return bad


def test_every_name_in_a_session_is_a_cf_name(built):
    assert _bad_names(built["path"]) == []


def test_an_old_layout_file_opens_and_saves_with_cf_names(tmp_path):
    old = dl.open(OLD_FILE)
    sir = old.models["sir"]
    assert sir.parameters == {"N": 1000.0, "beta": 0.3, "gamma": 0.1, "infected0": 1.0}
    assert sir.units == {"beta": "1/day", "gamma": "1/day"}
    assert float(sir.build().beta) == 0.3  # from leaves/0 ... leaves/3
    dl.io.save(tmp_path / "new.h5", old)
    with h5py.File(tmp_path / "new.h5", "r") as f:
        model = f["models/sir"]
        assert model.attrs["param_beta"] == 0.3 and model.attrs["unit_beta"] == b"1/day"
        assert "param.beta" not in model.attrs and sorted(model["leaves"]) == [
            "leaf_0", "leaf_1", "leaf_2", "leaf_3"]
    assert _bad_names(tmp_path / "new.h5") == []
    assert dl.open(tmp_path / "new.h5").models["sir"].parameters == sir.parameters


def test_long_texts_read_under_the_new_and_the_old_name(tmp_path):
    path = tmp_path / "texts.h5"
    shutil.copy(OLD_FILE, path)
    with h5py.File(path, "r+") as f:
        f["runs/run0"].create_dataset("text.note", data=np.bytes_(b"old name"))
        f["runs/run0"].create_dataset("text_remark", data=np.bytes_(b"new name"))
    attrs = dl.open(path).stored("runs", "run0").attrs
    assert attrs["note"] == "old name" and attrs["remark"] == "new name"


def test_a_long_text_is_written_under_a_cf_name(tmp_path):
    config = "#" * (100 << 10)  # over the 64 KiB an attribute keeps
    traj = dl.simulate(dl.models.get("sir")(), 0.2, dt=0.1, solver="rk4")
    with dl.io.write_session(tmp_path / "long.h5", command_line=config) as s:
        s.add_run(traj)
    with h5py.File(tmp_path / "long.h5", "r") as f:
        assert "text_command_line" in f["provenance/p0"]
    assert _bad_names(tmp_path / "long.h5") == []
    assert dl.open(tmp_path / "long.h5").provenance["p0"]["command_line"] == config
