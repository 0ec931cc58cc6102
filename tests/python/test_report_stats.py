"""Statistics, % formulas, significance tests and vmstat-derived rows of the MMTests report
(test vectors from /work/shared/reference/mmtests-report.md §6 and MMTests' Tutorial)."""

from __future__ import annotations

import math
import random

import pytest

from mmtwin.report import stats as st
from mmtwin.report import vmstat as vm

# --------------------------------------------------------------------------------------------
# % formulas against published reports


SEED_2011 = [
    # (formula, base, new, printed) — zlc-zone-reclaim (fs_mark, largedd), per-zone-dirty-limits
    ("pdiff", 54.90, 49.80, "-10.24"),  # Files/s min
    ("pdiff", 100.11, 135.17, "25.94"),  # Files/s mean
    ("pdiff", 100.11, 146.93, "31.87"),
    ("pdiff", 57.51, 138.97, "58.62"),  # Files/s stddev: the metric's own formula
    ("pdiff", 57.51, 158.69, "63.76"),
    ("pdiff", 361.10, 834.40, "56.72"),  # Files/s max
    ("pdiff", 361.10, 802.40, "55.00"),
    ("pndiff", 76704.00, 76501.00, "0.27"),  # Overhead min
    ("pndiff", 76704.00, 77784.00, "-1.39"),
    ("pndiff", 1485356.51, 1035797.83, "43.40"),  # Overhead mean
    ("pndiff", 1485356.51, 1594680.26, "-6.86"),
    ("pndiff", 1848122.53, 881489.88, "109.66"),  # Overhead stddev
    ("pndiff", 1848122.53, 1772354.90, "4.27"),
    ("pndiff", 7989060.00, 3369118.00, "137.13"),  # Overhead max
    ("pndiff", 7989060.00, 10135324.00, "-21.18"),
    ("pndiff", 59, 55, "7.27"),  # largedd download tar
    ("pndiff", 527, 296, "78.04"),  # largedd dd source files
    ("pndiff", 527, 320, "64.69"),
    ("pndiff", 36, 19, "89.47"),  # largedd delete source
    ("pndiff", 1054.54, 386.65, "172.74"),  # simple-writeback 512M xfs
    ("pndiff", 1054.54, 375.60, "180.76"),
    ("pndiff", 1054.54, 375.88, "180.55"),
]


@pytest.mark.parametrize("formula,base,new,printed", SEED_2011)
def test_2011_percentages_match_the_2011_postings(formula, base, new, printed):
    f = st.pdiff_2011 if formula == "pdiff" else st.pndiff_2011
    assert f"{f(new, base):.2f}" == printed


SEED_CURRENT = [
    # compaction-fast-free-scanner (2018): thpscale Amean fault-both-N (lower), Percentage huge-N
    ("pndiff", 864.83, 1006.88, "-16.43"),
    ("pndiff", 3566.05, 2460.97, "30.99"),
    ("pndiff", 5685.02, 4052.92, "28.71"),
    ("pndiff", 7289.40, 5929.65, "18.65"),
    ("pndiff", 10937.46, 8870.53, "18.90"),
    ("pndiff", 15440.48, 11464.86, "25.75"),
    ("pndiff", 20843.51, 14401.25, "30.91"),
    ("pdiff", 96.03, 96.94, "0.95"),
    ("pdiff", 71.43, 95.43, "33.60"),
    ("pdiff", 66.92, 97.79, "46.13"),
]


@pytest.mark.parametrize("formula,base,new,printed", SEED_CURRENT)
def test_current_percentages_match_the_2018_posting(formula, base, new, printed):
    f = st.pdiff if formula == "pdiff" else st.pndiff
    assert f"{f(new, base):.2f}" == printed


