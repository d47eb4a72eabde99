"""Which Python model files the user has agreed to run, remembered by content (sha256).

The app asks once per file content and records the answer here; the command line
shares the store (``difflab trust FILE``, ``--list``, ``--revoke``). Qt-free.

    store = TrustStore()                     # <config dir>/trusted-models.json
    info = difflab.models.peek_file(path)    # sha256 and class names, nothing run
    if info.sha256 in store or ask_the_user(info):
        store.trust(info.sha256, info.path)
        model_file = difflab.models.load_file(path, sha256=info.sha256)
"""

import datetime
import json
import os
import re
import sys
import tempfile
from pathlib import Path

_SHA256 = re.compile(r"[0-9a-f]{64}\Z")
FILE_NAME = "trusted-models.json"


def config_dir() -> Path:
    """DiffLab's per-user configuration folder (``$DIFFLAB_CONFIG_DIR`` overrides it)."""
    if os.environ.get("DIFFLAB_CONFIG_DIR"):
        return Path(os.environ["DIFFLAB_CONFIG_DIR"]).expanduser()
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA") or Path.home() / "AppData" / "Roaming") / "DiffLab"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "DiffLab"
    base = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(base) / "difflab"


def _check_sha(sha256: str) -> str:
    if not isinstance(sha256, str) or not _SHA256.match(sha256):
        raise ValueError(f"not a SHA-256 hex digest: {sha256!r}")
    return sha256


class TrustStore:
    """A JSON file of trusted model-file contents: ``sha256 -> {path, added}``.

    Every call reads the file afresh, so the app and the command line see each other's
    changes. A missing or unreadable file trusts nothing.
    """

    def __init__(self, path=None):
        self.path = Path(path) if path is not None else config_dir() / FILE_NAME

    def entries(self) -> dict[str, dict]:
        """Every trusted sha256 with the path it was trusted from and when."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            trusted = data["trusted"]
        except (OSError, ValueError, KeyError, TypeError):
            return {}
        if not isinstance(trusted, dict):
            return {}
        return {k: v for k, v in trusted.items()
                if isinstance(k, str) and _SHA256.match(k) and isinstance(v, dict)}

    def is_trusted(self, sha256: str) -> bool:
        """True when the content with this sha256 may run."""
        return isinstance(sha256, str) and sha256 in self.entries()

    __contains__ = is_trusted

    def __call__(self, sha256: str, path=None) -> bool:
        """The ``trust=`` callback of :func:`difflab.models.from_source`."""
        return self.is_trusted(sha256)

    def trust(self, sha256: str, path=None) -> None:
        """Remember that the content with this sha256 (from ``path``) may run."""
        entries = self.entries()
        now = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
        entries[_check_sha(sha256)] = {"path": None if path is None else str(path), "added": now}
        self._write(entries)

    def revoke(self, sha256: str) -> bool:
        """Forget a sha256; False if it was not trusted."""
        entries = self.entries()
        if entries.pop(sha256, None) is None:
            return False
        self._write(entries)
        return True

    def _write(self, entries: dict) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps({"version": 1, "trusted": entries}, indent=1, sort_keys=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".trusted-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text + "\n")
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
