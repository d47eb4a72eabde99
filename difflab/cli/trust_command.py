"""``difflab trust``: list, add or revoke trusted Python model files (the app's trust store)."""

import re

from difflab.app import TrustStore
from difflab.models import ModelFileError, file_sha256, peek_file

from .errors import UsageError

_SHA256 = re.compile(r"[0-9a-f]{64}\Z")


def _sha_of(item: str) -> str:
    if _SHA256.match(item):
        return item
    try:
        return file_sha256(item)
    except ModelFileError as error:
        raise UsageError(str(error)) from None


def command(args) -> int:
    """``difflab trust [FILE...] [--revoke FILE|SHA] [--list]``."""
    store = TrustStore()
    for item in args.revoke:
        sha = _sha_of(item)
        print(f"{'revoked' if store.revoke(sha) else 'was not trusted'}: {sha[:12]}... {item}")
    for path in args.files:
        try:
            info = peek_file(path)
        except ModelFileError as error:
            raise UsageError(str(error)) from None
        store.trust(info.sha256, info.path)
        print(f"trusted: {info.sha256[:12]}... {info.path} ({', '.join(info.class_names)})")
    if args.list or not (args.files or args.revoke):
        for sha, entry in sorted(store.entries().items(), key=lambda e: e[1].get("added", "")):
            print(f"{sha}  {entry.get('added', '?')}  {entry.get('path') or ''}")
    return 0
