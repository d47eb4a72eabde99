"""A user model's ``path`` in a session file: relative to the session file's folder, never
an absolute path; read back as the file next to the session."""

import h5py

import difflab as dl

from .conftest import USER_MODEL, load_user_model


def _saved_with_model(model_file, session):
    """A short run of the user model in ``model_file``, saved to ``session``."""
    model_file.parent.mkdir(parents=True, exist_ok=True)
    model_file.write_text(USER_MODEL)
    decay = load_user_model(model_file)(k=0.25)
    dl.io.save(session, dl.simulate(decay, t1=1.0, n_save=5), name="user")
    with h5py.File(session) as f:
        (key,) = f["models"]
        attrs = {k: dl.io._h5.text(v) for k, v in f["models"][key].attrs.items()}
    return attrs, dl.open(session).stored("runs", "user").model


def test_a_model_file_elsewhere_keeps_its_name_only(tmp_path):
    elsewhere, folder = tmp_path / "models_elsewhere", tmp_path / "work"
    folder.mkdir()
    attrs, record = _saved_with_model(elsewhere / "decay_model.py", folder / "s.h5")
    assert str(elsewhere).encode() not in (folder / "s.h5").read_bytes()
    assert str(tmp_path).encode() not in (folder / "s.h5").read_bytes()
    assert attrs["path"] == "decay_model.py" and "outside" in attrs["path_note"]
    assert record.path == str(folder / "decay_model.py")  # looked for next to the session
    (folder / "decay_model.py").write_text(USER_MODEL)
    assert float(record.build(trust=True).k) == 0.25


def test_a_model_file_under_the_session_folder_is_stored_relative(tmp_path):
    attrs, record = _saved_with_model(tmp_path / "models" / "decay_model.py", tmp_path / "s.h5")
    assert attrs["path"] == "models/decay_model.py" and "path_note" not in attrs
    assert str(tmp_path).encode() not in (tmp_path / "s.h5").read_bytes()
    assert record.path == str(tmp_path / "models" / "decay_model.py")


def test_an_absolute_path_of_an_older_file_is_read_as_it_is(tmp_path):
    model_file = tmp_path / "m" / "decay_model.py"
    _saved_with_model(model_file, tmp_path / "s.h5")
    with h5py.File(tmp_path / "s.h5", "a") as f:
        (group,) = f["models"].values()
        group.attrs["path"] = str(model_file)
    assert dl.open(tmp_path / "s.h5").stored("runs", "user").model.path == str(model_file)



def _stored_path(session) -> tuple:
    with h5py.File(session) as f:
        (group,) = f["models"].values()
        return dl.io._h5.text(group.attrs["path"]), "path_note" in group.attrs


def test_a_copy_into_another_folder_names_the_same_model_file(tmp_path):
    model_file = tmp_path / "a" / "models" / "decay_model.py"
    _saved_with_model(model_file, tmp_path / "a" / "s.h5")
    with dl.io.write_session(tmp_path / "s.h5", base=tmp_path / "a" / "s.h5"):
        pass  # Save As one folder up
    assert _stored_path(tmp_path / "s.h5") == ("a/models/decay_model.py", False)
    assert dl.open(tmp_path / "s.h5").stored("runs", "user").model.path == str(model_file)
    aside = tmp_path / "b" / "s.h5"
    aside.parent.mkdir()
    with dl.io.write_session(aside, base=tmp_path / "a" / "s.h5"):
        pass  # beside it: the name alone
    assert _stored_path(aside) == ("decay_model.py", True)
