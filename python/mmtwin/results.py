"""Writing a results folder (docs/results-format.md) atomically."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq


def summarise(kernel: dict[str, Any], benchmark: str, iterations: list[dict[str, Any]]) -> dict[str, Any]:
    """The summary.json content of one kernel from its iterations' results."""
    tables: dict[str, dict[str, Any]] = {}
    for it in iterations:
        for m in it["metrics"]:
            t = tables.setdefault(
                m["table"], {"title": m["table"], "preferred": m["preferred"], "unit": m["unit"], "ops": {}}
            )
            t["ops"].setdefault(m["op"], []).append(m["value"])
    metrics = [
        {**{k: v for k, v in t.items() if k != "ops"}, "ops": [{"name": n, "samples": s} for n, s in t["ops"].items()]}
        for t in tables.values()
    ]
    return {
        "format": 1,
        "name": kernel["name"],
        "profile": kernel["profile"],
        "benchmark": benchmark,
        "config_sha256": kernel["sha256"],
        "metrics": metrics,
        "iterations": [
            {
                "iteration": it["iteration"],
                "seed": it["seed"],
                "duration": {
                    "user": it["user_ns"] / 1e9,
                    "system": it["system_ns"] / 1e9,
                    "elapsed": it["elapsed_ns"] / 1e9,
                    **{k: it[f"{k}_ns"] / 1e9 for k in ("kswapd", "others", "kswapd_wait") if it.get(f"{k}_ns") is not None},
                },
                "vmstat": dict(it["vmstat"]),
                "events_processed": it["events_processed"],
                "page_events": it["page_events"],
                **({"block": it["block"]} if it.get("block") is not None else {}),
            }
            for it in iterations
        ],
    }


def timeline_table(iterations: list[dict[str, Any]]) -> pa.Table:
    """vmstat timelines of all iterations as one table: iteration, time_ns, one column per counter."""
    names = iterations[0]["timeline"]["names"] if iterations else []
    schema = pa.schema([("iteration", pa.int32()), ("time_ns", pa.int64())] + [(n, pa.int64()) for n in names])
    if not iterations:
        return schema.empty_table()
    tls = [it["timeline"] for it in iterations]
    its = np.concatenate([np.full(len(tl["time_ns"]), it["iteration"], dtype=np.int32) for it, tl in zip(iterations, tls)])
    times = np.concatenate([np.asarray(tl["time_ns"], dtype=np.int64) for tl in tls])
    rows = np.concatenate([np.asarray(tl["rows"], dtype=np.int64).reshape(len(tl["time_ns"]), len(names)) for tl in tls])
    cols = [pa.array(its, pa.int32()), pa.array(times, pa.int64())] + [pa.array(rows[:, j], pa.int64()) for j in range(len(names))]
    return pa.Table.from_arrays(cols, schema=schema)


def write_benchmark(d: Path, benchmark: dict[str, Any], runs: dict[str, list[dict[str, Any]]]) -> None:
    """Writes one benchmark's results into the existing folder `d`: kernels.json and one folder
    per kernel. `runs` maps kernel names to their iterations' results."""
    (d / "kernels.json").write_text(json.dumps([k["name"] for k in benchmark["kernels"]]) + "\n")
    for k in benchmark["kernels"]:
        kd = d / k["name"]
        kd.mkdir()
        (kd / "config.toml").write_text(k["toml"])
        (kd / "config.sha256").write_text(k["sha256"] + "\n")
        its = runs[k["name"]]
        summary = summarise(k, benchmark["benchmark"], its)
        (kd / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
        pq.write_table(timeline_table(its), kd / "vmstat.parquet")
        for it in its:
            for dump in it["dumps"]:
                pd = kd / "proc" / f"iter-{it['iteration']}" / f"t-{dump['time_ns']}ns"
                pd.mkdir(parents=True)
                for f in ("buddyinfo", "pagetypeinfo", "zoneinfo", "vmstat"):
                    (pd / f).write_text(dump[f])


@contextlib.contextmanager
def atomic_dir(out: Path, force: bool) -> Iterator[Path]:
    """A temporary sibling folder of `out` to write into; renamed to `out` when the block ends
    without an exception (replacing an existing `out` only with `force`, else FileExistsError),
    removed otherwise, so a failure never leaves a half-written folder."""
    out = Path(out)
    parent = out.parent if str(out.parent) else Path(".")
    parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=parent))
    # mkdtemp makes the folder private (0700); the results get the mode any new folder gets.
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o777 & ~umask)
    try:
        yield tmp
        if out.exists():
            if not force:
                raise FileExistsError(out)
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old.", dir=parent))
            os.rename(out, old / "x")
            os.rename(tmp, out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def write_results(
    out: Path, scenario_text: str, resolved: dict[str, Any], runs: dict[str, dict[str, list[dict[str, Any]]]], force: bool
) -> None:
    """Writes the whole results folder atomically (`atomic_dir`). `runs` maps benchmark results
    names to kernel names to iterations. One benchmark: its kernels.json and kernel folders
    directly in `out`; several: benchmarks.json and one such folder per benchmark."""
    with atomic_dir(out, force) as tmp:
        (tmp / "scenario.toml").write_text(scenario_text)
        benchmarks = resolved["benchmarks"]
        if len(benchmarks) == 1:
            write_benchmark(tmp, benchmarks[0], runs[benchmarks[0]["name"]])
        else:
            (tmp / "benchmarks.json").write_text(json.dumps([b["name"] for b in benchmarks]) + "\n")
            for b in benchmarks:
                (tmp / b["name"]).mkdir()
                write_benchmark(tmp / b["name"], b, runs[b["name"]])
