"""The "duration" and "vmstat" sections of an MMTests report, from summed /proc/vmstat deltas.

Input is a mapping of exact /proc/vmstat counter names to their delta over the whole benchmark
(after - before; mmtwin sums the per-iteration deltas) and the elapsed seconds of the benchmark.
A counter that is missing counts as 0. Two layouts:

* current – bin/lib/MMTests/MonitorMmtestsvmstat.pm (row order `@_fieldOrder`, names
  `%_fieldNameMap`) and MonitorDuration.pm; values printed `%15.2f` / `%12.2f` by the caller.
* 2011    – subreport/mmtests-vmstat and subreport/mmtests-duration @78b06ca5^ (Jul–Dec 2011):
  integers, integer efficiencies with "%", velocities with three decimals.

Deliberate differences from MMTests' code, so that old and new kernels give comparable columns:

* Renamed counters are added to their new name instead of assigned: `allocstall_<zone>` (4.x+)
  are summed into Allocation stalls (MMTests keeps only the last one read, usually
  allocstall_movable); `compact_pages_moved`/`compact_pagemigrate_failed` (≤3.x) add to
  Page migrate success/failure (MMTests renames the latter to an unused "pgmigrate_failed"
  key); `thp_split` adds to THP split.
* The 2011 layout also sums the node-wide/later names (pgscan_kswapd, pgsteal_direct, …,
  thp_split_page, pgmigrate_*), so a 6.x kernel's column is not all zeros.
* A velocity with no elapsed time is 0 (MMTests divides by a default of 1 s, 2011 by zero).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Mapping

Deltas = Mapping[str, float]

ZONES = ("dma", "dma32", "normal", "movable", "high")
ALLOCSTALL_ZONES = ("dma", "dma32", "normal", "movable", "highmem")

#: Compaction counters only ≤3.x kernels have; their presence selects the old cost model.
OLD_COMPACTION = ("compact_blocks_moved", "compact_pages_moved", "compact_pagemigrate_failed")


@dataclass(frozen=True)
class VmstatRow:
    """One row: the operation name, its numeric value, and the text its layout prints."""

    label: str
    value: float
    text: str


def _g(d: Deltas, *keys: str) -> float:
    return sum(d.get(k, 0) or 0 for k in keys)


def _div(a: float, b: float, default: float) -> float:
    return a / b if b else default


#: The counters of pages kswapd scanned: pgscan_kswapd_<zone> (≤4.7), pgscan_kswapd (4.8+).
KSWAPD_SCANNED = (*(f"pgscan_kswapd_{z}" for z in ZONES), "pgscan_kswapd")
#: The counters of pages direct reclaim scanned: pgscan_direct_<zone> (≤4.7), pgscan_direct (4.8+).
DIRECT_SCANNED = (*(f"pgscan_direct_{z}" for z in ZONES), "pgscan_direct")


def kswapd_scanned(d: Deltas) -> float:
    """Σ pgscan_kswapd_<zone> (≤4.7) + pgscan_kswapd (4.8+)."""
    return _g(d, *KSWAPD_SCANNED)


def direct_scanned(d: Deltas) -> float:
    """Σ pgscan_direct_<zone> (≤4.7) + pgscan_direct (4.8+)."""
    return _g(d, *DIRECT_SCANNED)


def kswapd_reclaimed(d: Deltas) -> float:
    """kswapd_steal (≤3.3) + Σ pgsteal_kswapd_<zone> (3.4–4.7) + pgsteal_kswapd (4.8+)."""
    return _g(d, "kswapd_steal", *(f"pgsteal_kswapd_{z}" for z in ZONES), "pgsteal_kswapd")


def direct_reclaimed(d: Deltas) -> float:
    """Σ pgsteal_<zone> (≤3.3, which includes kswapd's) + Σ pgsteal_direct_<zone> + pgsteal_direct,
    minus the kswapd total on kernels that count kswapd_steal separately (MonitorMmtestsvmstat.pm;
    the 2011 subreport subtracts kswapd_steal the same way)."""
    total = _g(d, *(f"pgsteal_{z}" for z in ZONES), *(f"pgsteal_direct_{z}" for z in ZONES), "pgsteal_direct")
    if d.get("kswapd_steal"):
        total -= kswapd_reclaimed(d)
    return total


def compaction_cost(d: Deltas) -> float:
    """MMTests' x86-64 compaction cost model in millions of "operations"
    (MonitorMmtestsvmstat.pm): Ca=7, Ci=Ca+12=19, Cmc=2·(Ca+512)=1038, Cmf=2·Ca=14.

    4.x+: (7·compact_migrate_scanned + 19·compact_isolated + 1038·pgmigrate_success
    + 14·pgmigrate_fail)/1e6. ≤3.x (compact_blocks_moved era): (7·compact_blocks_moved·16384
    + 1038·compact_pages_moved + 14·compact_pagemigrate_failed)/1e6."""
    if any(d.get(k) for k in OLD_COMPACTION):
        cost = 7 * _g(d, "compact_blocks_moved") * 16384 + 1038 * _g(d, "compact_pages_moved") + 14 * _g(d, "compact_pagemigrate_failed")
    else:
        cost = (
            7 * _g(d, "compact_migrate_scanned")
            + 19 * _g(d, "compact_isolated")
            + 1038 * _g(d, "pgmigrate_success")
            + 14 * _g(d, "pgmigrate_fail")
        )
    return cost / 1e6


def current_values(d: Deltas, elapsed: float) -> Dict[str, float]:
    """All current-layout rows, label → value (MonitorMmtestsvmstat.pm `extractReport`)."""
    ks, ds = kswapd_scanned(d), direct_scanned(d)
    kr, dr = kswapd_reclaimed(d), direct_reclaimed(d)
    vel = (lambda n: n / elapsed) if elapsed > 0 else (lambda n: 0.0)
    m_scan, f_scan = _g(d, "compact_migrate_scanned"), _g(d, "compact_free_scanned")
    if m_scan:
        cscan = m_scan * 100 / f_scan if f_scan > 0 else 1.0
    else:
        cscan = 0.0  # undefined in MMTests, printed as 0
    hint = _g(d, "numa_hint_faults")
    v = {
        "Minor Faults": _g(d, "pgfault") - _g(d, "pgmajfault"),
        "Major Faults": _g(d, "pgmajfault"),
        "Swap Ins": _g(d, "pswpin"),
        "Swap Outs": _g(d, "pswpout"),
        "Allocation stalls": _g(d, "allocstall", *(f"allocstall_{z}" for z in ALLOCSTALL_ZONES)),
        "Fragmentation stalls": _g(d, "fragment_stall"),
        "DMA allocs": _g(d, "pgalloc_dma"),
        "DMA32 allocs": _g(d, "pgalloc_dma32"),
        "Normal allocs": _g(d, "pgalloc_normal"),
        "Movable allocs": _g(d, "pgalloc_movable"),
        "Direct pages scanned": ds,
        "Kswapd pages scanned": ks,
        "Kswapd pages reclaimed": kr,
        "Direct pages reclaimed": dr,
        "Kswapd efficiency %": _div(kr * 100, ks, 100.0),
        "Kswapd velocity": vel(ks),
        "Direct efficiency %": _div(dr * 100, ds, 100.0),
        "Direct velocity": vel(ds),
        "Percentage direct scans": _div(ds * 100, ks + ds, 0.0),
        "Page writes by reclaim": _g(d, "nr_vmscan_write"),
        "Page writes file": _g(d, "nr_vmscan_write") - _g(d, "pswpout"),
        "Page writes anon": _g(d, "pswpout"),
        "Page reclaim immediate": _g(d, "nr_vmscan_immediate_reclaim"),
        "Sector Reads": _g(d, "pgpgin"),
        "Sector Writes": _g(d, "pgpgout"),
        "Page rescued immediate": _g(d, "pgrescued"),
        "Slabs scanned": _g(d, "slabs_scanned"),
        "Direct inode steals": _g(d, "pginodesteal"),
        "Kswapd inode steals": _g(d, "kswapd_inodesteal"),
        "Kswapd skipped wait": _g(d, "kswapd_skip_congestion_wait"),
        "THP fault alloc": _g(d, "thp_fault_alloc"),
        "THP fault fallback": _g(d, "thp_fault_fallback"),
        "THP collapse alloc": _g(d, "thp_collapse_alloc"),
        "THP collapse fail": _g(d, "thp_collapse_alloc_failed"),
        "THP split": _g(d, "thp_split_page", "thp_split"),
        "THP split failed": _g(d, "thp_split_page_failed", "thp_failed"),
        "Compaction stalls": _g(d, "compact_stall"),
        "Compaction success": _g(d, "compact_success"),
        "Compaction failures": _g(d, "compact_fail"),
        "Compaction efficiency": _div(_g(d, "compact_success") * 100, _g(d, "compact_stall"), 0.0),
        "Page migrate success": _g(d, "pgmigrate_success", "compact_pages_moved"),
        "Page migrate failure": _g(d, "pgmigrate_fail", "compact_pagemigrate_failed"),
        "Compaction pages isolated": _g(d, "compact_isolated"),
        "Compaction migrate scanned": m_scan,
        "Compaction free scanned": f_scan,
        "Compact scan efficiency": cscan,
        "Compaction cost": compaction_cost(d),
        "Kcompactd wake": _g(d, "compact_daemon_wake"),
        "Kcompactd migrate scanned": _g(d, "compact_daemon_migrate_scanned"),
        "Kcompactd free scanned": _g(d, "compact_daemon_free_scanned"),
        "NUMA alloc hit": _g(d, "numa_hit"),
        "NUMA alloc miss": _g(d, "numa_miss"),
        "NUMA interleave hit": _g(d, "numa_interleave"),
        "NUMA alloc local": _g(d, "numa_local"),
        "NUMA base-page range updates": _g(d, "numa_pte_updates"),
        "NUMA PTE updates": _g(d, "numa_pte_updates") - 512 * _g(d, "numa_huge_pte_updates"),
        "NUMA PMD updates": _g(d, "numa_huge_pte_updates"),
        "NUMA hint faults": hint,
        # sic: MMTests labels the raw count with a "%"
        "NUMA hint local faults %": _g(d, "numa_hint_faults_local"),
        "NUMA hint local percent": _div(_g(d, "numa_hint_faults_local") * 100, hint, 100.0),
        "NUMA pages migrated": _g(d, "numa_pages_migrated"),
        "AutoNUMA cost": (7 * _g(d, "numa_pte_updates") + 5000 * hint + 19 * _g(d, "numa_pages_migrated")) / 1e6,
    }
    return {k: float(x) for k, x in v.items()}


#: Row order of the current layout (MonitorMmtestsvmstat.pm `@_fieldOrder`).
CURRENT_LABELS: List[str] = list(current_values({}, 1.0))


def current_vmstat(d: Deltas, elapsed: float) -> List[VmstatRow]:
    """Current-layout vmstat rows (printed as `Ops <label>` with `%15.2f`)."""
    return [VmstatRow(k, x, f"{x:.2f}") for k, x in current_values(d, elapsed).items()]


def current_duration(user: float, system: float, elapsed: float) -> List[VmstatRow]:
    """Current duration rows (printed as `Duration <label>` with `%12.2f`; MonitorDuration.pm)."""
    return [VmstatRow(k, float(x), f"{x:.2f}") for k, x in (("User", user), ("System", system), ("Elapsed", elapsed))]


# --------------------------------------------------------------------------------------------
# 2011 (subreport/mmtests-vmstat, subreport/mmtests-duration @78b06ca5^)


def _int_text(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:.2f}"


def _pct_int(num: float, den: float) -> int:
    """Shell integer arithmetic num*100/den, truncated toward zero."""
    q = abs(int(num)) * 100 // abs(int(den))
    return q if (num >= 0) == (den > 0) else -q


def vmstat_2011(d: Deltas, elapsed: float) -> List[VmstatRow]:
    """2011 vmstat rows, printed `%-40s` label then `%10s` per kernel.

    Efficiencies are integer percentages (100% with no scans); Percentage direct scans is
    direct·100/(kswapd+direct), 0 with no scans at all. (The 78b06ca5^ script printed 0% whenever
    kswapd scanned nothing, but the July 2011 posting in zlc-zone-reclaim shows 100% for
    13091697 direct and 0 kswapd scans; the published behaviour is followed.)"""
    ks, ds = kswapd_scanned(d), direct_scanned(d)
    kr, dr = kswapd_reclaimed(d), direct_reclaimed(d)

    rows: List[VmstatRow] = []

    def count(label: str, x: float) -> None:
        rows.append(VmstatRow(label, float(x), _int_text(x)))

    def pct(label: str, x: int) -> None:
        rows.append(VmstatRow(label, float(x), f"{x}%"))

    def velocity(label: str, n: float) -> None:
        x = n / elapsed if elapsed > 0 else 0.0
        rows.append(VmstatRow(label, x, f"{x:.3f}"))

    count("Page Ins", _g(d, "pgpgin"))
    count("Page Outs", _g(d, "pgpgout"))
    count("Swap Ins", _g(d, "pswpin"))
    count("Swap Outs", _g(d, "pswpout"))
    count("Direct pages scanned", ds)
    count("Kswapd pages scanned", ks)
    count("Kswapd pages reclaimed", kr)
    count("Direct pages reclaimed", dr)
    pct("Kswapd efficiency", _pct_int(kr, ks) if ks > 0 else 100)
    velocity("Kswapd velocity", ks)
    pct("Direct efficiency", _pct_int(dr, ds) if ds > 0 else 100)
    velocity("Direct velocity", ds)
    pct("Percentage direct scans", _pct_int(ds, ks + ds) if ks + ds > 0 else 0)
    count("Page writes by reclaim", _g(d, "nr_vmscan_write"))
    count("Page writes file", _g(d, "nr_vmscan_write") - _g(d, "pswpout"))
    count("Page writes anon", _g(d, "pswpout"))
    # The lesskswapd series' counter: nr_vmscan_invalidate as tested in July 2011, merged in
    # 3.2 as nr_vmscan_immediate_reclaim (the twin's 3.x kernels count under the merged name).
    count("Page reclaim invalidate", _g(d, "nr_vmscan_invalidate") + _g(d, "nr_vmscan_immediate_reclaim"))
    count("Slabs scanned", _g(d, "slabs_scanned"))
    count("Direct inode steals", _g(d, "pginodesteal"))
    count("Kswapd inode steals", _g(d, "kswapd_inodesteal"))
    count("Kswapd skipped wait", _g(d, "kswapd_skip_congestion_wait"))
    count("THP fault alloc", _g(d, "thp_fault_alloc"))
    count("THP collapse alloc", _g(d, "thp_collapse_alloc"))
    count("THP splits", _g(d, "thp_split", "thp_split_page"))
    count("THP fault fallback", _g(d, "thp_fault_fallback"))
    count("THP collapse fail", _g(d, "thp_collapse_alloc_failed"))
    count("Compaction stalls", _g(d, "compact_stall"))
    count("Compaction success", _g(d, "compact_success"))
    count("Compaction failures", _g(d, "compact_fail"))
    count("Compaction pages moved", _g(d, "compact_pages_moved", "pgmigrate_success"))
    count("Compaction move failure", _g(d, "compact_pagemigrate_failed", "pgmigrate_fail"))
    return rows


def duration_2011(user: float, system: float, elapsed: float) -> List[VmstatRow]:
    """2011 duration rows (subreport/mmtests-duration @ec3288c6 .. 78b06ca5^): user+system CPU
    seconds and elapsed seconds, shown with two decimals as /usr/bin/time printed them."""
    cpu = float(user) + float(system)
    return [
        VmstatRow("User/Sys Time Running Test (seconds)", cpu, f"{cpu:.2f}"),
        VmstatRow("Total Elapsed Time (seconds)", float(elapsed), f"{float(elapsed):.2f}"),
    ]
