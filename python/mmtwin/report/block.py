"""The "Block I/O (mmtwin)" section: mmtwin's own block-device statistics (no MMTests monitor).

Input is a kernel's "block" entries of summary.json (the machine's totals over all devices per
iteration, index 0 read, 1 write; see `mmtwin._core.run_iteration`), averaged over iterations by
`mean`. Ratios divide the means (so they are ratios of the totals over all iterations); the
histogram rows are percentages of the read requests.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from mmtwin.report.vmstat import VmstatRow

Block = Dict[str, np.ndarray]

#: Shape of each counter of a "block" entry ("devices" is informational and not read).
SHAPES = {
    "requests": (2,),
    "sectors": (2,),
    "merges": (2,),
    "segments": (2,),
    "seeks": (),
    "busy_ns": (),
    "merge_refused_segments": (),
    "rq_size_hist": (2, 9),
    "rq_seg_hist": (2, 8),
}
#: Counters that results written before they were modelled lack (journal, FTL, CFQ, seek time, ...): read as 0.
OPTIONAL = ("seek_ns", "journal_commits", "journal_blocks", "checkpoint_blocks", "ordered_data_pages", "shadow_waits", "shadow_ns", "ftl_gc_copies", "ftl_gc_copied_pages", "cfq_slices", "cfq_preemptions", "cfq_idle_waits", "cfq_idle_expired", "buffers_pages", "metadata_reads", "dir_reads", "i_mutex_waits", "i_mutex_wait_ns")
#: congestion_wait calls and their sleep, by caller (absent from older results: read as zeros).
WAIT_SITES = ("allocator", "direct reclaim", "kswapd")
#: Seeks by the distance the head moved (absent from older results: read as zeros).
SEEK_DIST_LABELS = ("Seeks under 1 MiB", "Seeks 1-16 MiB", "Seeks 16-256 MiB", "Seeks 256 MiB and over")
OPTIONAL_SITES = ("congestion_waits", "congestion_wait_ns")
#: Time tasks spent blocked, [who][for what] (absent from older results: read as zeros).
WAITERS = ("benchmark", "kswapd", "flusher", "journal")
WAIT_KINDS = ("requests", "pages", "journal")
OPTIONAL_WAITS = ("wait_ns", "wait_count")
SIZE_LABELS = ("<=4K", "8K", "16K", "32K", "64K", "128K", "256K", "512K", ">512K")
SEG_LABELS = ("1", "2-3", "4-7", "8-15", "16-31", "32-63", "64-127", ">=128")
TITLE = "Block I/O (mmtwin)"
#: Label column width of all the section's tables (its longest label), so their columns line up.
LABEL_WIDTH = len("Checkpoint blocks written")


def _array(b: dict, k: str, shape: Tuple[int, ...], default: Any = None) -> np.ndarray:
    """Entry `k` of `b` (or `default` when absent) as an array of `shape`; ValueError if not."""
    try:
        a = np.asarray(b.get(k, default), dtype=float)
    except (TypeError, ValueError):
        a = np.empty(0)
    if a.shape != shape or not np.isfinite(a).all():
        what = "a number" if not shape else f"a list of {shape[0]} numbers" if len(shape) == 1 else "a " + "x".join(map(str, shape)) + " list of numbers"
        raise ValueError(f"'{k}' must be {what}")
    return a


def parse(b: Any) -> Block:
    """One iteration's "block" entry as arrays; ValueError says what is wrong with it."""
    if not isinstance(b, dict):
        raise ValueError("must be an object")
    out = {k: _array(b, k, shape) for k, shape in SHAPES.items()}
    for k in OPTIONAL:
        v = b.get(k, 0)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not np.isfinite(v):
            raise ValueError(f"'{k}' must be a number")
        out[k] = np.asarray(v, dtype=float)
    for k in OPTIONAL_SITES:
        out[k] = _array(b, k, (len(WAIT_SITES),), [0] * len(WAIT_SITES))
    out["seek_dist_hist"] = _array(b, "seek_dist_hist", (len(SEEK_DIST_LABELS),), [0] * len(SEEK_DIST_LABELS))
    for k in OPTIONAL_WAITS:
        out[k] = _array(b, k, (len(WAITERS), len(WAIT_KINDS)), [[0] * len(WAIT_KINDS)] * len(WAITERS))
    return out


def mean(blocks: Sequence[Block]) -> Block:
    return {k: np.mean([b[k] for b in blocks], axis=0) for k in (*SHAPES, *OPTIONAL, *OPTIONAL_SITES, *OPTIONAL_WAITS, "seek_dist_hist")}


def has_io(b: Optional[Block]) -> bool:
    return b is not None and float(b["requests"].sum()) > 0


