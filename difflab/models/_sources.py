"""Where a model class comes from, and getting the class back from that description.

A session file stores a :class:`ModelSource` for each model; :func:`from_source` turns it
back into a class. Built-in, plugin and equation models come back freely; a Python
model file's code runs only when the caller says it is trusted.
"""

import dataclasses
import hashlib
import inspect
from collections.abc import Callable, Mapping

import numpy as np

from ._base import Model, is_model_class
from ._equations import from_equations, is_equation_model
from ._user_files import load_file, load_source, loaded_from

KINDS = ("builtin", "plugin", "equations", "file", "script")


@dataclasses.dataclass(frozen=True)
class ModelSource:
    """What a model class is and where it comes from, as plain data (no code objects).

    ``kind``: ``"builtin"`` (registry), ``"plugin"`` (an installed package),
    ``"equations"`` (``text`` is the equations), ``"file"`` (a Python model file:
    ``path``, ``sha256`` of its bytes and its ``text``), or ``"script"`` (a class defined
    in the user's own script, which cannot be rebuilt). ``name`` is the registry name, or
    the class name for the other kinds.
    """

    kind: str
    name: str
    path: str | None = None
    sha256: str | None = None
    text: str | None = None

    @property
    def needs_trust(self) -> bool:
        """True when getting the class back means running code from a file."""
        return self.kind == "file"

    @property
    def reference(self) -> str | None:
        """The reference :func:`difflab.models.resolve` accepts, where there is one."""
        if self.kind in ("builtin", "plugin"):
            return self.name
        if self.kind == "file":
            return f"{self.path}:{self.name}"
        if self.kind == "equations" and self.path:
            return self.path
        return None


class UntrustedModelError(PermissionError, ValueError):
    """A model file that the caller has not said it trusts; nothing was run.

    A ``ValueError`` too, so the command line reports it as one line (exit status 2).
    """

    def __init__(self, source: ModelSource):
        self.source = source
        super().__init__(
            f"{f'model {source.name!r}' if source.name else 'the model'} comes from the "
            f"Python file {source.path} (sha256 "
            f"{(source.sha256 or '?')[:12]}...), which has not been trusted: DiffLab never "
            "runs code from a session file on its own; pass --trust on the command line or "
            "trust=True in Python if you trust it"
        )


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


def trusted(trust, source: ModelSource) -> bool:
    """Whether ``trust`` (a bool, a trust store or a function) lets ``source`` run."""
    if isinstance(trust, bool) or trust is None:
        return bool(trust)
    if hasattr(trust, "is_trusted"):
        return bool(trust.is_trusted(source.sha256))
    if callable(trust):
        return bool(trust(source.sha256, source.path))
    raise TypeError("trust must be a bool, a trust store or a function (sha256, path) -> bool")


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
