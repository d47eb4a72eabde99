"""Models from installed packages, through the entry-point group ``difflab.models``.

A package declares, in its ``pyproject.toml``::

    [project.entry-points."difflab.models"]
    my_oscillator = "my_package.models:MyOscillator"

and ``my_oscillator`` then appears in ``difflab models`` and ``difflab.models.available()``.
Entry points are listed once, on first use, without importing anything; a plugin's
module is imported when its model is first asked for.
"""

import warnings

from ._base import is_model_class

GROUP = "difflab.models"

_entry_points: dict | None = None
_loaded: set[str] = set()


class PluginError(ValueError):
    """A plugin model that could not be loaded."""


def _discover() -> dict:
    global _entry_points
    if _entry_points is None:
        import importlib.metadata

        found = {}
        for ep in importlib.metadata.entry_points(group=GROUP):
            if ep.name in found and found[ep.name].value != ep.value:
                warnings.warn(f"two plugins provide the model {ep.name!r}; using "
                              f"{found[ep.name].value}, ignoring {ep.value}", stacklevel=3)
                continue
            found.setdefault(ep.name, ep)
        _entry_points = found
    return _entry_points


def refresh() -> None:
    """Forget the entry points seen so far (e.g. after installing a package)."""
    global _entry_points
    _entry_points = None


def names(builtin) -> list[str]:
    """The plugin model names not shadowed by a built-in model."""
    return [name for name in _discover() if name not in builtin]


def _where(ep) -> str:
    dist = getattr(ep, "dist", None)
    package = f" in {dist.metadata['Name']} {dist.version}" if dist is not None else ""
    return f"entry point {ep.name} = {ep.value}{package}"


def load(name: str):
    """The model class the plugin ``name`` provides, or None if no plugin has that name."""
    ep = _discover().get(name)
    if ep is None:
        return None
    try:
        cls = ep.load()
    except Exception as error:
        first = (str(error).strip().splitlines() or [""])[0]
        raise PluginError(f"plugin model {name!r} failed to load ({_where(ep)}): "
                          f"{type(error).__name__}: {first}") from None
    if not is_model_class(cls):
        raise PluginError(f"plugin model {name!r} ({_where(ep)}) is not a concrete "
                          "difflab.Model subclass")
    _loaded.add(name)
    return cls


def is_plugin(name: str) -> bool:
    """True for a registered name whose model came from a plugin."""
    return name in _loaded
