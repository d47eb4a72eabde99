"""``difflab devices``: the platform, devices, memory, processes and precision, as text or
JSON, checked against JAX and the operating system."""

import json
import os

import jax

import difflab as dl
from difflab.cli import main

# white-box: the text lines of a report, to show a GPU's memory without a GPU
from difflab.cli.devices_command import _lines


def _meminfo_kib(field: str) -> int:
    with open("/proc/meminfo") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field + ":"))


def test_json_describes_the_eight_cpu_devices_and_the_host(capsys):
    assert main(["devices", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["platform"] == "cpu" and report["precision"] == dl.precision() == "float64"
    assert (report["process_index"], report["process_count"]) == (0, 1)
    assert report["device_count"] == jax.device_count() == 8
    assert [d["id"] for d in report["devices"]] == list(range(8))
    assert all(d["platform"] == "cpu" and d["memory"] is None for d in report["devices"])
    host = report["host_memory"]
    assert abs(host["total"] - _meminfo_kib("MemTotal") * 1024) <= os.sysconf("SC_PAGE_SIZE")
    assert 0 < host["available"] <= host["total"]


def test_text_names_the_backend_each_device_and_the_host_memory(capsys):
    assert main(["devices"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:4] == ["backend:   cpu", "precision: float64", "process:   0 of 1",
                         "devices:   8"]
    assert lines[4:12] == [f"  {i}: cpu (cpu), host memory" for i in range(8)]
    total = _meminfo_kib("MemTotal") * 1024 / 2**30
    assert lines[12].startswith(f"host memory: {total:.1f} GiB total, ")


def test_a_device_reporting_its_memory_shows_limit_and_use():
    gpu = {"id": 0, "platform": "gpu", "kind": "NVIDIA H100 80GB HBM3",
           "memory": {"limit": 80 * 2**30, "in_use": 3 * 2**29, "peak": 2**31}}
    report = {"platform": "gpu", "precision": "float32", "process_index": 1,
              "process_count": 4, "device_count": 4, "devices": [gpu],
              "host_memory": {"total": 2**40, "available": None}}
    assert _lines(report) == [
        "backend:   gpu", "precision: float32", "process:   1 of 4",
        "devices:   4 (1 in this process)",
        "  0: NVIDIA H100 80GB HBM3 (gpu), 80.0 GiB, 1.5 GiB in use",
        "host memory: 1024.0 GiB total, unknown available"]


def test_an_unknown_option_is_a_usage_error(capsys):
    assert main(["devices", "--memory"]) == 2
    assert capsys.readouterr().err.startswith("difflab: error: unrecognized arguments")
