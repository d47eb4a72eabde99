"""Python model files: loading, references, errors with file and line, trust, reload."""

import hashlib
import textwrap
from pathlib import Path

import jax
import numpy as np
import pytest

import difflab as dl
from difflab.models import (ModelFileError, ModelSource, UntrustedModelError, carry_parameters,
                            from_source, load_file, peek_file, resolve, source_of)

PENDULUM = '''\
import jax.numpy as jnp
import difflab as dl

{marker}

class MyPendulum(dl.Model):
    """A damped pendulum."""

    g: float = dl.param(9.81, bounds=(0.1, 30.0), unit="m/s^2", doc="gravity")
    c: float = 0.1
    state_names = ("theta", "omega")

    def vector_field(self, t, y):
        theta, omega = y
        return jnp.stack([omega, -self.g * jnp.sin(theta) - self.c * omega])

    def initial_state(self):
        return jnp.array([1.0, 0.0])
'''


def _write(tmp_path, name, text, marker=""):
    path = tmp_path / name
    path.write_text(PENDULUM.format(marker=marker) if text is None else textwrap.dedent(text))
    return path


def _marker_code(path):
    """Module-level code that leaves a file behind when the model file runs."""
    return f"open({str(path)!r}, 'a').write('ran\\n')"


@pytest.mark.slow
def test_load_file_returns_the_classes_and_the_sha256_of_what_ran(tmp_path):
    path = _write(tmp_path, "pendulum2.py", None)
    file = load_file(path)
    assert list(file.classes) == ["MyPendulum"] and file.path == str(path)
    assert file.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    cls = file.get("MyPendulum")
    assert file.get() is cls and file["MyPendulum"] is cls and load_file(path) is file
    assert cls.parameter_specs()["g"].unit == "m/s^2"
    model = cls(c=0.0)
    traj = dl.simulate(model, 1.0, dt=1e-3)
    assert traj.state_names == ("theta", "omega") and traj.ok
    grads = jax.grad(lambda m: dl.simulate(m, 1.0, dt=1e-2).final[0])(model)
    assert np.isfinite(grads.g) and grads.g != 0


def test_references_name_a_file_and_a_class(tmp_path):
    path = _write(tmp_path, "pendulum2.py", None)
    assert resolve(f"{path}:MyPendulum") is resolve(str(path)) is load_file(path).get()
    assert resolve("pendulum2.py:MyPendulum", base_dir=tmp_path) is load_file(path).get()
    assert resolve("lorenz") is dl.models.get("lorenz")
    eqn = tmp_path / "spring.eqn"
    eqn.write_text("params: k = 1\ninit: x = 1, v = 0\ndx/dt = v\ndv/dt = -k*x\n")
    assert resolve(str(eqn)).__name__ == "Spring"
    two = _write(tmp_path, "two.py", """\
        import jax.numpy as jnp
        import difflab as dl

        class AbstractBase(dl.Model):
            pass

        class A(AbstractBase):
            state_names = ("x",)
            def vector_field(self, t, y):
                return -y
            def initial_state(self):
                return jnp.ones(1)

        class B(A):
            k: float = 2.0
        """)
    assert list(load_file(two).classes) == ["A", "B"]
    with pytest.raises(ModelFileError, match="defines several models .*A, B.*two.py:CLASS"):
        resolve(str(two))
    with pytest.raises(ModelFileError, match=r"defines no model class 'C' \(it defines A, B\)"):
        resolve(f"{two}:C")


