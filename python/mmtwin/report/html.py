"""The comparison as one self-contained HTML page with plots (`mmtwin compare --html FILE`).

The page holds, per benchmark, the same tables as the text report (report/compare.py builds
them; significant differences in bold) and plots of the runs' vmstat timelines (each kernel
folder's vmstat.parquet, the first iteration): free memory; the page cache with its dirty and
writeback pages; anonymous pages; on a NUMA machine the free memory and file pages of each
node; reclaim's scan rates (kswapd and direct); the rates written out and read in. A benchmark
table of one operation with several samples (fs_mark's loops) is plotted sample by sample.
Plots are inline SVG drawn by matplotlib, without timestamps, so the same results give the
same bytes. Rows of the vmstat and block tables that are zero in every run are left out and
counted, and so are plot panels that are zero all along in every kernel (but free memory's).
"""

from __future__ import annotations

import html
import io
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import pyarrow.parquet as pq

from mmtwin.report import ReportError
from mmtwin.report import vmstat as vm
from mmtwin.report.compare import Cell, Report, Row, Run, Table

PAGE_MIB = 4096 / 2**20
#: At most this many points per plotted line: rates are averaged over the coarser intervals.
MAX_POINTS = 800

_TABLE_TITLES = {"duration": "Duration", "vmstat": "vmstat", "duration2011": "", "vmstat2011": ""}
#: Tables whose all-zero rows are left out of the page.
_SPARSE = {"vmstat", "vmstat2011", "block", "block2011"}

_CSS = """
body { font-family: sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
caption { text-align: left; font-weight: bold; padding: 0.3em 0; }
th, td { padding: 0.15em 0.6em; border-bottom: 1px solid #eee; }
th { background: #f4f4f4; } td.num { text-align: right; font-family: monospace; white-space: pre; }
td.sig { font-weight: bold; } td.label { white-space: nowrap; }
p.note { color: #666; font-size: 0.85em; }
"""


# ----------------------------------------------------------------------------------------------
# Tables


def _cell_text(c: Cell) -> str:
    if c.text is not None:
        text = c.text
    elif c.value is None or (isinstance(c.value, float) and np.isnan(c.value)):
        text = "-"
    else:
        text = f"{c.value:.2f}"
    if c.pct is not None and not np.isnan(c.pct):
        text += f" ({c.pct:.2f}%)"
    return text


def _all_zero(row: Row) -> bool:
    return all((c.value or 0) == 0 for c in row.cells)


def render_table(t: Table, runs: Sequence[str]) -> str:
    """One comparison table as an HTML table: a caption, the run names, a row per operation."""
    rows = [r for r in t.rows if not (t.kind in _SPARSE and _all_zero(r))]
    if not rows:
        return ""
    title = t.title if t.title else _TABLE_TITLES.get(t.kind, t.kind)
    out = ["<table>"]
    if title:
        out.append(f"<caption>{html.escape(title)}</caption>")
    out.append("<tr><th></th>" + "".join(f"<th>{html.escape(n)}</th>" for n in runs) + "</tr>")
    for r in rows:
        label = " ".join(x for x in (r.label, r.op) if x)
        cells = "".join(
            f'<td class="num{" sig" if c.significant else ""}">{html.escape(_cell_text(c))}</td>' for c in r.cells
        )
        out.append(f'<tr><td class="label">{html.escape(label)}</td>{cells}</tr>')
    out.append("</table>")
    left = len(t.rows) - len(rows)
    if left:
        out.append(f'<p class="note">Left out: {left} {"row" if left == 1 else "rows"} zero in every run.</p>')
    return "\n".join(out)


# ----------------------------------------------------------------------------------------------
# Timelines


def _timeline(run: Run) -> Optional[Dict[str, np.ndarray]]:
    """The first iteration's vmstat timeline of a kernel folder, column → values; None if the
    folder has no timeline or it has fewer than two samples."""
    path = run.path / "vmstat.parquet"
    if not path.exists():
        return None
    try:
        t = pq.read_table(path)
    except Exception as e:  # pyarrow raises several types for a damaged file
        raise ReportError(f"{path}: cannot read the vmstat timeline: {e}") from None
    cols = {n: t.column(n).to_numpy() for n in t.column_names}
    if "iteration" not in cols or "time_ns" not in cols:
        raise ReportError(f"{path}: not an mmtwin vmstat timeline (no iteration or time_ns column)")
    keep = cols["iteration"] == cols["iteration"].min() if len(cols["iteration"]) else None
    if keep is None or keep.sum() < 2:
        return None
    return {n: v[keep].astype(np.float64) for n, v in cols.items()}


