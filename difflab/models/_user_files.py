"""Models from the user's files: Python model files (``pendulum2.py:MyPendulum``) and
equation files (``spring.eqn``), and one :func:`resolve` for every kind of model reference.

Loading a ``.py`` file runs its code, so it happens only when the user asks for it.
Errors in the file are reported as :class:`ModelFileError` naming the file and line.
"""

import ast
import dataclasses
import hashlib
import inspect
import linecache
import re
import sys
import types
from pathlib import Path

import equinox as eqx
import jax.numpy as jnp

from ._base import Model, SDEModel, is_model_class
from ._bounded import FileReadError, read_bounded
from ._equations import from_equations
from ._trust import ModelSource, UntrustedModelError, trusted

MAX_FILE_BYTES = 5_000_000
_REFERENCE = re.compile(r"(?P<path>.+\.py)(?::(?P<name>[A-Za-z_][A-Za-z0-9_]*))?\Z", re.S)


class ModelFileError(ValueError):
    """An error in a model file; ``str()`` reads ``path:line: message`` on one line."""

    def __init__(self, path, message, line=None, column=None, source_line=None):
        self.path, self.message, self.line, self.column = str(path), message, line, column
        self.source_line = source_line
        where = ":".join(str(p) for p in (self.path, line, column) if p is not None)
        super().__init__(f"{where}: {message}")


@dataclasses.dataclass(frozen=True, eq=False)
class ModelFile:
    """A loaded Python model file: its classes, and the sha256 and text that were run.

    It reads like a mapping of class names to classes (``file["MyPendulum"]``,
    ``file.values()``); ``file.get()`` is the only class of a one-model file.
    """

    path: str
    sha256: str
    source: str
    classes: dict
    module: types.ModuleType = dataclasses.field(repr=False)

    def get(self, name: str | None = None) -> type[Model]:
        """The class ``name``; without a name, the file's only model class."""
        if name is None and len(self.classes) == 1:
            return next(iter(self.classes.values()))
        if name in self.classes:
            return self.classes[name]
        have = ", ".join(self.classes) or "none"
        if name is None:
            raise ModelFileError(self.path, f"defines several models ({have}); name one as "
                                            f"{Path(self.path).name}:CLASS")
        raise ModelFileError(self.path, f"defines no model class {name!r} (it defines {have})")

    __getitem__ = get

    def __iter__(self):
        return iter(self.classes)

    def __len__(self) -> int:
        return len(self.classes)

    def __contains__(self, name) -> bool:
        return name in self.classes

    def values(self):
        """The model classes, in the order the file defines them."""
        return self.classes.values()

    def items(self):
        return self.classes.items()

    def changed(self) -> bool:
        """True when the file on disk no longer has the content that was loaded."""
        try:
            return file_sha256(self.path) != self.sha256
        except OSError:
            return True

    def reload(self, *, sha256: str | None = None) -> "ModelFile":
        """The file loaded again as it is now (the same object if it has not changed).

        New content is new code: ask before running it, and pass the ``sha256`` the user
        agreed to (from :func:`peek_file`) so that only that content runs.
        """
        return load_file(self.path, sha256=sha256)


@dataclasses.dataclass(frozen=True)
class FileInfo:
    """What a trust prompt shows about a model file, read without running it."""

    path: str
    sha256: str
    source: str
    class_names: tuple[str, ...]


_LOADED: dict[tuple[str, str], ModelFile] = {}
_ORIGIN: dict[type, tuple[str, ModelFile | None]] = {}  # class -> ("file"|"eqn", ModelFile)


def _read(path) -> tuple[Path, bytes]:
    path = Path(path).expanduser()
    try:
        return path.resolve(), read_bounded(path, MAX_FILE_BYTES)
    except FileReadError as error:
        raise ModelFileError(path, error.problem) from None


def file_sha256(path) -> str:
    """The SHA-256 of the file's bytes: what trust is keyed by."""
    return hashlib.sha256(_read(path)[1]).hexdigest()


def _text(data: bytes, shown) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ModelFileError(shown, f"is not UTF-8 text (byte {error.start})") from None


def _syntax_error(error: SyntaxError, shown) -> ModelFileError:
    return ModelFileError(shown, f"SyntaxError: {error.msg}", error.lineno, error.offset,
                          (error.text or "").rstrip("\n") or None)


