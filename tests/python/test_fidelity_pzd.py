"""Fidelity: the per-zone-dirty-limits seed's directions on the reduced scenario (three
iterations: at 4608M the runs are bimodal, so means and sums are asserted).

Asserted (the seed's findings): with per-zone dirty limits, reclaim meets almost no dirty file
pages, so file writes from reclaim fall to near zero on every file system; the 512M runs on
ext3 and xfs, where those writes are real I/O scattered into the flusher's stream, finish
sooner by a large factor (the USB key's flash translation layer copies an erase block for
each write away from its two open ones: the twin's vanilla took 1.27x (ext3) and 1.54x (xfs)
the patched time, the seed's 1.79x and 2.81x; asserted: more than 1.2x; since session 52, on
ext3 only 1.06x, and 1.05x since session 53, an xfail, see EXT3_SINCE_SESSION_52; since session
54 the scenario runs CFQ, the seeds' kernels' default scheduler, and xfs's gain is 2.29x (session 56) on the
full matrix: CFQ serves kswapd's scattered writes first once they are 250 ms old). Until session 44,
when kswapd wrote into a full request pool without sleeping for a request, 1.32x and 1.47x,
with no direct reclaim in vanilla, where the seed's had 30% and 37% of its scanning), while ext4 (whose
writepage refuses delalloc pages from reclaim: counted, no I/O) stays about flat; at 4608M
direct reclaim appears with per-zone limits and the gain disappears. In the runs where the
small Normal zone goes over its own dirty limit (its dirtyable memory is smaller by the buffer
heads and tree nodes allocated from it), write allocations pass it by, it never wakes kswapd,
and DMA32 sits between its min watermark plus the lowmem reserve and its low watermark, where
direct reclaim does kswapd's work; in the others it does not form. The seed's ext4 shows no
direct reclaim at 4608M; the twin's does in some runs. See EXPERIMENTS.md.
"""

from __future__ import annotations

import pytest

from tests.python.conftest import ROOT
from tests.python.fidelity import metric_mean, run_scenario, scanned
from tests.python.fidelity import vmstat as _vm

SCENARIO = ROOT / "scenarios" / "seeds" / "per-zone-dirty-limits-reduced.toml"
VANILLA, PZD = "3.0.0-vanilla", "perzonedirty-v1r1"


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    return run_scenario(SCENARIO, tmp_path_factory.mktemp("fid") / "pzd")


def _dd_time(out, bench, kernel):
    return metric_mean(out, bench, kernel, "1")


def _file_writes(vm):
    return vm.get("nr_vmscan_write", 0) - vm.get("pswpout", 0)


def _direct(vm):
    return scanned(vm, "direct")


@pytest.mark.parametrize("fs", ["ext3", "ext4", "xfs"])
def test_per_zone_limits_cut_file_writes_from_reclaim_to_near_zero(report, fs):
    bench = f"simple-writeback-512M-{fs}"
    vanilla, pzd = _file_writes(_vm(report, bench, VANILLA)), _file_writes(_vm(report, bench, PZD))
    assert vanilla > 1000
    assert pzd <= vanilla / 100


EXT3_SINCE_SESSION_52 = pytest.mark.xfail(
    strict=True,
    reason="since session 52 ext3's commit writes ordered data buffer by buffer, as 3.0's jbd does: "
    "the pages stay dirty until a writepage finds their buffers clean, and vanilla's kswapd writes "
    "fewer of them for real (57K a run against 113K; the seed's 117K), so per-zone limits gain "
    "only 6% at 512M (EXPERIMENTS.md, session 52); 5% since session 53's sync request pool and "
    "writers' waits for the log write; 1.05x still under CFQ (session 54), where the commit's "
    "ordered data and the flusher's writes alternate by slices in both kernels",
)


@pytest.mark.parametrize("fs", [pytest.param("ext3", marks=EXT3_SINCE_SESSION_52), "xfs"])
def test_512m_runs_with_real_reclaim_writes_finish_sooner_by_a_large_factor(report, fs):
    bench = f"simple-writeback-512M-{fs}"
    assert _dd_time(report, bench, VANILLA) > 1.2 * _dd_time(report, bench, PZD)


