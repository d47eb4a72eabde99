"""User models in the app: a model file runs only when the user agrees, reloads on change,
and equations typed in the editor are checked as they are typed."""

import shutil
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt

import difflab as dl
from difflab.app.trust import TrustStore

from .conftest import LONG

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "models" / "pendulum2.py"


@pytest.mark.slow
def test_a_model_file_runs_only_after_the_prompt_and_reloads_on_change(
        qtbot, make_window, tmp_path):
    window = make_window()
    path = tmp_path / "pendulum2.py"
    shutil.copy(EXAMPLE, path)
    users = window.user_models  # its trust store is in the test's config folder
    assert users.store.path.parent == TrustStore().path.parent
    asked = []
    users.ask_trust = lambda info: asked.append(info.class_names) or "no"
    assert users.load(str(path)) == [] and asked == [("DrivenPendulum",)]
    assert "DrivenPendulum" not in window.lab.user_models  # nothing ran

    users.ask_trust = lambda info: asked.append(info.class_names) or "always"
    assert users.load(str(path)) == ["DrivenPendulum"]
    assert window.lab.model_name == "DrivenPendulum" and len(asked) == 2
    tree = window.model_browser.tree
    user = tree.findItems("user", Qt.MatchFlag.MatchExactly)[0]
    assert user.child(0).text(0) == "DrivenPendulum"
    window.lab.set_param("drive", 1.2)
    qtbot.waitUntil(lambda: window.lab.current is not None
                    and getattr(window.lab.current.model, "drive", None) == 1.2, timeout=LONG)
    cls = window.lab.model_class("DrivenPendulum")
    expected = np.asarray(dl.simulate(cls(drive=1.2), 10.0)["theta"])
    np.testing.assert_allclose(window.lab.current["theta"], expected, atol=1e-12)

    # an edit on disk: new content, not trusted yet: asked again, then reloaded
    path.write_text(path.read_text().replace('    omega_d: float = 2.0 / 3.0',
                                             '    omega_d: float = 0.5\n    phase: float = 0.0'))
    users.reload(str(path))
    assert len(asked) == 3
    assert window.lab.params["drive"] == 1.2 and window.lab.params["phase"] == 0.0
    assert "phase" in window.parameter_panel.rows
    assert window.lab.params["omega_d"] == 2.0 / 3.0  # kept: the name still exists
    assert float(window.lab.model_class("DrivenPendulum")().omega_d) == 0.5

    # a session that uses it reopens in a fresh window: the content is trusted, so the
    # stored text is run again; untrusted content would be shown as data only
    qtbot.waitUntil(lambda: window.lab.current is not None
                    and getattr(window.lab.current.model, "phase", None) == 0.0, timeout=LONG)
    assert window.files._save_to(tmp_path / "user.h5")
    fresh = make_window()
    assert "DrivenPendulum" not in fresh.lab.user_models
    assert fresh.files.open(str(tmp_path / "user.h5"))
    assert fresh.lab.model_name == "DrivenPendulum" and fresh.lab.params["drive"] == 1.2
    TrustStore().revoke(dl.models.file_sha256(path))
    other = make_window()
    assert other.files.open(str(tmp_path / "user.h5"))
    assert "DrivenPendulum" not in other.lab.user_models
    assert "runs no code from a session file" in other.log_panel.plain_text()


@pytest.mark.slow
def test_equation_editor_checks_as_you_type_and_builds_the_model(qtbot, window):
    editor = window.equation_editor
    editor.text.setPlainText("params: k = 1.0\ninit: x = 1, v = 0\ndx/dt = v\ndv/dt = -k*x.real\n")
    assert editor.check() and not editor.use_button.isEnabled()
    assert "line 4" in editor.problems.text()
    editor.text.setPlainText("name: Spring\nparams: k = 2.0 in (0, 10)\ninit: x = 1, v = 0\n"
                             "dx/dt = v\ndv/dt = -k*x\n")
    assert editor.check() == [] and editor.use_button.isEnabled()
    editor.use_button.click()
    assert window.lab.model_name == "Spring" and "k" in window.parameter_panel.rows
    qtbot.waitUntil(lambda: window.lab.current is not None
                    and window.lab.name_of(window.lab.current.model) == "Spring", timeout=LONG)
    ts = window.lab.current.ts
    np.testing.assert_allclose(window.lab.current["x"], np.cos(np.sqrt(2.0) * ts), atol=1e-6)


@pytest.mark.slow
def test_an_equation_model_reopens_with_its_own_text(qtbot, make_window, tmp_path):
    window = make_window()
    editor = window.equation_editor
    text = ("name: Decay\ndescription: first-order decay\nparams: rate = 0.7 in (0, 5)\n"
            "init: n = 2\n\ndn/dt = -rate*n\n")
    editor.text.setPlainText(text)
    assert editor.build() == "Decay"
    qtbot.waitUntil(lambda: window.lab.current is not None
                    and window.lab.name_of(window.lab.current.model) == "Decay", timeout=LONG)
    assert window.files._save_to(tmp_path / "decay.h5")
    fresh = make_window()
    assert fresh.equation_editor.text.toPlainText() != text  # a new window: the template
    assert fresh.files.open(str(tmp_path / "decay.h5"))
    assert fresh.lab.model_name == "Decay"
    assert fresh.equation_editor.text.toPlainText() == text