def peek_file(path) -> FileInfo:
    """The file's sha256, text and class names, found by parsing only: nothing is run."""
    resolved, data = _read(path)
    source = _text(data, path)
    try:
        tree = ast.parse(data, filename=str(path))
    except SyntaxError as error:
        raise _syntax_error(error, path) from None
    names = tuple(n.name for n in tree.body if isinstance(n, ast.ClassDef))
    return FileInfo(str(resolved), hashlib.sha256(data).hexdigest(), source, names)


def load_file(path, *, sha256: str | None = None) -> ModelFile:
    """Run a Python model file and return its model classes.

    ``sha256``: refuse to run the file unless its content has this hash (the content the
    user agreed to run). The same content loaded twice gives the same classes.
    """
    resolved, data = _read(path)
    return _load(data, resolved, shown=path, sha256=sha256)


def load_source(source: str, *, path, sha256: str | None = None) -> ModelFile:
    """Run ``source`` as the model file ``path`` (e.g. the text a session stored)."""
    return _load(source.encode("utf-8"), Path(path).expanduser().resolve(), path, sha256)


def _load(data: bytes, resolved: Path, shown, sha256) -> ModelFile:
    digest = hashlib.sha256(data).hexdigest()
    if sha256 is not None and sha256 != digest:
        raise ModelFileError(shown, "has changed since it was trusted (sha256 "
                                    f"{digest[:12]}... is not {sha256[:12]}...); load it again")
    key = (str(resolved), digest)
    if key not in _LOADED:
        _LOADED[key] = _execute(data, digest, resolved, shown)
    return _LOADED[key]


def _module_name(path: Path, digest: str) -> str:
    stem = re.sub(r"\W", "_", path.stem)
    return f"difflab_user_{stem}_{digest[:12]}"


def _execute(data: bytes, digest: str, resolved: Path, shown) -> ModelFile:
    source, filename = _text(data, shown), str(resolved)
    try:
        code = compile(data, filename, "exec", dont_inherit=True)
    except SyntaxError as error:
        raise _syntax_error(error, shown) from None
    module = types.ModuleType(_module_name(resolved, digest))
    module.__file__ = filename
    lines = source.splitlines(keepends=True)
    linecache.cache[filename] = (len(source), None, lines, filename)
    sys.modules[module.__name__] = module
    try:
        exec(code, module.__dict__)  # the user asked to run this file
    except (Exception, SystemExit) as error:
        del sys.modules[module.__name__]
        raise _runtime_error(error, filename, shown, lines) from None
    file = ModelFile(filename, digest, source, {}, module)
    try:
        file.classes.update(_check_classes(module, file, shown))
    except ModelFileError:
        del sys.modules[module.__name__]
        raise
    for cls in file.classes.values():
        _ORIGIN[cls] = ("file", file)
    return file


def _user_line(error: BaseException, filename: str):
    """The deepest line of ``filename`` in the traceback of ``error`` or its causes."""
    while error is not None:
        line, tb = None, error.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == filename:
                line = tb.tb_lineno
            tb = tb.tb_next
        if line is not None:
            return line
        error = error.__cause__ or error.__context__
    return None


def _runtime_error(error, filename, shown, lines, line=None, prefix="") -> ModelFileError:
    line = _user_line(error, filename) or line
    text = str(error).strip().splitlines()
    message = f"{prefix}{type(error).__name__}" + (f": {text[0]}" if text else "")
    return ModelFileError(shown, message, line, None, _line_text(lines, line))


def _line_text(lines, line):
    return lines[line - 1].rstrip("\n") if line and line <= len(lines) else None


def _class_lines(source: str) -> dict[str, int]:
    tree = ast.parse(source)
    return {n.name: n.lineno for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}


def _check_classes(module, file: ModelFile, shown) -> dict[str, type[Model]]:
    lines = file.source.splitlines(keepends=True)
    where = _class_lines(file.source)
    classes = {}
    for name, obj in vars(module).items():
        if not (isinstance(obj, type) and issubclass(obj, Model)
                and obj.__module__ == module.__name__):
            continue
        if getattr(obj, "__abstractmethods__", None):
            if obj.__name__.startswith("Abstract"):
                continue
            missing = ", ".join(sorted(obj.__abstractmethods__))
            line = where.get(obj.__name__)
            raise ModelFileError(shown, f"{obj.__name__} does not define {missing}", line,
                                 None, _line_text(lines, line))
        _check_model(obj, file, shown, lines, where.get(obj.__name__))
        classes[name] = obj
    if not classes:
        raise ModelFileError(shown, "defines no difflab.Model subclass")
    return classes


def _method_line(cls, name: str, filename: str):
    for klass in cls.__mro__:
        if name in vars(klass):
            func = getattr(vars(klass)[name], "__wrapped__", vars(klass)[name])
            code = getattr(func, "__code__", None)
            if code is not None and code.co_filename == filename:
                return code.co_firstlineno
            return None
    return None