def test_percentage_edge_cases():
    assert st.pdiff(5, 5) == 0 and st.pdiff(0, 5) == 0 and st.pdiff(5, 0) == 100
    assert st.pndiff(5, 5) == 0 and st.pndiff(0, 5) == 100 and st.pndiff(5, 0) == -99
    assert st.pdiff_2011(0, 5) == 0 and st.pndiff_2011(5, 5) == 0
    # positive always means better
    assert st.pdiff(110, 100) > 0 and st.pndiff(90, 100) > 0
    assert st.compare_func("higher") is st.pdiff and st.compare_func("lower", "2011") is st.pndiff_2011


# --------------------------------------------------------------------------------------------
# Means and spreads


def test_amean_gmean_min_max():
    x = [2, 8, 4]
    assert st.amean(x) == pytest.approx(14 / 3)
    assert st.gmean(x) == pytest.approx(4.0)
    assert st.minimum(x) == 2 and st.maximum(x) == 8
    assert math.isnan(st.amean([])) and math.isnan(st.minimum([]))


def test_hmean_and_hstddev_by_hand():
    x = [1, 2, 4]
    h = 3 / (1 + 1 / 2 + 1 / 4)  # 12/7
    assert st.hmean(x) == pytest.approx(h)
    # Σ(1/x - 1/H)² = (5/12)² + (1/12)² + (4/12)² = 42/144 = 7/24; HStddev = sqrt(7/24·H⁴/3)
    assert st.hstddev(x) == pytest.approx(math.sqrt(7 / 24 * h**4 / 3))
    assert st.hstddev(x) == pytest.approx(0.916324, abs=1e-6)
    assert st.coeffvar(x, "hmean") == pytest.approx(st.hstddev(x) * 100 / h)
    assert math.isnan(st.hmean([1, 0, 2])) and math.isnan(st.hmean([3, -1]))
    assert math.isnan(st.hstddev([5]))


def test_stddev_sample_and_population():
    x = [2, 4, 4, 4, 5, 5, 7, 9]
    assert st.stddev(x) == pytest.approx(math.sqrt(32 / 7))
    assert st.stddev(x, ddof=0) == pytest.approx(2.0)
    assert math.isnan(st.stddev([3.0]))
    assert st.stddev([3.0], ddof=0) == 0
    assert st.coeffvar(x) == pytest.approx(math.sqrt(32 / 7) * 100 / 5)
    assert st.coeffvar([3.0]) == 0 and st.coeffvar([0, 0]) == 0


def test_best_mean_selects_best_first():
    x = list(range(1, 21))
    random.Random(3).shuffle(x)
    assert st.best_count(20, 95) == 19
    assert st.best_mean(x, 95, "lower") == pytest.approx(10.0)  # amean of 1..19
    assert st.best_mean(x, 95, "higher") == pytest.approx(st.hmean(range(2, 21)))  # hmean of 20..2
    assert st.best_mean([5, 1, 3], 95, "lower") == pytest.approx(2.0)  # int(2.85) = 2 → 1, 3
    assert st.best_mean([5, 1, 3], 95, "higher") == pytest.approx(3.75)  # hmean(5, 3)
    assert st.best_mean([7], 95, "lower") == 7  # at least one sample
    assert list(st.best_first([2, 3, 1], "higher")) == [3, 2, 1]


# --------------------------------------------------------------------------------------------
# Significance


def test_ci_quantile_is_1_96():
    assert st.CI_Q == pytest.approx(1.959964, abs=1e-6)


def test_ci_overlap_significance_on_and_off():
    # half-widths 1.96 each: intervals touch at a difference of 3.92
    assert st.ci_significant(10, 1, 14, 1)
    assert st.ci_significant(14, 1, 10, 1)
    assert not st.ci_significant(10, 1, 13.9, 1)
    assert st.cidiff(10, 1.96, 14, 1.96) == pytest.approx(-4 / 3.92)
    # no interval (n <= 1) → no marker
    assert not st.ci_significant(10, float("nan"), 100, 1)
    assert not st.ci_significant_samples([10], [100, 101], "lower")
    # zero spread on both sides: cidiff falls back to the raw difference
    assert not st.ci_significant(5, 0, 5.5, 0)
    assert st.ci_significant(5, 0, 7, 0)
    assert st.ci_significant_samples([100, 101, 99], [200, 201, 199], "higher")


