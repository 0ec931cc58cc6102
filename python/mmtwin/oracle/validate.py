"""`mmtwin validate`: the twin and the real kernel on the same scenario, counter by counter.

Both runs are written under one folder (`DIR/twin`, `DIR/real`, results folders like any
other). For each workload × kernel the report gives, per key counter and benchmark metric, the
real value, the twin's value and the twin's relative error (twin − real) / real. With two or
more kernels (knob settings), it also says for each counter whether the twin moves the same way
as the real kernel from the first kernel to each other one.
"""

from __future__ import annotations

import math
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from mmtwin.oracle.results import as_iteration, real_label, run_all, stderr_progress, write_real_results

KEY_COUNTERS = [
    "pgscan_kswapd", "pgscan_direct", "pgsteal_kswapd", "pgsteal_direct", "pgpgin", "pgpgout",
    "allocstall", "nr_vmscan_write", "pswpin", "pswpout", "thp_fault_alloc", "thp_fault_fallback",
    "compact_stall", "compact_success", "compact_fail",
]
# A change smaller than this share of the larger value counts as "no change".
FLAT = 0.05


def key_values(vmstat: Dict[str, float], metrics: List[Dict[str, Any]]) -> Dict[str, Optional[float]]:
    """The key counters (allocstall: the sum of allocstall_*; None when the kernel has no such
    counter) and the mean of each metric, named "<table> <op> (<unit>)"."""
    out: Dict[str, Optional[float]] = {}
    for k in KEY_COUNTERS:
        if k == "allocstall":
            parts = [v for n, v in vmstat.items() if n == "allocstall" or n.startswith("allocstall_")]
            out[k] = float(sum(parts)) if parts else None
        else:
            out[k] = float(vmstat[k]) if k in vmstat else None
    sums: Dict[str, List[float]] = {}
    for m in metrics:
        sums.setdefault(f"{m['table']} {m['op']} ({m['unit']})", []).append(float(m["value"]))
    for name, vs in sums.items():
        out[name] = sum(vs) / len(vs)
    return out


def rel_error(real: Optional[float], twin: Optional[float]) -> Optional[float]:
    if real is None or twin is None:
        return None
    if real == 0:
        return 0.0 if twin == 0 else None
    return (twin - real) / abs(real)


def direction(a: Optional[float], b: Optional[float]) -> Optional[str]:
    if a is None or b is None:
        return None
    big = max(abs(a), abs(b))
    if big == 0 or abs(b - a) <= FLAT * big:
        return "="
    return "up" if b > a else "down"


def compare(real: Dict[str, Optional[float]], twin: Dict[str, Optional[float]]) -> List[Dict[str, Any]]:
    names = list(real) + [n for n in twin if n not in real]
    return [{"counter": n, "real": real.get(n), "twin": twin.get(n), "error": rel_error(real.get(n), twin.get(n))} for n in names]


def validate(text: str, resolved: Dict[str, Any], out: Path, cache: Path, timeout: Optional[float], append: str, quiet: bool, force: bool) -> Dict[str, Any]:
    from mmtwin import _core
    from mmtwin.results import write_results

    progress = stderr_progress(quiet)
    guests = run_all(resolved, cache, timeout, append, progress)
    progress("running the twin")
    twin_runs: Dict[str, Dict[str, List[Dict[str, Any]]]] = {}
    for b in resolved["benchmarks"]:
        twin_runs[b["name"]] = {k["name"]: [_core.run_iteration(k["toml"], 0)] for k in b["kernels"]}

    out = Path(out)
    parent = out.parent if str(out.parent) else Path(".")
    parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=parent))
    try:
        write_results(tmp / "twin", text, resolved, twin_runs, force=False)
        write_real_results(tmp / "real", text, resolved, guests, force=False)
        if out.exists():
            if not force:
                raise FileExistsError(out)
            shutil.rmtree(out)
        os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise

    report: Dict[str, Any] = {"scenario": resolved["name"], "output": str(out), "benchmarks": []}
    for b in resolved["benchmarks"]:
        kernels = []
        values: List[Tuple[Dict[str, Optional[float]], Dict[str, Optional[float]]]] = []
        for k in b["kernels"]:
            g = guests[(b["name"], k["name"])]
            it = as_iteration(g)
            real = key_values(it["vmstat"], it["metrics"])
            t = twin_runs[b["name"]][k["name"]][0]
            twin = key_values(dict(t["vmstat"]), t["metrics"])
            values.append((real, twin))
            kernels.append({
                "kernel": k["name"],
                "real_name": real_label(g.release, k["name"], len(b["kernels"])),
                "real_elapsed_s": round(it["elapsed_ns"] / 1e9, 3),
                "twin_elapsed_s": round(t["elapsed_ns"] / 1e9, 3),
                "rows": compare(real, twin),
            })
        directions = []
        for i in range(1, len(b["kernels"])):
            rows = []
            for n in values[0][0]:
                rd = direction(values[0][0].get(n), values[i][0].get(n))
                td = direction(values[0][1].get(n), values[i][1].get(n))
                rows.append({"counter": n, "real": rd, "twin": td, "agree": None if rd is None or td is None else rd == td})
            directions.append({"from": b["kernels"][0]["name"], "to": b["kernels"][i]["name"], "rows": rows})
        report["benchmarks"].append({"name": b["name"], "kernels": kernels, "directions": directions})
    return report


def _num(v: Optional[float]) -> str:
    if v is None:
        return "-"
    if v == int(v) and abs(v) < 1e15:
        return f"{int(v)}"
    return f"{v:.3f}"


def _err(e: Optional[float]) -> str:
    if e is None:
        return "n/a"
    if math.isinf(e):
        return "inf"
    return f"{e * 100:+.1f}%"


def render_text(report: Dict[str, Any]) -> str:
    lines: List[str] = []
    for b in report["benchmarks"]:
        for k in b["kernels"]:
            lines.append(f"== {b['name']}: twin {k['kernel']} vs {k['real_name']} ==")
            width = max([len("counter")] + [len(r["counter"]) for r in k["rows"]])
            lines.append(f"{'counter':<{width}} {'real':>14} {'twin':>14} {'error':>9}")
            for r in k["rows"]:
                lines.append(f"{r['counter']:<{width}} {_num(r['real']):>14} {_num(r['twin']):>14} {_err(r['error']):>9}")
            lines.append(f"{'elapsed (s; real under TCG)':<{width}} {k['real_elapsed_s']:>14} {k['twin_elapsed_s']:>14}")
            lines.append("")
        for d in b["directions"]:
            lines.append(f"== {b['name']}: direction of change {d['from']} -> {d['to']} ==")
            width = max([len("counter")] + [len(r["counter"]) for r in d["rows"]])
            lines.append(f"{'counter':<{width}} {'real':>6} {'twin':>6} {'agree':>6}")
            for r in d["rows"]:
                agree = "-" if r["agree"] is None else ("yes" if r["agree"] else "NO")
                lines.append(f"{r['counter']:<{width}} {r['real'] or '-':>6} {r['twin'] or '-':>6} {agree:>6}")
            lines.append("")
    lines.append(f"results: {report['output']}/twin, {report['output']}/real")
    return "\n".join(lines) + "\n"
