"""`mmtwin oracle run`: every workload × kernel of a scenario booted on the real kernel, once per
iteration (a fresh guest and file system each time), written as a results folder of the same
shape as a simulated run (docs/results-format.md), so `mmtwin compare` reads it like any other.
Each kernel folder also holds `oracle.json` (kernel release, QEMU command, wall and boot time of
each boot) and `console.log` (every boot's console, one after the other).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

from mmtwin.oracle import OracleError, cache_dir
from mmtwin.oracle.guest import GuestResult, boot
from mmtwin.oracle.prepare import load_manifest


def parse_vmstat(text: str) -> Dict[str, int]:
    out: Dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2:
            try:
                out[parts[0]] = int(parts[1])
            except ValueError:
                pass
    return out


def vmstat_delta(data: Dict[str, Any]) -> Dict[str, int]:
    before, after = parse_vmstat(data["before"]["vmstat"]), parse_vmstat(data["after"]["vmstat"])
    return {k: v - before.get(k, 0) for k, v in after.items()}


def short_release(release: str) -> str:
    return release.removesuffix("-amd64")


def real_label(release: str, kernel: str, nkernels: int) -> str:
    """The column name of a real run: linux-6.1.0-56-real (with the scenario's kernel name when
    the scenario has several kernels)."""
    base = f"linux-{short_release(release)}-real"
    return base if nkernels == 1 else f"{base}-{kernel}"


def as_iteration(g: GuestResult, iteration: int = 0) -> Dict[str, Any]:
    """A guest's results in the shape `_core.run_iteration` returns, for results.write_benchmark."""
    d = g.data
    delta = vmstat_delta(d)
    elapsed_ns = int(d["duration"]["elapsed"] * 1e9)
    dumps = []
    for t, snap in ((0, d["before"]), (elapsed_ns, d["after"])):
        dumps.append({"time_ns": t, **{f: snap.get(f, "") for f in ("buddyinfo", "pagetypeinfo", "zoneinfo", "vmstat")}})
    page_events = sum(delta.get(k, 0) for k in ("pgalloc_dma", "pgalloc_dma32", "pgalloc_normal", "pgalloc_movable", "pgfree"))
    return {
        "iteration": iteration,
        "seed": int(d.get("seed", 0)),
        "user_ns": int(d["duration"]["user"] * 1e9),
        "system_ns": int(d["duration"]["system"] * 1e9),
        **{f"{k}_ns": int(d["duration"][k] * 1e9) for k in ("kswapd", "others", "kswapd_wait") if k in d["duration"]},
        "elapsed_ns": elapsed_ns,
        "events_processed": 0,
        "page_events": page_events,
        "vmstat": delta,
        "timeline": d["timeline"],
        "metrics": d["metrics"],
        "dumps": dumps,
    }


Progress = Callable[[str], None]


Guests = Dict[Tuple[str, str], List[GuestResult]]


def run_all(resolved: Dict[str, Any], cache: Path, timeout: Optional[float], append: str, progress: Progress) -> Guests:
    """Boots `resolved["iterations"]` guests per (benchmark, kernel), one after the other;
    returns their results in iteration order. The iterations of one kernel follow each other so
    that a slow host phase spreads over the kernels less than over one kernel's repeats."""
    manifest = load_manifest(cache)
    if manifest is None:
        raise OracleError(f"the oracle is not set up in {cache}; run `mmtwin oracle setup` first")
    n = int(resolved.get("iterations", 1))
    out: Guests = {}
    for b in resolved["benchmarks"]:
        for k in b["kernels"]:
            gs: List[GuestResult] = []
            for i in range(n):
                what = f"{b['name']} on {k['name']}" + (f" (iteration {i + 1}/{n})" if n > 1 else "")
                progress(f"booting {what}")
                g = boot(k["toml"], manifest, cache, timeout, append, what)
                progress(f"  {what}: {g.wall_s:.1f} s wall, workload started at guest uptime {g.boot_s or 0:.1f} s")
                gs.append(g)
            out[(b["name"], k["name"])] = gs
    return out


def write_real_results(out: Path, scenario_text: str, resolved: Dict[str, Any], guests: Guests, force: bool) -> None:
    """Writes the results folder atomically (mmtwin.results.atomic_dir), in the simulator's shape,
    with each guest's console log and boot facts (oracle.json) in its kernel folder."""
    from mmtwin.results import atomic_dir, write_benchmark

    with atomic_dir(out, force) as tmp:
        (tmp / "scenario.toml").write_text(scenario_text)
        benchmarks = resolved["benchmarks"]
        multi = len(benchmarks) > 1
        if multi:
            (tmp / "benchmarks.json").write_text(json.dumps([b["name"] for b in benchmarks]) + "\n")
        for b in benchmarks:
            d = tmp / b["name"] if multi else tmp
            d.mkdir(exist_ok=True)
            kernels, runs = [], {}
            for k in b["kernels"]:
                gs = guests[(b["name"], k["name"])]
                label = real_label(gs[0].release, k["name"], len(b["kernels"]))
                kernels.append({**k, "name": label, "profile": f"real-{short_release(gs[0].release)}"})
                runs[label] = [as_iteration(g, i) for i, g in enumerate(gs)]
            write_benchmark(d, {**b, "kernels": kernels}, runs)
            for k, real in zip(b["kernels"], kernels):
                gs = guests[(b["name"], k["name"])]
                kd = d / real["name"]
                if len(gs) == 1:
                    (kd / "console.log").write_text(gs[0].console)
                else:
                    (kd / "console.log").write_text("".join(f"===== iteration {i} =====\n{g.console}" for i, g in enumerate(gs)))
                meta = {
                    "release": gs[0].release,
                    "scenario_kernel": k["name"],
                    "wall_s": round(sum(g.wall_s for g in gs), 3),
                    "iterations": [{"wall_s": round(g.wall_s, 3), "workload_start_uptime_s": g.boot_s} for g in gs],
                    "qemu": gs[0].command,
                }
                (kd / "oracle.json").write_text(json.dumps(meta, indent=1) + "\n")


def stderr_progress(quiet: bool) -> Progress:
    def p(msg: str) -> None:
        if not quiet:
            print(msg, file=sys.stderr, flush=True)

    return p


__all__ = ["cache_dir", "run_all", "write_real_results", "stderr_progress", "vmstat_delta", "real_label"]
