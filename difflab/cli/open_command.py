"""``difflab open PATH [--json]``: what a session file holds, for people or for machines."""

import json

from rich.console import Console
from rich.markup import escape

from .errors import UsageError, printable


def _load(path: str):
    from difflab.io import SessionFileError, open_session

    try:
        return open_session(path)
    except SessionFileError as error:
        raise UsageError(str(error)) from None


def _numbers(values: dict) -> str:
    return ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                     for k, v in values.items())


def _dims(entry: dict) -> str:
    return " ".join(f"{d}={n}" for d, n in entry["dims"].items())


def _result_line(kind: str, entry: dict) -> str:
    settings = {k: v for k, v in entry["settings"].items() if k != "y0"}
    parts = [entry["name"], entry.get("analysis", ""), f"model={entry['model']}",
             _dims(entry), _numbers(settings)]
    if kind == "analyses":
        parts.append(_numbers({k: entry[k] for k in ("param", "start", "stop", "transient",
                                                    "status") if k in entry}))
    if "chunks" in entry:
        parts.append(f"chunks {entry['chunks_done']}/{entry['chunks']} done")
    if "points" in entry:
        not_run = f", {entry['not_run']} not run" if entry["not_run"] else ""
        parts.append(f"{entry['points']} points, {entry['failed']} failed{not_run}")
    if "fields" in entry:
        parts.append(f"fields {', '.join(entry['fields'])} on {entry['grid']}")
    if "result_message" in entry:
        parts.append(entry["result_message"])
    if not entry["complete"]:
        parts.append("(incomplete)")
    return "  " + "  ".join(p for p in parts if p)


def _print(summary: dict) -> None:
    console = Console(highlight=False, soft_wrap=True)
    out = lambda text="": console.print(escape(printable(text)))  # noqa: E731
    out(f"{summary['path']}: DiffLab session, schema version {summary['schema_version']}, "
        f"DiffLab {summary['difflab_version']}, created {summary['created'] or 'unknown'}")
    out(f"models ({len(summary['models'])}):")
    for key, model in summary["models"].items():
        where = f" from {model['path']}" if model["path"] else ""
        out(f"  {key}  {model['origin']} {model['name']} {model['version']}{where}  "
            f"{_numbers(model['parameters'])}")
    for kind in ("runs", "sweeps", "fits", "sensitivities", "analyses"):
        if summary[kind]:
            out(f"{kind} ({len(summary[kind])}):")
            for entry in summary[kind]:
                out(_result_line(kind, entry))
    for pid, record in summary["provenance"].items():
        out(f"provenance {pid}: {record.get('time', '?')}  "
            f"{record.get('command_line', '')}  jax {record.get('jax_version', '?')} on "
            f"{record.get('backend', '?')} ({record.get('device_count', '?')} devices), "
            f"{record.get('precision', '?')}")


def open_session(args) -> int:
    """``difflab open PATH``: a summary of the session file; ``--json`` for machines."""
    summary = _load(args.path).summary()
    if args.json:
        print(json.dumps(summary, indent=2, allow_nan=False))
    else:
        _print(summary)
    return 0
