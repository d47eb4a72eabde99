"""Where a model class comes from (:class:`ModelSource`) and whether its code may run."""

import dataclasses

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
            "runs code from a session file on its own; if you trust it, run `difflab trust "
            f"{source.path}` (or answer the app's prompt), or pass trust=True in Python"
        )


def trusted(trust, source: ModelSource) -> bool:
    """Whether ``trust`` (a bool, a trust store or a function) lets ``source`` run."""
    if isinstance(trust, bool) or trust is None:
        return bool(trust)
    if hasattr(trust, "is_trusted"):
        return bool(trust.is_trusted(source.sha256))
    if callable(trust):
        return bool(trust(source.sha256, source.path))
    raise TypeError("trust must be a bool, a trust store or a function (sha256, path) -> bool")
