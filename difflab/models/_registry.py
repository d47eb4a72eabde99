"""The model registry: built-in models by name, looked up with helpful errors."""

import difflib

from ._base import Model, is_model_class

_REGISTRY: dict[str, type[Model]] = {}


def register(name: str):
    """Class decorator adding a concrete model to the registry under ``name``."""

    def add(cls):
        if not is_model_class(cls):
            raise TypeError(f"{cls!r} is not a concrete difflab.Model subclass")
        if name in _REGISTRY and _REGISTRY[name] is not cls:
            raise ValueError(f"a model named {name!r} is already registered")
        _REGISTRY[name] = cls
        cls.registry_name = name
        return cls

    return add


def available() -> list[str]:
    """The names of all registered models and installed plugin models, sorted."""
    from . import _plugins

    return sorted({*_REGISTRY, *_plugins.names(_REGISTRY)})


def _plugin(name: str):
    """The plugin model ``name``, imported and registered on first use (None: no such plugin)."""
    from . import _plugins

    cls = _plugins.load(name)
    return None if cls is None else register(name)(cls)


def get(name: str) -> type[Model]:
    """The model class registered as ``name``; unknown names list the close matches."""
    if name in _REGISTRY:
        return _REGISTRY[name]
    try:
        cls = _plugin(name)
        if cls is None:
            raise KeyError(name)
        return cls
    except KeyError:
        close = difflib.get_close_matches(name, available(), n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ValueError(
            f"unknown model {name!r}{hint} (`difflab models` lists them all)"
        ) from None