def tables(blocks: Sequence[Block], fmt: str = "current") -> List[Tuple[str, List[List[VmstatRow]]]]:
    """The section's tables, (title, rows of each kernel); none unless every kernel did I/O.
    Write rows are left out when no kernel wrote, the read histograms when no kernel read. `fmt`
    "2011" prints whole counts as integers."""
    if not blocks or not all(has_io(b) for b in blocks):
        return []
    writes = any(b["requests"][1] > 0 for b in blocks)
    journal = any(b["journal_commits"] > 0 for b in blocks)
    ftl = any(b["ftl_gc_copies"] > 0 for b in blocks)
    cfq = any(b["cfq_slices"] > 0 for b in blocks)
    buffers = any(b["buffers_pages"] > 0 or b["metadata_reads"] > 0 for b in blocks)
    dirs = any(b["dir_reads"] > 0 or b["i_mutex_waits"] > 0 for b in blocks)
    reads = any(b["requests"][0] > 0 for b in blocks)
    seek_detail = any(b["seek_ns"] > 0 for b in blocks)
    waits = [any(b["congestion_waits"][i] > 0 for b in blocks) for i in range(len(WAIT_SITES))]
    blocked = [(w, k) for w in range(len(WAITERS)) for k in range(len(WAIT_KINDS)) if any(b["wait_count"][w][k] > 0 for b in blocks)]

    def kernel(b: Block) -> List[List[VmstatRow]]:
        req = b["requests"]

        def per_rq(d: int, x: float) -> float:
            return float(x) / req[d] if req[d] else 0.0

        def count(label: str, x: float) -> VmstatRow:
            x = float(x)
            return VmstatRow(label, x, str(int(x)) if fmt == "2011" and x.is_integer() else f"{x:.2f}")

        def ratio(label: str, x: float) -> VmstatRow:
            return VmstatRow(label, x, f"{x:.2f}")

        def hist(h: np.ndarray, labels: Sequence[str]) -> List[VmstatRow]:
            pcts = [per_rq(0, n * 100) for n in h]
            return [VmstatRow(lbl, p, f"{p:.2f}%") for lbl, p in zip(labels, pcts)]

        rows = [
            count("Read requests", req[0]),
            ratio("Read KiB/request", per_rq(0, b["sectors"][0] / 2)),
            ratio("Read segments/request", per_rq(0, b["segments"][0])),
            count("Read merges", b["merges"][0]),
            count("Merges refused (segments)", b["merge_refused_segments"]),
        ]
        if writes:
            rows += [
                count("Write requests", req[1]),
                ratio("Write KiB/request", per_rq(1, b["sectors"][1] / 2)),
                ratio("Write segments/request", per_rq(1, b["segments"][1])),
            ]
        if journal:
            rows += [
                count("Journal commits", b["journal_commits"]),
                count("Journal blocks written", b["journal_blocks"]),
                count("Checkpoint blocks written", b["checkpoint_blocks"]),
                count("Ordered data pages", b["ordered_data_pages"]),
                ratio("Log writes shadowing (s)", float(b["shadow_ns"]) / 1e9),
                count("Shadow waits", b["shadow_waits"]),
            ]
        if buffers:
            # Metadata blocks (ext2/ext3 indirect blocks) in the block device's page cache.
            rows += [
                ratio("Buffers at end (MiB)", float(b["buffers_pages"]) * 4096 / (1 << 20)),
                count("Metadata blocks read", b["metadata_reads"]),
            ]
        if dirs:
            # Creates: directory blocks their lookups read, and their directory's i_mutex.
            rows += [
                count("Directory blocks read", b["dir_reads"]),
                count("i_mutex waits", b["i_mutex_waits"]),
                ratio("i_mutex waited (s)", float(b["i_mutex_wait_ns"]) / 1e9),
            ]
        if ftl:
            rows += [
                count("Erase blocks copied (FTL)", b["ftl_gc_copies"]),
                count("Pages copied (FTL)", b["ftl_gc_copied_pages"]),
            ]
        if cfq:
            # The CFQ scheduler's time slices, the active queues a new request preempted, and
            # its waits for a sync queue's task (and those that timed out).
            rows += [
                count("CFQ slices", b["cfq_slices"]),
                count("CFQ preemptions", b["cfq_preemptions"]),
                count("CFQ idle waits", b["cfq_idle_waits"]),
                count("CFQ idle waits expired", b["cfq_idle_expired"]),
            ]
        rows.append(count("Seeks", b["seeks"]))
        if seek_detail:
            # What kind of disorder the seeks were (each costs the device model's seek time),
            # and the part of the busy time spent reaching requests.
            rows += [count(lbl, n) for lbl, n in zip(SEEK_DIST_LABELS, b["seek_dist_hist"])]
            rows.append(ratio("Seek time (s)", float(b["seek_ns"]) / 1e9))
        rows.append(ratio("Device busy (s)", float(b["busy_ns"]) / 1e9))
        for i, site in enumerate(WAIT_SITES):
            if waits[i]:
                rows += [
                    count(f"Congestion waits, {site}", b["congestion_waits"][i]),
                    ratio(f"Congestion wait (s), {site}", float(b["congestion_wait_ns"][i]) / 1e9),
                ]
        # Time blocked waiting for free requests, for pages (their lock or writeback) and for
        # journals, by who waited.
        rows += [ratio(f"Wait for {WAIT_KINDS[k]} (s), {WAITERS[w]}", float(b["wait_ns"][w][k]) / 1e9) for w, k in blocked]
        return [rows, hist(b["rq_size_hist"][0], SIZE_LABELS), hist(b["rq_seg_hist"][0], SEG_LABELS)]

    per_kernel = [kernel(b) for b in blocks]
    titles = (TITLE, "Read request size", "Read segments per request") if reads else (TITLE,)
    return [(t, [k[i] for k in per_kernel]) for i, t in enumerate(titles)]