def _needs_arguments(cls) -> bool:
    fields = inspect.signature(cls).parameters.values()
    return any(p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
               for p in fields)


def _check_model(cls, file: ModelFile, shown, lines, class_line) -> None:
    """Instantiate ``cls`` with its defaults and check the shapes its methods return."""
    names = getattr(cls, "state_names", None)
    if (not isinstance(names, tuple | list) or not names
            or not all(isinstance(n, str) for n in names)):
        raise ModelFileError(shown, f"{cls.__name__} needs state_names, a tuple of names such "
                                    "as (\"x\", \"v\")", class_line, None,
                             _line_text(lines, class_line))
    if _needs_arguments(cls):
        return  # e.g. a PRNG key: checked when the user builds one
    try:
        model = cls()
    except Exception as error:
        raise _runtime_error(error, file.path, shown, lines, class_line,
                             f"{cls.__name__}(): ") from None
    y0 = _checked_shape(model, "initial_state", (), file, shown, lines, class_line)
    y = jnp.zeros(y0.shape, y0.dtype)
    _checked_shape(model, "vector_field", (0.0, y), file, shown, lines, class_line)
    if isinstance(model, SDEModel):
        _checked_shape(model, "diffusion", (0.0, y), file, shown, lines, class_line)


def _checked_shape(model, method, args, file, shown, lines, class_line):
    cls, n = type(model), len(model.state_names)
    line = _method_line(cls, method, file.path) or class_line
    try:
        out = eqx.filter_eval_shape(lambda m, a: getattr(m, method)(*a), model, args)
    except Exception as error:
        raise _runtime_error(error, file.path, shown, lines, line,
                             f"{cls.__name__}.{method}: ") from None
    if getattr(out, "shape", None) != (n,):
        got = getattr(out, "shape", type(out).__name__)
        raise ModelFileError(shown, f"{cls.__name__}.{method} returns shape {got}, but the "
                                    f"model has {n} states {tuple(model.state_names)}; "
                                    f"expected ({n},)", line, None, _line_text(lines, line))
    return out


# --- equation files and references -------------------------------------------------------

def load_equations(path) -> type[Model]:
    """The model class of an equation file (``.eqn``); errors name the file, line and column."""
    resolved, data = _read(path)
    cls = from_equations(_text(data, path), path=path)
    _ORIGIN.setdefault(cls, ("eqn", str(resolved)))
    return cls


def split_reference(ref: str):
    """``(path, class_name_or_None)`` for ``"file.py"`` / ``"file.py:Class"``, else None."""
    match = _REFERENCE.match(ref)
    return (match["path"], match["name"]) if match else None


def resolve(ref, *, base_dir=None, trust=True) -> type[Model]:
    """The model class a reference names: a registry (or plugin) name such as
    ``"lorenz"``, a Python file ``"pendulum2.py:MyPendulum"`` (the class may be left out
    when the file defines one), or an equation file ``"spring.eqn"``. A model class is
    returned as it is. Relative paths are taken from ``base_dir`` (default: the current
    directory). Raises ``ValueError`` (:class:`ModelFileError`, ``EquationError``).

    ``trust``: whether a Python file may run, as in :func:`from_source`. The default
    (True) suits a reference the user typed; a reference read from a session file
    (e.g. a stored sweep config) must pass the user's trust store (``difflab trust``), and an
    untrusted file raises ``UntrustedModelError`` without running.
    """
    if is_model_class(ref):
        return ref
    if not isinstance(ref, str):
        raise TypeError(f"a model reference is a name or a path, not {type(ref).__name__}")
    base = Path(base_dir) if base_dir is not None else Path()
    python = split_reference(ref)
    if python is not None:
        path = base / Path(python[0]).expanduser()
        return load_file(path, sha256=_agreed_sha256(path, python[1], trust)).get(python[1])
    if ref.endswith(".eqn"):
        return load_equations(base / Path(ref).expanduser())
    from ._registry import get

    return get(ref)


def _agreed_sha256(path, name, trust):
    """The sha256 that ``trust`` allows to run (None: any content, trust is True)."""
    if trust is True:
        return None
    source = ModelSource("file", name or "", str(path), file_sha256(path))
    if not trusted(trust, source):
        raise UntrustedModelError(source)
    return source.sha256


def loaded_from(cls):
    """``(kind, ModelFile or path)`` for a class loaded by this module, else None."""
    return _ORIGIN.get(cls)
