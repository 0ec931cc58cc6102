"""Compare mmtwin results folders as MMTests' compare-kernels.sh does.

`load_runs(paths)` reads kernel folders (docs/results-format.md), `build_report(runs, fmt)` turns
them into tables of cells (value, percentage, significance), `render_text(report)` prints them in
one of two layouts and `report_to_json(report)` gives the same tables as plain JSON data.
`load_benchmarks(paths)` splits results folders of several benchmarks into one comparison per
benchmark.

Layouts:

* ``current`` – compare-mmtests.pl (bin/lib/MMTests/Compare.pm `_generateRenderTable`,
  `_generateHeaderTable`, PrintGeneric.pm `printRow`): per metric table a title line, two header
  lines from each run name split at its first "-", then rows ``%-Ns`` statistic, `` %-Ms``
  operation and per run ``%12.2f`` + `` (%7.2f%%)`` (`` *%7.2f%%*`` when significant, mean row
  only). All Min rows come first, then all mean rows, and so on. Then the duration table
  (``Duration User/System/Elapsed``, ``%12.2f``) and the vmstat table (``Ops <label>``,
  ``%15.2f``), without % columns. Then mmtwin's own "Block I/O (mmtwin)" tables (report/block.py,
  title line, ``%15s`` text cells), if every run has block statistics with some I/O.
* ``2011`` – the 2011 shell subreports (subreport/fsmark, subreport/largedd,
  subreport/mmtests-duration, subreport/mmtests-vmstat @78b06ca5^): min/mean/stddev/max rows
  ``%-8s %-6s`` + `` %11.2f (%5.2f%%)`` with the 2011 % formulas (stddev rows use the metric's own
  formula, population stddev, arithmetic mean); a table whose operations have exactly one sample
  in every run is a phase table like largedd, ``%-20s`` + `` %4d (%5.2f%%)``; then the
  "MMTests Statistics: duration" and "MMTests Statistics: vmstat" sections, ``%-40s`` + ``%10s``,
  and the block tables laid out the same way.

Format decisions where MMTests' output is not usable as is: a run name without "-" goes whole on
header line 1 and an all-blank header line is left out (Perl's substr would print the name minus
its last letter); 2011 header lines are aligned over the data columns (the shell printed a fixed
12-space indent and ``%18s``); label columns widen to the longest operation name; a header name
too long for its column keeps one space before it; 2011 phase values that are not whole numbers
print ``%4.2f`` as subreport/simple-writeback did.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from mmtwin.report import ReportError
from mmtwin.report import block as bk
from mmtwin.report import stats as st
from mmtwin.report import vmstat as vm

FORMATS = ("current", "2011")

# Compare.pm / Summarise.pm defaults for Multiops tables.
FIELD_LENGTH, PRECISION, COMPARE_LENGTH = 12, 2, 7
DURATION_FIELD, VMSTAT_FIELD = 12, 15
BEST_PERCENT = 95


# ----------------------------------------------------------------------------------------------
# Data model


@dataclass
class Metric:
    """One metrics table of a summary.json: operation name → pooled samples, in print order."""

    title: str
    preferred: str
    unit: str
    ops: Dict[str, np.ndarray]


@dataclass
class Run:
    """One kernel's results folder, reduced to what the report needs."""

    name: str
    path: Path
    benchmark: str
    profile: str
    metrics: List[Metric]
    user: float
    system: float
    elapsed: float
    vmstat: Dict[str, float]
    iterations: int
    #: Block-device counters, mean over iterations (report/block.py); None if any lacks them.
    block: Optional[bk.Block] = None


@dataclass
class Cell:
    """One run's entry in a row: its value, % against the baseline (None: no % column), whether
    it is marked significant, and for text-valued 2011 rows the text as printed."""

    value: float
    pct: Optional[float] = None
    significant: bool = False
    text: Optional[str] = None


@dataclass
class Row:
    label: str
    op: str
    cells: List[Cell]


@dataclass
class Table:
    """A comparison table. `kind` says how it is laid out: multiops, duration, vmstat, block
    (current); stats2011, phase2011, duration2011, vmstat2011, block2011. `header` holds the
    header lines, one string per run each."""

    title: str
    kind: str
    header: List[List[str]]
    rows: List[Row]
    preferred: Optional[str] = None
    unit: Optional[str] = None


