"""``difflab devices [--json]``: the platform, its devices and their memory, the
processes and the precision."""

import json

from rich.console import Console
from rich.markup import escape


def _size(n: int | None) -> str:
    return "unknown" if n is None else f"{n / 2**30:.1f} GiB"


def _memory(device: dict) -> str:
    memory = device["memory"]
    if memory is None:
        return "host memory" if device["platform"] == "cpu" else "memory not reported"
    return f"{_size(memory['limit'])}, {_size(memory['in_use'])} in use"


def _lines(report: dict) -> list[str]:
    """``report`` (``describe_devices()``) as the lines ``difflab devices`` prints."""
    host = report["host_memory"]
    here = len(report["devices"])
    out = [f"backend:   {report['platform']}",
           f"precision: {report['precision']}",
           f"process:   {report['process_index']} of {report['process_count']}",
           f"devices:   {report['device_count']}"
           + (f" ({here} in this process)" if here != report["device_count"] else "")]
    out += [f"  {d['id']}: {d['kind']} ({d['platform']}), {_memory(d)}"
            for d in report["devices"]]
    out.append(f"host memory: {_size(host['total'])} total, "
               f"{_size(host['available'])} available")
    return out


def devices(args) -> int:
    """Print what JAX computes on: as text, or with ``--json`` as one JSON object."""
    from difflab.solvers import describe_devices

    report = describe_devices()
    if args.json:
        print(json.dumps(report))
        return 0
    console = Console(highlight=False, soft_wrap=True)
    for line in _lines(report):
        console.print(escape(line))
    return 0
