"""Where a model class comes from, and getting the class back from that description.

A session file stores a :class:`ModelSource` for each model; :func:`from_source` turns it
back into a class. Built-in, plugin and equation models come back freely; a Python
model file's code runs only when the caller says it is trusted.
"""

import hashlib
import inspect
from collections.abc import Callable, Mapping

import numpy as np

from ._base import Model, is_model_class
from ._equations import from_equations, is_equation_model
from ._trust import KINDS, ModelSource, UntrustedModelError, trusted
from ._user_files import load_file, load_source, loaded_from


def source_of(model) -> ModelSource:
    """The :class:`ModelSource` of a model instance or class."""
    cls = model if isinstance(model, type) else type(model)
    if not is_model_class(cls):
        raise TypeError(f"{cls!r} is not a concrete difflab.Model subclass")
    name = getattr(cls, "registry_name", None)
    if name is not None and _registered(name, cls):
        from . import _plugins

        return ModelSource("plugin" if _plugins.is_plugin(name) else "builtin", name)
    origin = loaded_from(cls)
    if is_equation_model(cls):
        text = cls.equations
        path = origin[1] if origin and origin[0] == "eqn" else None
        return ModelSource("equations", cls.__name__, path, _sha(text), text)
    if origin is not None and origin[0] == "file":
        file = origin[1]
        return ModelSource("file", cls.__name__, file.path, file.sha256, file.source)
    return ModelSource("script", cls.__qualname__, _defined_in(cls))


def _registered(name, cls) -> bool:
    from ._registry import _REGISTRY

    return _REGISTRY.get(name) is cls


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _defined_in(cls):
    try:
        return inspect.getsourcefile(cls)
    except TypeError:
        return None


def _as_source(source) -> ModelSource:
    """A :class:`ModelSource` from one, or from a record-like object or mapping."""
    if isinstance(source, ModelSource):
        return source
    get = source.get if isinstance(source, Mapping) else (lambda k: getattr(source, k, None))
    kind = get("kind") or {"user": "file"}.get(get("origin"), get("origin"))
    text = get("text") if get("text") is not None else get("source")
    if kind not in KINDS:
        raise ValueError(f"unknown kind of model source {kind!r}; expected one of {KINDS}")
    return ModelSource(kind, get("name"), get("path"), get("sha256"), text)


def from_source(source, *, trust: bool | Callable = False) -> type[Model]:
    """The model class that ``source`` describes.

    ``source``: a :class:`ModelSource`, or a record or mapping with the same fields
    (``origin``/``kind``, ``name``, ``path``, ``sha256``, ``text``/``source``).
    Built-in, plugin and equation models need no trust. A Python model file runs only if
    ``trust`` is True, a trust store holding its sha256, or a function
    ``(sha256, path) -> bool`` answering yes; otherwise :class:`UntrustedModelError` is
    raised and nothing runs. The stored text runs (checked against ``sha256``); without
    stored text, the file at ``path`` runs if its content still has that hash.
    """
    source = _as_source(source)
    if source.kind in ("builtin", "plugin"):
        from ._registry import get

        return get(source.name)
    if source.kind == "equations":
        return from_equations(source.text, name=source.name, path=source.path)
    if source.kind == "script":
        raise ValueError(f"model {source.name!r} was defined in a script "
                         f"({source.path or 'unknown file'}); create it there and pass it in")
    if not source.sha256:
        raise ValueError(f"model {source.name!r} from {source.path} has no sha256 to check")
    if not trusted(trust, source):
        raise UntrustedModelError(source)
    if source.text is not None:
        return load_source(source.text, path=source.path, sha256=source.sha256).get(source.name)
    return load_file(source.path, sha256=source.sha256).get(source.name)


def carry_parameters(old, new_cls: type[Model]) -> Model:
    """A ``new_cls`` model keeping the scalar parameter values of ``old`` whose names exist.

    ``old``: a model or a mapping of parameter names to values. Used when a model file
    or equation text changes and the class is rebuilt.
    """
    values = old.parameters() if isinstance(old, Model) else dict(old)
    specs = new_cls.parameter_specs()
    kept = {n: v for n, v in values.items() if n in specs and np.ndim(v) == 0}
    return new_cls().replace(**kept)