@dataclass
class Report:
    fmt: str
    benchmark: str
    runs: List[str]
    tables: List[Table] = field(default_factory=list)


# ----------------------------------------------------------------------------------------------
# Loading


def _read_json(path: Path) -> Any:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except json.JSONDecodeError as e:
        raise ReportError(f"{path}: invalid JSON: {e}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ReportError(f"{path}: cannot read: {e}") from None


def _is_num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _expand(path: Path) -> List[Path]:
    """The kernel folders a command-line path stands for."""
    if not path.exists():
        raise ReportError(f"{path}: no such results folder")
    if path.is_file():
        if path.name == "summary.json":
            return [path.parent]
        raise ReportError(f"{path}: not a results folder (expected a folder with summary.json)")
    if (path / "summary.json").is_file():
        return [path]
    if (path / BENCHMARKS_JSON).exists():
        raise ReportError(f"{path}: holds several benchmarks; compare it on its own or compare its benchmark folders ({path}/<benchmark>)")
    listing = path / "kernels.json"
    if listing.exists():
        names = _read_json(listing)
        if not (isinstance(names, list) and names and all(isinstance(n, str) and n for n in names)):
            raise ReportError(f"{listing}: expected a non-empty JSON list of kernel names")
        for n in names:
            if not (path / n / "summary.json").is_file():
                raise ReportError(f"{path / n}: kernel {n!r} listed in {listing} has no summary.json")
        return [path / n for n in names]
    kernels = sorted((d for d in path.iterdir() if d.is_dir() and (d / "summary.json").is_file()), key=lambda d: d.name)
    if not kernels:
        raise ReportError(f"{path}: not a results folder (no summary.json, kernels.json or kernel folders with summary.json)")
    return kernels


def _load_run(folder: Path) -> Run:
    path = folder / "summary.json"
    data = _read_json(path)

    def bad(what: str) -> ReportError:
        return ReportError(f"{path}: {what}")

    if not isinstance(data, dict):
        raise bad("expected a JSON object")
    if data.get("format") != 1:
        raise bad(f"unsupported format {data.get('format')!r} (expected 1)")
    for key in ("name", "benchmark"):
        if not isinstance(data.get(key), str) or not data[key]:
            raise bad(f"'{key}' must be a non-empty string")
    if not isinstance(data.get("metrics"), list):
        raise bad("'metrics' must be a list")
    if not isinstance(data.get("iterations"), list):
        raise bad("'iterations' must be a list")

    metrics = []
    for i, m in enumerate(data["metrics"]):
        where = f"metrics[{i}]"
        if not isinstance(m, dict) or not isinstance(m.get("title"), str):
            raise bad(f"{where}: needs a 'title' string")
        if m.get("preferred") not in ("lower", "higher"):
            raise bad(f"{where}.preferred: {m.get('preferred')!r}; valid: 'lower', 'higher'")
        if not isinstance(m.get("ops"), list):
            raise bad(f"{where}.ops must be a list")
        ops: Dict[str, np.ndarray] = {}
        for j, op in enumerate(m["ops"]):
            if not isinstance(op, dict) or not isinstance(op.get("name"), str) or not op["name"]:
                raise bad(f"{where}.ops[{j}]: needs a 'name' string")
            samples = op.get("samples")
            if not isinstance(samples, list) or not all(_is_num(s) for s in samples):
                raise bad(f"{where}.ops[{j}].samples must be a list of finite numbers")
            ops[op["name"]] = np.asarray(samples, dtype=float)
        metrics.append(Metric(m["title"], m["preferred"], str(m.get("unit", "")), ops))

    times = {"user": 0.0, "system": 0.0, "elapsed": 0.0}
    counters: Dict[str, float] = {}
    blocks: List[bk.Block] = []
    for i, it in enumerate(data["iterations"]):
        where = f"iterations[{i}]"
        if not isinstance(it, dict):
            raise bad(f"{where} must be an object")
        duration = it.get("duration", {})
        vmstat = it.get("vmstat", {})
        if not isinstance(duration, dict) or not isinstance(vmstat, dict):
            raise bad(f"{where}: 'duration' and 'vmstat' must be objects")
        for k in times:
            v = duration.get(k, 0)
            if not _is_num(v):
                raise bad(f"{where}.duration.{k} must be a number")
            times[k] += v
        for k, v in vmstat.items():
            if not _is_num(v):
                raise bad(f"{where}.vmstat.{k} must be a number")
            counters[k] = counters.get(k, 0) + v
        if it.get("block") is not None:
            try:
                blocks.append(bk.parse(it["block"]))
            except ValueError as e:
                raise bad(f"{where}.block: {e}") from None
    return Run(
        name=data["name"],
        path=folder,
        benchmark=data["benchmark"],
        profile=str(data.get("profile", "")),
        metrics=metrics,
        user=times["user"],
        system=times["system"],
        elapsed=times["elapsed"],
        vmstat=counters,
        iterations=len(data["iterations"]),
        block=bk.mean(blocks) if blocks and len(blocks) == len(data["iterations"]) else None,
    )


def load_runs(paths: Sequence[Union[str, Path]]) -> List[Run]:
    """Loads kernel folders; a folder with kernels.json or kernel subfolders expands to its
    kernels (kernels.json order, else by name). The first run is the baseline."""
    runs = [_load_run(folder) for p in paths for folder in _expand(Path(p))]
    if not runs:
        raise ReportError("nothing to compare: no results folders given")
    benchmarks = sorted({r.benchmark for r in runs})
    if len(benchmarks) > 1:
        raise ReportError("cannot compare different benchmarks: " + ", ".join(f"{r.path} ({r.benchmark})" for r in runs))
    return runs


BENCHMARKS_JSON = "benchmarks.json"


def _benchmark_names(path: Path) -> List[str]:
    """The benchmark folders of a results folder of several benchmarks, from its benchmarks.json."""
    listing = path / BENCHMARKS_JSON
    names = _read_json(listing)
    if not (isinstance(names, list) and names and all(isinstance(n, str) and n and "/" not in n and not n.startswith(".") for n in names)):
        raise ReportError(f"{listing}: expected a non-empty JSON list of benchmark folder names")
    for n in names:
        if not (path / n).is_dir():
            raise ReportError(f"{path / n}: benchmark {n!r} listed in {listing} has no folder")
    return names


def load_benchmarks(paths: Sequence[Union[str, Path]]) -> List[Tuple[Optional[str], List[Run]]]:
    """The comparisons `paths` stand for, as (benchmark results name, runs) pairs. Kernel folders
    and results folders of one benchmark make one comparison, named None (see `load_runs`).
    Results folders of several benchmarks (with benchmarks.json) make one comparison per
    benchmark, in benchmarks.json order, of that benchmark's kernels from every folder given;
    they must list the same benchmarks and cannot be mixed with other folders."""
    ps = [Path(p) for p in paths]
    multi = [p for p in ps if p.is_dir() and (p / BENCHMARKS_JSON).exists()]
    if not multi:
        return [(None, load_runs(ps))]
    if len(multi) != len(ps):
        other = next(p for p in ps if p not in multi)
        raise ReportError(
            f"cannot compare {multi[0]} (several benchmarks) with {other}; compare one benchmark folder ({multi[0]}/<benchmark>) with it instead"
        )
    names = _benchmark_names(ps[0])
    for p in ps[1:]:
        theirs = _benchmark_names(p)
        if theirs != names:
            raise ReportError(f"{p}: benchmarks {', '.join(theirs)} differ from {ps[0]}'s ({', '.join(names)}); compare benchmark folders instead")
    return [(n, load_runs([p / n for p in ps])) for n in names]


# ----------------------------------------------------------------------------------------------
# Building tables


def split_name(name: str) -> Tuple[str, str]:
    """Compare.pm `_generateHeaderTable`: split at the first "-", keeping "-rcN" on line 1
    (the same bodge: the "-rc<digit>" is searched for in name[i : 2i+3])."""
    i = name.find("-")
    if i < 0:
        return name, ""
    if re.search(r"-rc[0-9]", name[i : i + i + 3]):
        i += 4
    return name[:i], name[i + 1 :]


def split_name_2011(benchmark: str, name: str) -> Tuple[str, str]:
    """compare-kernels.sh `printheader` @78b06ca5^: the folder "<benchmark>-<kernel>" split at
    "-"; line 1 = fields NF-3..NF-2 ("-" if none), line 2 = fields NF-1..NF."""
    fields = f"{benchmark}-{name}".split("-")
    return "-".join(fields[-4:-2]) or "-", "-".join(fields[-2:])


def _head(line: Sequence[str], width: int) -> str:
    """Header cells right-aligned to their column; a name too long for it keeps one space before
    it instead of running into its neighbour."""
    return "".join(f"{h:>{width}}" if len(h) < width else f" {h}" for h in line)


def _header(lines: Sequence[Tuple[str, str]]) -> List[List[str]]:
    header = [[pair[k] for pair in lines] for k in (0, 1)]
    return [line for line in header if any(s.strip() for s in line)]


def _merged_metrics(runs: Sequence[Run]) -> List[Tuple[str, str, str, List[str]]]:
    """(title, preferred, unit, ops) of every metrics table, in the baseline's order, with tables
    and operations only later runs have appended."""
    merged: Dict[str, Tuple[str, str, List[str]]] = {}
    for r in runs:
        for m in r.metrics:
            preferred, unit, ops = merged.setdefault(m.title, (m.preferred, m.unit, []))
            ops.extend(op for op in m.ops if op not in ops)
    return [(t, p, u, ops) for t, (p, u, ops) in merged.items() if ops]


def _samples(run: Run, title: str, op: str) -> np.ndarray:
    for m in run.metrics:
        if m.title == title:
            return m.ops.get(op, np.empty(0))
    return np.empty(0)


def _cell(v: float, base: float, cmp: Callable[[float, float], float], minus_one_missing: bool = True) -> Cell:
    """A missing (NaN) value prints as 0 with 0%; so does -1, MMTests' "no data" marker
    (Compare.pm `_generateComparisonTable`), except in the 2011 layout."""

    def missing(x: float) -> bool:
        return math.isnan(x) or (minus_one_missing and x == -1)

    if missing(v) or missing(base):
        return Cell(0.0 if missing(v) else v, 0.0)
    return Cell(v, cmp(v, base))


def _current_stats(x: np.ndarray, preferred: str) -> List[float]:
    """Summarise.pm `setSummaryMultiops`: min, mean, stddev, coeffvar, max, best-95 mean."""
    mean = "hmean" if preferred == "higher" else "amean"
    return [
        st.minimum(x),
        st.mean_for(x, preferred),
        st.stddev_for(x, preferred),
        st.coeffvar(x, mean),
        st.maximum(x),
        st.best_mean(x, BEST_PERCENT, preferred),
    ]


def _current_labels(preferred: str) -> List[str]:
    if preferred == "higher":
        return ["Min", "Hmean", "HStddev", "HCoeffVar", "Max", f"BHmean-{BEST_PERCENT}"]
    return ["Min", "Amean", "Stddev", "CoeffVar", "Max", f"BAmean-{BEST_PERCENT}"]


MEAN_ROW, STDDEV_ROW = 1, 2


def _multiops_table(runs: Sequence[Run], title: str, preferred: str, unit: str, ops: List[str]) -> Table:
    own = st.compare_func(preferred)
    cmps = [own, own, st.pndiff, st.pndiff, own, own]
    summary = {op: [_current_stats(_samples(r, title, op), preferred) for r in runs] for op in ops}
    rows = []
    for s, label in enumerate(_current_labels(preferred)):
        for op in ops:
            per_run = summary[op]
            cells = [_cell(stats[s], per_run[0][s], cmps[s]) for stats in per_run]
            if s == MEAN_ROW:
                b = per_run[0]
                for cell, n in zip(cells[1:], per_run[1:]):
                    cell.significant = st.ci_significant(b[MEAN_ROW], b[STDDEV_ROW], n[MEAN_ROW], n[STDDEV_ROW])
            rows.append(Row(label, op, cells))
    header = _header([split_name(r.name) for r in runs])
    return Table(title, "multiops", header, rows, preferred, unit)


def _table_2011(runs: Sequence[Run], title: str, preferred: str, unit: str, ops: List[str]) -> Table:
    cmp = st.compare_func(preferred, "2011")
    data = {op: [_samples(r, title, op) for r in runs] for op in ops}
    header = _header([split_name_2011(runs[0].benchmark, r.name) for r in runs])
    rows = []
    if all(x.size == 1 for xs in data.values() for x in xs):
        for op in ops:
            values = [float(x[0]) for x in data[op]]
            rows.append(Row("", op, [_cell(v, values[0], cmp, False) for v in values]))
        return Table(title, "phase2011", header, rows, preferred, unit)
    funcs = [("min", st.minimum), ("mean", st.amean), ("stddev", lambda x: st.stddev(x, ddof=0)), ("max", st.maximum)]
    for op in ops:
        for label, f in funcs:
            values = [f(x) for x in data[op]]
            rows.append(Row(label, op, [_cell(v, values[0], cmp, False) for v in values]))
    return Table(title, "stats2011", header, rows, preferred, unit)


def _monitor_tables(runs: Sequence[Run], fmt: str) -> List[Table]:
    if fmt == "current":
        header = _header([split_name(r.name) for r in runs])
        specs = [
            ("duration", "duration", "Duration", [vm.current_duration(r.user, r.system, r.elapsed) for r in runs]),
            ("vmstat", "vmstat", "Ops", [vm.current_vmstat(r.vmstat, r.elapsed) for r in runs]),
        ]
    else:
        header = []
        specs = [
            ("MMTests Statistics: duration", "duration2011", "", [vm.duration_2011(r.user, r.system, r.elapsed) for r in runs]),
            ("MMTests Statistics: vmstat", "vmstat2011", "", [vm.vmstat_2011(r.vmstat, r.elapsed) for r in runs]),
        ]
    tables = []
    for title, kind, label, per_run in specs:
        rows = []
        for k, first in enumerate(per_run[0]):
            cells = [Cell(rr[k].value, text=rr[k].text if fmt == "2011" else None) for rr in per_run]
            rows.append(Row(label, first.label, cells) if label else Row(first.label, "", cells))
        tables.append(Table(title, kind, header, rows))
    for title, per_run in bk.tables([r.block for r in runs], fmt):
        rows = [Row(first.label, "", [Cell(rr[k].value, text=rr[k].text) for rr in per_run]) for k, first in enumerate(per_run[0])]
        tables.append(Table(title, "block" if fmt == "current" else "block2011", header, rows))
    return tables


def build_report(runs: Sequence[Run], fmt: str = "current") -> Report:
    """All tables of a comparison; runs[0] is the baseline."""
    if fmt not in FORMATS:
        raise ReportError(f"unknown report format {fmt!r}; valid: {', '.join(FORMATS)}")
    if not runs:
        raise ReportError("nothing to compare: no runs")
    build = _multiops_table if fmt == "current" else _table_2011
    tables = [build(runs, *m) for m in _merged_metrics(runs)]
    tables += _monitor_tables(runs, fmt)
    return Report(fmt, runs[0].benchmark, [r.name for r in runs], tables)


# ----------------------------------------------------------------------------------------------
# Rendering


def _pct_text(c: Cell) -> str:
    """PrintGeneric.pm `printRow`: a :SIG: cell has its parentheses replaced by '*'."""
    if c.significant:
        return f" *{c.pct:{COMPARE_LENGTH}.2f}%*"
    return f" ({c.pct:{COMPARE_LENGTH}.2f}%)"


def _render_multiops(t: Table) -> List[str]:
    stat_w = max(len(r.label) for r in t.rows)
    op_w = max(len(r.op) for r in t.rows)
    col = FIELD_LENGTH + COMPARE_LENGTH + 4
    lines = [t.title] if t.title else []
    lines += [" " * (stat_w + 1 + op_w) + _head(line, col) for line in t.header]
    for r in t.rows:
        cells = "".join(f"{c.value:{FIELD_LENGTH}.{PRECISION}f}{_pct_text(c)}" for c in r.cells)
        lines.append(f"{r.label:<{stat_w}} {r.op:<{op_w}}{cells}")
    return lines


def _render_singleops(t: Table) -> List[str]:
    width = DURATION_FIELD if t.kind == "duration" else VMSTAT_FIELD
    stat_w = max(len(r.label) for r in t.rows)
    op_w = max(len(r.op) for r in t.rows)
    lines = [" " * (stat_w + 1 + op_w) + _head(line, width) for line in t.header]
    for r in t.rows:
        lines.append(f"{r.label:<{stat_w}} {r.op:<{op_w}}" + "".join(f"{c.value:{width}.2f}" for c in r.cells))
    return lines


def _render_block(t: Table) -> List[str]:
    """The block tables: a title line, then like the vmstat table with the cells' text."""
    w = max([bk.LABEL_WIDTH] + [len(r.label) for r in t.rows])
    lines = [t.title] + [" " * (w + 1) + _head(line, VMSTAT_FIELD) for line in t.header]
    return lines + [f"{r.label:<{w}} " + "".join(f"{c.text:>{VMSTAT_FIELD}}" for c in r.cells) for r in t.rows]


def _render_stats2011(t: Table) -> List[str]:
    op_w = max([8] + [len(r.op) for r in t.rows])
    lines = [t.title] if t.title else []
    lines += [" " * (op_w + 7) + _head(line, 21) for line in t.header]
    for r in t.rows:
        cells = "".join(f" {c.value:11.2f} ({c.pct:5.2f}%)" for c in r.cells)
        lines.append(f"{r.op:<{op_w}} {r.label:<6}{cells}")
    return lines


def _render_phase2011(t: Table) -> List[str]:
    op_w = max([20] + [len(r.op) for r in t.rows])
    whole = all(float(c.value).is_integer() for r in t.rows for c in r.cells)
    lines = [t.title] if t.title else []
    lines += [" " * op_w + _head(line, 14) for line in t.header]
    for r in t.rows:
        if whole:
            cells = "".join(f" {int(c.value):4d} ({c.pct:5.2f}%)" for c in r.cells)
        else:
            cells = "".join(f" {c.value:4.2f} ({c.pct:5.2f}%)" for c in r.cells)
        lines.append(f"{r.op:<{op_w}}{cells}")
    return lines


def _render_monitor2011(t: Table) -> List[str]:
    # A value as wide as the column keeps one space before it, as the headers do (_head).
    return [t.title] + [f"{r.label:<40}" + "".join(f"{c.text:>10}" if len(c.text) < 10 else f" {c.text}" for c in r.cells) for r in t.rows]


_RENDERERS: Dict[str, Callable[[Table], List[str]]] = {
    "multiops": _render_multiops,
    "duration": _render_singleops,
    "vmstat": _render_singleops,
    "stats2011": _render_stats2011,
    "phase2011": _render_phase2011,
    "duration2011": _render_monitor2011,
    "vmstat2011": _render_monitor2011,
    "block": _render_block,
    "block2011": _render_monitor2011,
}


def render_text(report: Report) -> str:
    """The report as text, tables separated by blank lines, ending in a newline."""
    blocks = ["\n".join(_RENDERERS[t.kind](t)) for t in report.tables if t.rows]
    return "\n\n".join(blocks) + "\n"


def render_heading(name: str) -> str:
    """The line before each benchmark's report when a results folder holds several benchmarks."""
    return f"== {name} ==\n"


# ----------------------------------------------------------------------------------------------
# JSON


def _json_num(x: Optional[float]) -> Optional[float]:
    if x is None or math.isnan(x):
        return None
    return float(x)


def to_json(tables: Sequence[Table]) -> List[Dict[str, Any]]:
    """The tables as JSON-ready data (NaN becomes null)."""
    out = []
    for t in tables:
        rows = []
        for r in t.rows:
            cells = []
            for c in r.cells:
                cell: Dict[str, Any] = {"value": _json_num(c.value), "pct": _json_num(c.pct), "significant": bool(c.significant)}
                if c.text is not None:
                    cell["text"] = c.text
                cells.append(cell)
            rows.append({"label": r.label, "op": r.op, "cells": cells})
        out.append(
            {
                "title": t.title,
                "kind": t.kind,
                "preferred": t.preferred,
                "unit": t.unit,
                "header": [list(line) for line in t.header],
                "rows": rows,
            }
        )
    return out


def report_to_json(report: Report) -> Dict[str, Any]:
    """{"format", "benchmark", "runs", "tables"} with `to_json(report.tables)`."""
    return {"format": report.fmt, "benchmark": report.benchmark, "runs": list(report.runs), "tables": to_json(report.tables)}
