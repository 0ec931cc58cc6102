"""Helpers of the fidelity tests: run a seed scenario once and read its results folder."""

from __future__ import annotations

import json
from pathlib import Path


def run_scenario(scenario: Path, out: Path) -> Path:
    """Runs `scenario` through the CLI into `out` (quiet); returns `out`."""
    from mmtwin.cli import main

    assert main(["run", str(scenario), "-o", str(out), "-q", "--json"]) == 0
    return out


def summary(out: Path, bench: str, kernel: str) -> dict:
    return json.loads((out / bench / kernel / "summary.json").read_text())


def vmstat(out: Path, bench: str, kernel: str) -> dict:
    """The vmstat deltas of a kernel's run, summed over its iterations."""
    total: dict = {}
    for it in summary(out, bench, kernel)["iterations"]:
        for k, v in it["vmstat"].items():
            total[k] = total.get(k, 0) + v
    return total


def scanned(vm: dict, who: str) -> int:
    """Pages scanned by `who` ("kswapd" or "direct") over all zones."""
    return sum(v for k, v in vm.items() if k.startswith(f"pgscan_{who}_"))


def metric_samples(out: Path, bench: str, kernel: str, op: str, table: str | None = None) -> list[float]:
    """The samples of the benchmark operation `op` over the iterations (in the first table that
    has it, or in `table`)."""
    for m in summary(out, bench, kernel)["metrics"]:
        if table is not None and m["title"] != table:
            continue
        for o in m["ops"]:
            if o["name"] == op:
                return list(o["samples"])
    raise KeyError(op)


def metric_mean(out: Path, bench: str, kernel: str, op: str, table: str | None = None) -> float:
    """The mean over iterations of the benchmark operation `op` (in the first table that has
    it, or in `table`)."""
    samples = metric_samples(out, bench, kernel, op, table)
    return sum(samples) / len(samples)
