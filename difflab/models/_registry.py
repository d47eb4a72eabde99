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
    """The names of all registered models, sorted."""
    return sorted(_REGISTRY)


def get(name: str) -> type[Model]:
    """The model class registered as ``name``; unknown names list the close matches."""
    try:
        return _REGISTRY[name]
    except KeyError:
        close = difflib.get_close_matches(name, _REGISTRY, n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ValueError(
            f"unknown model {name!r}{hint} (`difflab models` lists them all)"
        ) from None
