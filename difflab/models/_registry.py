"""The model registry: built-in models by name, looked up with helpful errors."""

import difflib

from ._base import Model, is_model_class

_REGISTRY: dict[str, type[Model]] = {}
_FIELD_MODELS: dict[str, type] = {}  # field models: found by get, listed by field_models


def _is_field_model_class(cls) -> bool:
    """True for a concrete field model class (``AbstractFieldModel``'s contract)."""
    return isinstance(cls, type) and hasattr(cls, "field_names") and callable(
        getattr(cls, "initial_fields", None)) and not getattr(cls, "__abstractmethods__", None)


def register(name: str):
    """Class decorator adding a concrete model (or field model) to the registry under
    ``name``."""

    def add(cls):
        field_model = _is_field_model_class(cls)
        if not (is_model_class(cls) or field_model):
            raise TypeError(f"{cls!r} is not a concrete difflab.Model subclass")
        table = _FIELD_MODELS if field_model else _REGISTRY
        if name in {**_REGISTRY, **_FIELD_MODELS} and table.get(name) is not cls:
            raise ValueError(f"a model named {name!r} is already registered")
        table[name] = cls
        cls.registry_name = name
        return cls

    return add


def field_models() -> list[str]:
    """The names of the registered field models (models on grids), sorted; ``available``
    lists the others."""
    return sorted(_FIELD_MODELS)


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
    if name in _FIELD_MODELS:
        return _FIELD_MODELS[name]
    try:
        cls = _plugin(name)
        if cls is None:
            raise KeyError(name)
        return cls
    except KeyError:
        close = difflib.get_close_matches(name, available() + field_models(), n=3,
                                          cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ValueError(
            f"unknown model {name!r}{hint} (`difflab models` lists them all)"
        ) from None