ERRORS = {
    "syntax": ("def f(:\n", 1, "SyntaxError"),
    "missing_method": ("""\
        import difflab as dl

        class NoField(dl.Model):
            state_names = ("x",)
            def initial_state(self):
                return None
        """, 3, "NoField does not define vector_field"),
    "wrong_shape": ("""\
        import jax.numpy as jnp
        import difflab as dl

        class Bad(dl.Model):
            state_names = ("x", "v")

            def vector_field(self, t, y):
                return jnp.stack([y[1], -y[0], 0.0])

            def initial_state(self):
                return jnp.zeros(2)
        """, 7, "Bad.vector_field returns shape (3,), but the model has 2 states"),
    "crash_in_method": ("""\
        import jax.numpy as jnp
        import difflab as dl

        class Crash(dl.Model):
            state_names = ("x",)

            def vector_field(self, t, y):
                z = y * 2
                return undefined_name * z

            def initial_state(self):
                return jnp.zeros(1)
        """, 9, "Crash.vector_field: NameError: name 'undefined_name' is not defined"),
    "bad_import": ("import difflab\nimport no_such_module_xyz\n", 2, "ModuleNotFoundError"),
    "module_error": ("x = 1\nraise RuntimeError('boom')\n", 2, "RuntimeError: boom"),
    "exit": ("import sys\nsys.exit(3)\n", 2, "SystemExit: 3"),
    "no_states": ("""\
        import difflab as dl

        class S(dl.Model):
            def vector_field(self, t, y):
                return y
            def initial_state(self):
                return y
        """, 3, "S needs state_names"),
    "no_model": ("x = 1\n", None, "defines no difflab.Model subclass"),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors_name_the_file_and_line_in_one_line(tmp_path, case):
    text, line, message = ERRORS[case]
    path = _write(tmp_path, f"{case}.py", text)
    with pytest.raises(ModelFileError) as info:
        load_file(path)
    error = info.value
    assert error.path == str(path) and error.line == line and message in str(error)
    location = f"{path}:{line}:" if line else f"{path}:"
    assert str(error).startswith(location) and "\n" not in str(error)
    assert "difflab/" not in str(error).replace(str(path), "")
    if line is not None:
        assert error.source_line == path.read_text().splitlines()[line - 1]


def test_unreadable_files(tmp_path):
    with pytest.raises(ModelFileError, match="no such file"):
        load_file(tmp_path / "nothing.py")
    (tmp_path / "latin1.py").write_bytes(b"# caf\xe9\n")
    with pytest.raises(ModelFileError, match="is not UTF-8"):
        load_file(tmp_path / "latin1.py")
    with pytest.raises(ModelFileError, match="is a directory"):
        load_file(tmp_path)


def test_peek_runs_nothing_and_a_changed_file_is_refused(tmp_path):
    marker = tmp_path / "ran.txt"
    path = _write(tmp_path, "peeked.py", None, _marker_code(marker))
    info = peek_file(path)
    assert info.class_names == ("MyPendulum",) and not marker.exists()
    with pytest.raises(ModelFileError, match="has changed since it was trusted"):
        load_file(path, sha256="0" * 64)
    assert not marker.exists()
    with pytest.raises(UntrustedModelError, match="the model comes from the Python file"):
        resolve(str(path), trust=False)  # e.g. a reference read from a session file
    assert not marker.exists()
    assert resolve(f"{path}:MyPendulum", trust=lambda sha, p: sha == info.sha256)
    assert marker.read_text() == "ran\n"


def test_reload_keeps_the_parameter_values_whose_names_still_exist(tmp_path):
    path = _write(tmp_path, "live.py", None)
    file = load_file(path)
    old = file.get()(g=3.0, c=0.7)
    assert not file.changed() and file.reload() is file
    path.write_text(PENDULUM.format(marker="").replace("c: float = 0.1",
                                                                 "L: float = 2.0\n    c = 0.1"))
    assert file.changed()
    new_file = file.reload()
    new = carry_parameters(old, new_file.get())
    assert new_file is not file and type(new) is new_file.get()
    assert new.parameters() == {"g": 3.0, "L": 2.0}
    assert carry_parameters({"g": 5.0, "c": 1.0}, new_file.get()).parameters()["g"] == 5.0


def test_source_of_and_from_source_round_trip(tmp_path):
    cls = load_file(_write(tmp_path, "pendulum3.py", None)).get()
    source = source_of(cls())
    assert source.kind == "file" and source.needs_trust and source.name == "MyPendulum"
    assert source.reference == f"{tmp_path / 'pendulum3.py'}:MyPendulum"
    assert from_source(source, trust=True) is cls
    assert source_of(dl.models.get("lorenz")) == ModelSource("builtin", "lorenz")
    assert from_source(ModelSource("builtin", "lorenz")) is dl.models.get("lorenz")
    eq = dl.models.from_equations("init: x = 2\ndx/dt = -x", name="Decay")
    eq_source = source_of(eq)
    assert eq_source.kind == "equations" and not eq_source.needs_trust
    assert from_source(eq_source) is eq  # no trust needed: equations are data
    local = source_of(type("Local", (dl.models.get("lorenz"),), {}))
    assert local.kind == "script"
    with pytest.raises(ValueError, match="defined in a script"):
        from_source(local)


def test_an_untrusted_stored_source_runs_nothing(tmp_path):
    marker = tmp_path / "ran.txt"
    text = PENDULUM.format(marker=_marker_code(marker))
    sha = hashlib.sha256(text.encode()).hexdigest()
    record = {"origin": "user", "name": "MyPendulum", "path": str(tmp_path / "gone.py"),
              "sha256": sha, "source": text}
    asked = []
    for trust in (False, None, lambda s, p: asked.append((s, p)) or False):
        with pytest.raises(UntrustedModelError, match="has not been trusted.*run `difflab trust "):
            from_source(record, trust=trust)
    assert asked == [(sha, str(tmp_path / "gone.py"))] and not marker.exists()
    with pytest.raises(ModelFileError, match="has changed since it was trusted"):
        from_source(dict(record, sha256="f" * 64), trust=True)
    assert not marker.exists()
    cls = from_source(record, trust=lambda s, p: s == sha)
    assert marker.exists() and cls.__name__ == "MyPendulum"


@pytest.mark.slow
def test_the_example_model_files_load_and_run():
    examples = Path(__file__).parents[2] / "examples" / "models"
    pendulum = resolve("pendulum2.py:DrivenPendulum", base_dir=examples)
    duffing = resolve(str(examples / "duffing.eqn"))
    assert pendulum.parameter_specs()["drive"].unit == "1/s^2"
    assert duffing.__name__ == "Duffing" and duffing.state_names == ("x", "v")
    for cls in (pendulum, duffing):
        assert dl.simulate(cls(), 1.0, dt=0.05).ok