def _coarse(n: int) -> np.ndarray:
    """Indices of at most MAX_POINTS + 1 samples out of n, the first and last included."""
    step = max(1, -(-(n - 1) // MAX_POINTS))
    idx = np.arange(0, n, step)
    return idx if idx[-1] == n - 1 else np.append(idx, n - 1)


def series(tl: Dict[str, np.ndarray]) -> Dict[str, Tuple[np.ndarray, np.ndarray]]:
    """The plotted series of one timeline, name → (seconds, values): levels in MiB at the
    chosen samples, rates (per second) averaged between them."""
    idx = _coarse(len(tl["time_ns"]))
    t = tl["time_ns"][idx] / 1e9

    def total(names: Sequence[str]) -> np.ndarray:
        return sum((tl[n][idx] for n in names if n in tl), np.zeros(len(idx)))

    def rate(names: Sequence[str], scale: float = 1.0) -> Tuple[np.ndarray, np.ndarray]:
        dv, dt = np.diff(total(names)) * scale, np.diff(t)
        return t[1:], np.divide(dv, dt, out=np.zeros(len(dt)), where=dt > 0)

    nodes = 0
    while f"node{nodes}_nr_free_pages" in tl:
        nodes += 1
    per_node = {
        f"node{n}_{item}": (t, total([f"node{n}_nr_{item}_pages"]) * PAGE_MIB) for n in range(nodes) for item in ("free", "file")
    }
    return {
        **per_node,
        "free": (t, total(["nr_free_pages"]) * PAGE_MIB),
        "file": (t, total(["nr_file_pages"]) * PAGE_MIB),
        "anon": (t, total(["nr_anon_pages"]) * PAGE_MIB),
        "dirty": (t, total(["nr_dirty"]) * PAGE_MIB),
        "writeback": (t, total(["nr_writeback"]) * PAGE_MIB),
        "scan_kswapd": rate(vm.KSWAPD_SCANNED),
        "scan_direct": rate(vm.DIRECT_SCANNED),
        "pgpgout": rate(["pgpgout"], 1 / 1024),
        "pgpgin": rate(["pgpgin"], 1 / 1024),
    }


#: (title, [(series, line style)], logarithmic above 100): the panels, top to bottom.
Panel = Tuple[str, List[Tuple[str, str]], bool]
_PANELS: List[Panel] = [
    ("Free memory (MiB)", [("free", "-")], False),
    ("Page cache (MiB): file pages —, dirty - -, writeback ···", [("file", "-"), ("dirty", "--"), ("writeback", ":")], False),
    ("Anonymous pages (MiB)", [("anon", "-")], False),
    ("Pages scanned per second (log above 100): kswapd —, direct - -", [("scan_kswapd", "-"), ("scan_direct", "--")], True),
    ("Disk traffic (MiB/s): written out (pgpgout) —, read in (pgpgin) - -", [("pgpgout", "-"), ("pgpgin", "--")], False),
]


Series = Dict[str, Tuple[np.ndarray, np.ndarray]]

#: Line styles of nodes 0, 1, 2, 3 (then again) in the per-node panels.
_NODE_STYLES = ["-", "--", ":", "-."]
_STYLE_NAMES = {"-": "—", "--": "- -", ":": "···", "-.": "-·-"}


def panels(named: Sequence[Tuple[str, Series]]) -> List[Panel]:
    """The panels to draw: free memory always; on a machine of several nodes, free memory and
    file pages per node after the page cache; any other panel only if some kernel's line in it
    is not zero all along (no page cache, scanning or I/O in an anonymous-memory benchmark)."""
    nodes = 0
    while any(f"node{nodes}_free" in s for _, s in named):
        nodes += 1
    out = list(_PANELS[:2])
    if nodes >= 2:
        for item, what in (("free", "Free memory"), ("file", "File pages")):
            styles = [(n, _NODE_STYLES[n % len(_NODE_STYLES)]) for n in range(nodes)]
            legend = ", ".join(f"node {n} {_STYLE_NAMES[st]}" for n, st in styles)
            out.append((f"{what} per node (MiB): {legend}", [(f"node{n}_{item}", st) for n, st in styles], False))
    out += _PANELS[2:]

    def shows(panel: Panel) -> bool:
        return any(key in s and s[key][1].any() for _, s in named for key, _ in panel[1])

    return [out[0]] + [p for p in out[1:] if shows(p)]


def _figure(panels: int):  # type: ignore[no-untyped-def]
    """A figure of `panels` stacked axes sharing x, with the page's fixed style."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 2.1 * panels))
    axes = fig.subplots(panels, 1, sharex=True, squeeze=False)[:, 0]
    return fig, axes


def _save(fig, fmt: str) -> bytes:  # type: ignore[no-untyped-def]
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, metadata={"Date": None} if fmt == "svg" else {"Software": None}, dpi=80)
    return buf.getvalue()


def _style():  # type: ignore[no-untyped-def]
    import matplotlib

    return matplotlib.rc_context({"svg.hashsalt": "mmtwin", "svg.fonttype": "none", "font.size": 8})


def _colours() -> List[str]:
    import matplotlib

    return list(matplotlib.rcParams["axes.prop_cycle"].by_key()["color"])


def plot(named: Sequence[Tuple[str, Series]], fmt: str = "svg") -> bytes:
    """The timeline panels of one benchmark, one colour per kernel (by its place in `named`;
    a kernel with no series draws nothing), as an image file's bytes (svg or png).
    matplotlib's object interface, no pyplot state: safe in any thread."""
    chosen = panels(named)
    with _style():
        fig, axes = _figure(len(chosen))
        colours = _colours()
        for ax, (title, lines, log) in zip(axes, chosen):
            ax.set_title(title, loc="left", fontsize=9)
            for k, (name, s) in enumerate(named):
                for key, style in lines:
                    if key not in s:
                        continue
                    x, y = s[key]
                    ax.plot(x, y, style, color=colours[k % len(colours)], linewidth=1, label=name if style == "-" else None)
            ax.grid(True, linewidth=0.3)
            if log:
                ax.set_yscale("symlog", linthresh=100)
            ax.set_ylim(bottom=0)
        axes[0].legend(loc="upper right", fontsize=7)
        axes[-1].set_xlabel("simulated seconds")
        return _save(fig, fmt)


def sample_tables(runs: Sequence[Run]) -> List[Tuple[str, str, str]]:
    """The metric tables worth a samples plot: (title, op, unit) of each table whose only
    operation has two or more samples in the baseline run (fs_mark's loops, for instance)."""
    out = []
    for m in runs[0].metrics if runs else []:
        if len(m.ops) == 1:
            op, samples = next(iter(m.ops.items()))
            if len(samples) >= 2:
                out.append((m.title, op, m.unit))
    return out


def plot_samples(runs: Sequence[Run], fmt: str = "svg") -> Optional[bytes]:
    """Each sample in order (a loop, an iteration) of the `sample_tables`, one colour per
    kernel; None if there are none."""
    tables = sample_tables(runs)
    if not tables:
        return None
    with _style():
        fig, axes = _figure(len(tables))
        colours = _colours()
        for ax, (title, op, unit) in zip(axes, tables):
            what = title if op in title else f"{title}: {op}"
            ax.set_title(f"{what}{f' ({unit})' if unit else ''}, sample by sample", loc="left", fontsize=9)
            for k, r in enumerate(runs):
                m = next((m for m in r.metrics if m.title == title), None)
                if m is not None and op in m.ops:
                    y = m.ops[op]
                    ax.plot(np.arange(1, len(y) + 1), y, ".-", color=colours[k % len(colours)], linewidth=0.8, markersize=3, label=r.name)
            ax.grid(True, linewidth=0.3)
        axes[0].legend(loc="upper right", fontsize=7)
        axes[-1].set_xlabel("sample (iterations' samples one after another)")
        return _save(fig, fmt)


def _inline(svg: bytes) -> str:
    text = svg.decode("utf-8")
    return text[text.index("<svg") :]


def plot_svg(named: Sequence[Tuple[str, Series]]) -> str:
    """`plot` as an inline <svg> element."""
    return _inline(plot(named, "svg"))


# ----------------------------------------------------------------------------------------------
# The page


def render_html(benchmarks: Sequence[Tuple[Optional[str], Report, Sequence[Run]]], title: str) -> str:
    """The whole page: per benchmark its heading (if named), timeline plots and tables."""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
    ]
    for name, report, runs in benchmarks:
        if name is not None:
            parts.append(f"<h2>{html.escape(name)}</h2>")
        # A kernel without a timeline keeps its place (and so every kernel its colour).
        named = []
        for r in runs:
            tl = _timeline(r)
            named.append((r.name, series(tl) if tl is not None else {}))
        if any(s for _, s in named):
            parts.append(plot_svg(named))
            parts.append('<p class="note">vmstat timelines of the first iteration of each kernel.</p>')
        samples = plot_samples(runs)
        if samples is not None:
            parts.append(_inline(samples))
        for t in report.tables:
            parts.append(render_table(t, report.runs))
    parts.append("</body></html>")
    return "\n".join(p for p in parts if p) + "\n"