def test_512m_xfs_gains_twice_over_under_cfq(report):
    # Since session 54 (CFQ): vanilla's kswapd writes xfs delalloc clusters ahead of the
    # flusher, and CFQ's 250 ms async FIFO check serves them first, each costing the USB key
    # an erase-block copy; the twin's gain is 2.29x on the full matrix (session 56, dd syncing its file), the seed's 2.81x.
    bench = "simple-writeback-512M-xfs"
    assert _dd_time(report, bench, VANILLA) > 2.0 * _dd_time(report, bench, PZD)


def test_512m_ext4_stays_about_flat(report):
    bench = "simple-writeback-512M-ext4"
    v, p = _dd_time(report, bench, VANILLA), _dd_time(report, bench, PZD)
    assert abs(p - v) / v < 0.03




EXT3_4608M_UNDER_CFQ = pytest.mark.xfail(
    strict=True,
    reason="since session 54 the scenario runs CFQ, 3.0's default scheduler: kjournald's ordered "
    "data (its sync queue) and the flusher's and throttled writer's writes of the same file (the "
    "async queue) take turns by time slices in two areas of the file, and the USB key copies an "
    "erase block at most switches (5.0M pages copied a run at 4608M in vanilla, 3.6M with "
    "per-zone limits, 1.6M and 1.5M under deadline); vanilla, which writes more through the "
    "async queue (14,850 full requests against 9,109), pays more and takes 1434 s against 1118 s "
    "(the seed: 1274 and 1318); 1631 s against 1390 s since dd syncs its file (session 56), 1642 s against 1481 s with "
    "dd's CPU time fitted to the seed's (session 57). EXPERIMENTS.md, sessions 54, 56 and 57",
)


@pytest.mark.parametrize("fs", [pytest.param("ext3", marks=EXT3_4608M_UNDER_CFQ), "ext4", "xfs"])
def test_at_4608m_the_gain_disappears(report, fs):
    bench = f"simple-writeback-4608M-{fs}"
    v, p = _dd_time(report, bench, VANILLA), _dd_time(report, bench, PZD)
    assert p > 0.95 * v




EXT3_4608M_VANILLA_SCANS_DIRECTLY = pytest.mark.xfail(
    strict=True,
    reason="vanilla's ext3 run at 4608M scans directly too (35% of its scanning; the seed's none): "
    "kswapd writes dirty pages of the 16M DMA zone (not Normal's, as written in session 55) and then sleeps for an async request behind "
    "the flusher, 26 times a run for 4.9 s each (65 s once, while kjournald's ordered data goes out), while CFQ serves kjournald's sync queue first, "
    "and the allocations reach the min mark meanwhile. Per-zone limits scan directly as much "
    "(34%), so the direction is a tie; it went the seed's way by a few percent until session 55, "
    "when LRU additions began to count in the reclaim statistics. Most of vanilla's direct scans fall in "
    "the last second of dd's writes (session 56). With the dd CPU time fitted to the seed's (session 57) "
    "the full matrix's runs scan 1,332,948 and 1,337,061 pages directly in three runs, 45% and 46% of "
    "their scanning. EXPERIMENTS.md, sessions 55 to 57",
)


@pytest.mark.parametrize("fs", [pytest.param("ext3", marks=EXT3_4608M_VANILLA_SCANS_DIRECTLY), "ext4", "xfs"])
def test_at_4608m_direct_reclaim_appears_with_per_zone_limits(report, fs):
    # The seed: 115,384 pages scanned directly with per-zone limits in four runs, none in
    # vanilla's. A tie is not that direction, so per-zone limits must scan directly at least
    # four times as much as vanilla.
    bench = f"simple-writeback-4608M-{fs}"
    assert _direct(_vm(report, bench, PZD)) > 4 * _direct(_vm(report, bench, VANILLA))
