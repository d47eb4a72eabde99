"""``difflab trust``: list, add or revoke trusted Python model files (the app's trust store)."""

import re

from difflab.app import TrustStore
from difflab.models import ModelFileError, file_sha256, peek_file

from .main import UsageError

_SHA256 = re.compile(r"[0-9a-f]{64}\Z")


def add_parser(commands) -> None:
    """Add ``difflab trust`` to the CLI's subcommands."""
    trust = commands.add_parser(
        "trust", help="list, add or revoke trusted Python model files",
        description="Model files named in a session run only when trusted. Trusting a file "
                    "trusts its current content (sha256); editing it needs trusting again.",
    )
    trust.add_argument("files", nargs="*", metavar="FILE", help="Python model files to trust")
    trust.add_argument("--list", action="store_true", help="list the trusted contents")
    trust.add_argument("--revoke", metavar="FILE_OR_SHA256", action="append", default=[],
                       help="stop trusting a file's content or a sha256 (repeatable)")
    trust.set_defaults(handler="difflab.cli.trust_command:command")


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
