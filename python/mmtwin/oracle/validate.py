"""`mmtwin validate`: the twin and the real kernel on the same scenario, counter by counter.

Both runs are written under one folder (`DIR/twin`, `DIR/real`, results folders like any
other), each with the same number of iterations (real: one boot each; twin: the scenario's seed
sequence). For each workload × kernel the report gives, per key counter and benchmark metric,
the real mean and its run-to-run spread (sample standard deviation as a share of the mean), the
twin's mean and the twin's relative error (twin − real) / real. With two or more kernels (knob
settings), it also says for each counter whether the twin moves the same way as the real kernel
from the first kernel to each other one, on the means.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from mmtwin.oracle import OracleError, load_toml
from mmtwin.oracle.guest import guest_view
from mmtwin.oracle.results import as_iteration, real_label, run_all, stderr_progress, write_real_results

KEY_COUNTERS = [
    "pgscan_kswapd", "pgscan_direct", "pgsteal_kswapd", "pgsteal_direct", "pgpgin", "pgpgout",
    "allocstall", "nr_vmscan_write", "pswpin", "pswpout", "thp_fault_alloc", "thp_fault_fallback",
    "compact_stall", "compact_success", "compact_fail",
]
# A change smaller than this share of the larger value counts as "no change".
FLAT = 0.05


# Kernel-thread times of an iteration ("<name>_ns" keys), with their row names.
CPU_ROWS = [("kswapd", "kswapd CPU (s)"), ("kswapd_wait", "kswapd waiting for a CPU (s)")]


def key_values(vmstat: Dict[str, float], metrics: List[Dict[str, Any]], it: Optional[Dict[str, Any]] = None) -> Dict[str, Optional[float]]:
    """The key counters (allocstall: the sum of allocstall_*; None when the kernel has no such
    counter), the mean of each metric, named "<table> <op> (<unit>)", and kswapd's CPU time and
    run-queue wait when the iteration `it` holds them (guests from before November 2026 lack the
    wait)."""
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
    for key, name in CPU_ROWS:
        if it is not None and it.get(f"{key}_ns") is not None:
            out[name] = it[f"{key}_ns"] / 1e9
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


Values = Dict[str, Optional[float]]


def mean_sd(runs: List[Values]) -> Tuple[Values, Values]:
    """Per name: the mean over the runs and the sample standard deviation (None with one run, or
    when a run lacks the name)."""
    names: List[str] = []
    for r in runs:
        names += [n for n in r if n not in names]
    mean: Values = {}
    sd: Values = {}
    for n in names:
        vs = [r.get(n) for r in runs]
        if any(v is None for v in vs):
            mean[n], sd[n] = None, None
            continue
        xs = [float(v) for v in vs if v is not None]
        m = sum(xs) / len(xs)
        mean[n] = m
        sd[n] = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1)) if len(xs) > 1 else None
    return mean, sd


def compare(real: Values, twin: Values, real_sd: Optional[Values] = None) -> List[Dict[str, Any]]:
    names = list(real) + [n for n in twin if n not in real]
    sd = real_sd or {}
    return [
        {"counter": n, "real": real.get(n), "real_sd": sd.get(n), "twin": twin.get(n), "error": rel_error(real.get(n), twin.get(n))}
        for n in names
    ]


RealRuns = Dict[Tuple[str, str], Tuple[str, List[Dict[str, Any]]]]


def _split_metrics(summary: Dict[str, Any], n: int, where: Path) -> List[List[Dict[str, Any]]]:
    """summary.json keeps each metric's samples of all iterations in one list, in iteration
    order; every iteration of a workload yields as many samples, so they split evenly."""
    per: List[List[Dict[str, Any]]] = [[] for _ in range(n)]
    for t in summary["metrics"]:
        for op in t["ops"]:
            samples = op["samples"]
            if len(samples) % n:
                raise OracleError(f"{where}: {len(samples)} samples of {t['title']} {op['name']} do not divide among {n} iterations")
            step = len(samples) // n
            for i in range(n):
                for v in samples[i * step:(i + 1) * step]:
                    per[i].append({"table": t["title"], "op": op["name"], "unit": t["unit"], "preferred": t["preferred"], "value": v})
    return per


def load_real(real_dir: Path, resolved: Dict[str, Any]) -> RealRuns:
    """The iterations of an earlier `mmtwin oracle run` of the same scenario, per (benchmark,
    kernel), with the real column's name. Refuses a folder whose guests differ from the
    scenario's (guest_view: another scenario, or its machine, knobs or workload edited since);
    the twin's own settings, and the scenario's iteration count, may differ."""
    real_dir = Path(real_dir)
    benchmarks = resolved["benchmarks"]
    out: RealRuns = {}
    for b in benchmarks:
        d = real_dir / b["name"] if len(benchmarks) > 1 else real_dir
        try:
            names = json.loads((d / "kernels.json").read_text())
        except (OSError, ValueError) as e:
            raise OracleError(f"--real {real_dir}: not a results folder of `mmtwin oracle run` ({d / 'kernels.json'}: {e})") from None
        if len(names) != len(b["kernels"]):
            raise OracleError(f"--real {real_dir}: {b['name']} has {len(names)} kernel(s), the scenario {len(b['kernels'])}")
        for k, name in zip(b["kernels"], names):
            kd = d / name
            try:
                cfg = (kd / "config.toml").read_text()
                summary = json.loads((kd / "summary.json").read_text())
            except (OSError, ValueError) as e:
                raise OracleError(f"--real {real_dir}: cannot read {kd}: {e}") from None
            if guest_view(load_toml(cfg)) != guest_view(load_toml(k["toml"])):
                raise OracleError(
                    f"--real {real_dir}: {kd / 'config.toml'} ran another guest than {b['name']} on {k['name']} of this scenario "
                    "(machine nodes, distances, swap, file system, sysctls or workload differ)"
                )
            its = summary["iterations"]
            metrics = _split_metrics(summary, len(its), kd)
            out[(b["name"], k["name"])] = (
                name,
                [
                    {
                        "vmstat": it["vmstat"], "metrics": m, "elapsed_ns": int(it["duration"]["elapsed"] * 1e9),
                        **{f"{key}_ns": int(it["duration"][key] * 1e9) for key, _ in CPU_ROWS if key in it["duration"]},
                    }
                    for it, m in zip(its, metrics)
                ],
            )
    return out


def validate(
    text: str, resolved: Dict[str, Any], out: Path, cache: Path, timeout: Optional[float], append: str, quiet: bool, force: bool,
    real_dir: Optional[Path] = None,
) -> Dict[str, Any]:
    """Runs (or, with `real_dir`, reuses) the real side and the twin, writes both folders under
    `out` atomically, and returns the report. With `real_dir` the twin runs as many iterations
    as the real folder holds."""
    from mmtwin import _core
    from mmtwin.results import write_results

    progress = stderr_progress(quiet)
    if real_dir is None:
        guests = run_all(resolved, cache, timeout, append, progress)
        nkernels = {b["name"]: len(b["kernels"]) for b in resolved["benchmarks"]}
        real_runs: RealRuns = {
            key: (real_label(gs[0].release, key[1], nkernels[key[0]]), [as_iteration(g, i) for i, g in enumerate(gs)])
            for key, gs in guests.items()
        }
    else:
        real_runs = load_real(real_dir, resolved)
        # The twin runs as often as the real side booted, with configs that say so.
        resolved = _core.resolve_scenario(text, len(next(iter(real_runs.values()))[1]))
    progress("running the twin")
    twin_runs: Dict[str, Dict[str, List[Dict[str, Any]]]] = {}
    for b in resolved["benchmarks"]:
        twin_runs[b["name"]] = {}
        for k in b["kernels"]:
            n = len(real_runs[(b["name"], k["name"])][1])
            twin_runs[b["name"]][k["name"]] = [_core.run_iteration(k["toml"], i) for i in range(n)]

    out = Path(out)
    parent = out.parent if str(out.parent) else Path(".")
    parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=parent))
    try:
        write_results(tmp / "twin", text, resolved, twin_runs, force=False)
        if real_dir is None:
            write_real_results(tmp / "real", text, resolved, guests, force=False)
        else:
            shutil.copytree(real_dir, tmp / "real")
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
        values: List[Tuple[Values, Values]] = []
        for k in b["kernels"]:
            label, its = real_runs[(b["name"], k["name"])]
            real, real_sd = mean_sd([key_values(it["vmstat"], it["metrics"], it) for it in its])
            ts = twin_runs[b["name"]][k["name"]]
            twin, _ = mean_sd([key_values(dict(t["vmstat"]), t["metrics"], t) for t in ts])
            values.append((real, twin))
            kernels.append({
                "kernel": k["name"],
                "real_name": label,
                "iterations": len(its),
                "real_elapsed_s": round(sum(it["elapsed_ns"] for it in its) / len(its) / 1e9, 3),
                "twin_elapsed_s": round(sum(t["elapsed_ns"] for t in ts) / len(ts) / 1e9, 3),
                "rows": compare(real, twin, real_sd),
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


def _spread(sd: Optional[float], mean: Optional[float]) -> str:
    if sd is None or mean is None:
        return "-"
    if mean == 0:
        return "0%" if sd == 0 else "-"
    return f"{sd / abs(mean) * 100:.0f}%"


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
            n = k.get("iterations", 1)
            means = f" (means of {n} runs each; ±: the real runs' standard deviation / mean)" if n > 1 else ""
            lines.append(f"== {b['name']}: twin {k['kernel']} vs {k['real_name']}{means} ==")
            width = max([len("counter")] + [len(r["counter"]) for r in k["rows"]])
            lines.append(f"{'counter':<{width}} {'real':>14} {'±':>5} {'twin':>14} {'error':>9}")
            for r in k["rows"]:
                lines.append(
                    f"{r['counter']:<{width}} {_num(r['real']):>14} {_spread(r.get('real_sd'), r['real']):>5} {_num(r['twin']):>14} {_err(r['error']):>9}"
                )
            lines.append(f"{'elapsed (s; real under TCG)':<{width}} {k['real_elapsed_s']:>14} {'':>5} {k['twin_elapsed_s']:>14}")
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