def test_ttest_against_hand_computation():
    # SE = sqrt(4/5 + 9/6) = sqrt(2.3); t = 3/SE = 1.97814; df = 9; two-sided p = 0.079296
    sig, p = st.ttest(10, 2, 5, 13, 3, 6)
    assert p == pytest.approx(0.0792965, abs=1e-6)
    assert sig  # p < 0.10
    sig05, _ = st.ttest(10, 2, 5, 13, 3, 6, level=0.05)
    assert not sig05
    assert st.ttest(5, 0, 3, 5, 0, 3) == (False, 1.0)
    assert st.ttest(5, 0, 3, 6, 0, 3) == (True, 0.0)
    assert st.ttest(5, float("nan"), 1, 6, 1, 3)[0] is False
    sig, p = st.ttest_samples([1, 2, 3, 4], [1, 2, 3, 4], "lower")
    assert not sig and p == pytest.approx(1.0)


# --------------------------------------------------------------------------------------------
# vmstat: current layout (MMTests Tutorial, BASELINE and BUSY columns)

TUTORIAL = {
    "BASELINE": dict(
        elapsed=975.82,
        deltas=dict(
            pgfault=5884093 + 419, pgmajfault=419, pswpin=195, pswpout=271, allocstall_dma32=7,
            pgalloc_dma=8338, pgalloc_dma32=7846643, pgscan_direct=348, pgscan_kswapd=85349,
            pgsteal_kswapd=72699, pgsteal_direct=226, nr_vmscan_write=271, nr_vmscan_immediate_reclaim=4,
            pgpgin=421072, pgpgout=256452, slabs_scanned=13654, pginodesteal=23, kswapd_inodesteal=1265,
            thp_fault_alloc=340, thp_fault_fallback=41, thp_collapse_alloc=34, thp_collapse_alloc_failed=6,
            compact_stall=16, compact_success=2, compact_fail=14, pgmigrate_success=80850, pgmigrate_fail=19162,
            compact_isolated=183702, compact_migrate_scanned=416608, compact_free_scanned=1088889,
            compact_daemon_wake=114, compact_daemon_migrate_scanned=99537, compact_daemon_free_scanned=242562,
            numa_hit=2447987, numa_local=2447987,
        ),
        expect={
            "Minor Faults": "5884093.00", "Major Faults": "419.00", "Allocation stalls": "7.00",
            "Direct pages scanned": "348.00", "Kswapd pages scanned": "85349.00",
            "Kswapd pages reclaimed": "72699.00", "Direct pages reclaimed": "226.00",
            "Kswapd efficiency %": "85.18", "Kswapd velocity": "87.46", "Direct efficiency %": "64.94",
            "Direct velocity": "0.36", "Percentage direct scans": "0.41", "Page writes by reclaim": "271.00",
            "Page writes file": "0.00", "Page writes anon": "271.00", "Page reclaim immediate": "4.00",
            "Sector Reads": "421072.00", "Compaction efficiency": "12.50", "Compact scan efficiency": "38.26",
            "Compaction cost": "90.60", "Kcompactd wake": "114.00", "NUMA alloc hit": "2447987.00",
            "NUMA hint local percent": "100.00", "AutoNUMA cost": "0.00",
        },
    ),
    "BUSY": dict(
        elapsed=1353.28,
        deltas=dict(
            pgfault=2325847 + 118, pgmajfault=118, pswpout=9045, pgscan_direct=119, pgscan_kswapd=76044,
            pgsteal_kswapd=32093, pgsteal_direct=69, nr_vmscan_write=9045, thp_split_page=3,
            compact_stall=6, compact_fail=6, pgmigrate_success=61020, pgmigrate_fail=31366,
            compact_isolated=157849, compact_migrate_scanned=747050, compact_free_scanned=2286265,
        ),
        expect={
            "Minor Faults": "2325847.00", "Kswapd efficiency %": "42.20", "Kswapd velocity": "56.19",
            "Direct efficiency %": "57.98", "Direct velocity": "0.09", "Percentage direct scans": "0.16",
            "Page writes file": "0.00", "Page writes anon": "9045.00", "THP split": "3.00",
            "Compaction efficiency": "0.00", "Compact scan efficiency": "32.68", "Compaction cost": "72.01",
        },
    ),
}


