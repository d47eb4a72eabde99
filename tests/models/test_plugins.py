"""Plugins: a package installed in the test provides models through ``difflab.models``."""

import importlib
import os
import subprocess
import sys
import textwrap

import pytest

import difflab as dl
from difflab.cli import main
# white-box: the fixture removes the test plugin from the registry and the loaded-plugin set
from difflab.models import _plugins, _registry

PACKAGE = "difflab_demo_plugin"

MODULE = '''\
import jax.numpy as jnp
import difflab as dl


class DemoDecay(dl.Model):
    """Exponential decay, from a plugin."""

    rate: float = dl.param(0.5, bounds=(0.0, 5.0), unit="1/s", doc="decay rate")
    state_names = ("n",)
    domain = "plugin"
    description = "Exponential decay dn/dt = -rate n"

    def vector_field(self, t, y):
        return -self.rate * y

    def initial_state(self):
        return jnp.ones(1)


def helper():
    return 42
'''

ENTRY_POINTS = f"""\
[difflab.models]
demo_decay = {PACKAGE}:DemoDecay
demo_broken = {PACKAGE}.broken:Model
demo_not_a_model = {PACKAGE}:helper
lorenz = {PACKAGE}:DemoDecay
"""


def _install(site):
    """A minimal installed distribution: the package and its .dist-info."""
    package = site / PACKAGE
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(MODULE)
    (package / "broken.py").write_text("raise ImportError('needs libfoo')\n")
    info = site / f"{PACKAGE}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {PACKAGE}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    return site


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    site = _install(tmp_path / "site")
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    dl.models.refresh_plugins()
    yield site
    for name in ("demo_decay", "demo_broken", "demo_not_a_model"):
        _registry._REGISTRY.pop(name, None)
        _plugins._loaded.discard(name)
    for module in [m for m in sys.modules if m.split(".")[0] == PACKAGE]:
        del sys.modules[module]
    monkeypatch.undo()
    dl.models.refresh_plugins()


def test_plugin_models_are_listed_without_importing_them(plugin):
    names = dl.models.available()
    assert {"demo_decay", "demo_broken", "demo_not_a_model"} <= set(names)
    assert names.count("lorenz") == 1 and PACKAGE not in sys.modules


@pytest.mark.slow
def test_a_plugin_model_loads_on_first_use_and_behaves_like_a_built_in(plugin):
    cls = dl.models.get("demo_decay")
    assert cls.__name__ == "DemoDecay" and cls.registry_name == "demo_decay"
    assert dl.models.get("demo_decay") is cls and dl.models.resolve("demo_decay") is cls
    assert dl.models.get("lorenz") is not cls  # a built-in name cannot be taken over
    traj = dl.simulate(cls(rate=1.0), 1.0, dt=1e-2)
    assert abs(float(traj.final[0]) - 0.36787944) < 1e-8
    source = dl.models.source_of(cls)
    assert source == dl.models.ModelSource("plugin", "demo_decay") and not source.needs_trust
    assert dl.models.from_source(source) is cls


def test_broken_plugins_are_reported_by_name(plugin):
    expected = r"'demo_broken' failed to load .*difflab_demo_plugin 1.0.*needs libfoo"
    with pytest.raises(dl.models.PluginError, match=expected):
        dl.models.get("demo_broken")
    with pytest.raises(dl.models.PluginError, match="not a concrete difflab.Model subclass"):
        dl.models.get("demo_not_a_model")
    with pytest.raises(ValueError, match="did you mean demo_decay"):
        dl.models.get("demo_decy")


def test_difflab_models_shows_plugins_and_warns_about_broken_ones(plugin, capsys):
    assert main(["models"]) == 0
    out, err = capsys.readouterr()
    assert "demo_decay" in out and "rate=0.5 1/s" in out and "demo_broken" not in out
    assert "warning: plugin model 'demo_broken' failed to load" in err
    assert main(["models", "demo_decay"]) == 0
    assert "decay rate" in capsys.readouterr().out


@pytest.mark.slow
def test_an_installed_plugin_works_from_the_command_line(plugin):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(plugin), *sys.path]))
    code = textwrap.dedent("""
        import sys
        from difflab.cli import main
        sys.exit(main(["run", "demo_decay", "--set", "rate=2", "--t1", "1", "--dt", "0.01"]))
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "t=1: n=0.135335"