@pytest.mark.parametrize("column", sorted(TUTORIAL))
def test_current_vmstat_matches_tutorial(column):
    c = TUTORIAL[column]
    rows = {r.label: r for r in vm.current_vmstat(c["deltas"], c["elapsed"])}
    for label, printed in c["expect"].items():
        assert f"{rows[label].value:.2f}" == printed, label


def test_current_vmstat_row_order_and_defaults():
    labels = [r.label for r in vm.current_vmstat({}, 10.0)]
    assert labels == vm.CURRENT_LABELS
    assert labels[:5] == ["Minor Faults", "Major Faults", "Swap Ins", "Swap Outs", "Allocation stalls"]
    assert labels.index("Compaction failures") < labels.index("Compaction efficiency") < labels.index("Page migrate success")
    assert labels[-1] == "AutoNUMA cost" and len(labels) == 62
    empty = {r.label: r.value for r in vm.current_vmstat({}, 10.0)}
    assert empty["Kswapd efficiency %"] == 100 and empty["Direct efficiency %"] == 100
    assert empty["Percentage direct scans"] == 0 and empty["Compact scan efficiency"] == 0
    # a velocity with no elapsed time is 0, not a division error
    assert {r.label: r.value for r in vm.current_vmstat({"pgscan_kswapd": 5}, 0)}["Kswapd velocity"] == 0


def test_current_vmstat_old_and_new_counter_names():
    # Linux 3.0: per-zone names, pgsteal_* includes kswapd's reclaim, kswapd_steal counted apart
    old = dict(pgscan_kswapd_normal=700, pgscan_kswapd_dma32=300, pgscan_direct_normal=500, kswapd_steal=800,
               pgsteal_normal=1000, pgsteal_dma32=200, allocstall=4, compact_blocks_moved=2,
               compact_pages_moved=100, compact_pagemigrate_failed=10)
    v = vm.current_values(old, 10.0)
    assert v["Kswapd pages scanned"] == 1000 and v["Direct pages scanned"] == 500
    assert v["Kswapd pages reclaimed"] == 800 and v["Direct pages reclaimed"] == 400
    assert v["Percentage direct scans"] == pytest.approx(500 * 100 / 1500)
    assert v["Page migrate success"] == 100 and v["Page migrate failure"] == 10
    assert v["Compaction cost"] == pytest.approx((7 * 2 * 16384 + 1038 * 100 + 14 * 10) / 1e6)
    # Linux 6.x: node-wide names, allocstall per zone (summed)
    new = dict(pgscan_kswapd=1000, pgsteal_kswapd=800, pgsteal_direct=40, pgscan_direct=50,
               allocstall_normal=3, allocstall_movable=1, kswapd_steal=0)
    v = vm.current_values(new, 10.0)
    assert v["Direct pages reclaimed"] == 40 and v["Allocation stalls"] == 4
    assert v["Kswapd velocity"] == 100
    v = vm.current_values(dict(numa_pte_updates=2000, numa_huge_pte_updates=2, numa_hint_faults=8,
                               numa_hint_faults_local=6, numa_pages_migrated=10), 1.0)
    assert v["NUMA PTE updates"] == 2000 - 1024 and v["NUMA PMD updates"] == 2
    assert v["NUMA hint local percent"] == 75
    assert v["AutoNUMA cost"] == pytest.approx((7 * 2000 + 5000 * 8 + 19 * 10) / 1e6)
    assert vm.current_values(dict(compact_migrate_scanned=5), 1.0)["Compact scan efficiency"] == 1


def test_duration_rows():
    assert [(r.label, r.value) for r in vm.current_duration(632.09, 762.86, 975.82)] == [
        ("User", 632.09), ("System", 762.86), ("Elapsed", 975.82)]
    rows = vm.duration_2011(250.0, 251.49, 2451.57)
    assert [(r.label, r.text) for r in rows] == [
        ("User/Sys Time Running Test (seconds)", "501.49"), ("Total Elapsed Time (seconds)", "2451.57")]


# --------------------------------------------------------------------------------------------
# vmstat: 2011 layout (zlc-zone-reclaim and per-zone-dirty-limits postings)


def _zlc(direct_scan, kswapd_scan, direct_steal, kswapd_steal, **extra):
    d = dict(pgscan_direct_normal=direct_scan, pgscan_kswapd_normal=kswapd_scan,
             pgsteal_normal=direct_steal + kswapd_steal, kswapd_steal=kswapd_steal)
    d.update(extra)
    return d


def test_2011_vmstat_fsmark_columns():
    vanilla = {r.label: r.text for r in vm.vmstat_2011(_zlc(13091697, 0, 13037777, 0), 2451.57)}
    assert vanilla["Kswapd efficiency"] == "100%"
    assert vanilla["Kswapd velocity"] == "0.000"
    assert vanilla["Direct efficiency"] == "99%"
    assert vanilla["Direct velocity"] == "5340.128"
    assert vanilla["Percentage direct scans"] == "100%"  # as published, although kswapd scanned nothing
    assert vanilla["Direct pages reclaimed"] == "13037777"
    zlcfirst = {r.label: r.text for r in vm.vmstat_2011(_zlc(8966863, 1830011, 8956828, 1829068), 2257.48)}
    assert zlcfirst["Kswapd efficiency"] == "99%"
    assert zlcfirst["Kswapd velocity"] == "810.643"
    assert zlcfirst["Direct velocity"] == "3972.068"
    assert zlcfirst["Percentage direct scans"] == "83%"
    assert zlcfirst["Kswapd pages reclaimed"] == "1829068"
    assert vm.vmstat_2011({}, 1.0)[8].text == "100%"


def test_2011_vmstat_integer_efficiency_truncates():
    # largedd, zlcfirst: 2732949*100/69315973 = 3.94 → "3%"; vanilla 5858054*100/17482342 = 33.5 → "33%"
    assert {r.label: r.text for r in vm.vmstat_2011(_zlc(69315973, 519123, 2732949, 466501), 375.02)}["Direct efficiency"] == "3%"
    assert {r.label: r.text for r in vm.vmstat_2011(_zlc(17482342, 0, 5858054, 0), 624.56)}["Direct efficiency"] == "33%"
    # per-zone-dirty-limits: Kswapd efficiency 62%, Page writes file = 130541 - 115864
    d = _zlc(3268014, 5351371, 3267145, 3320848, nr_vmscan_write=130541, pswpout=115864)
    rows = {r.label: r.text for r in vm.vmstat_2011(d, 4220.48)}
    assert rows["Kswapd efficiency"] == "62%" and rows["Percentage direct scans"] == "37%"
    assert rows["Kswapd velocity"] == "1267.953" and rows["Direct velocity"] == "774.323"
    assert rows["Page writes file"] == "14677" and rows["Page writes anon"] == "115864"


def test_2011_vmstat_labels():
    labels = [r.label for r in vm.vmstat_2011({}, 1.0)]
    assert labels[:4] == ["Page Ins", "Page Outs", "Swap Ins", "Swap Outs"]
    assert labels[-2:] == ["Compaction pages moved", "Compaction move failure"]
    assert "Page reclaim invalidate" in labels and "THP splits" in labels and len(labels) == 31
