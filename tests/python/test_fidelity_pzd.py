"""Fidelity: the per-zone-dirty-limits seed's directions on the reduced scenario.

Asserted (the seed's findings): with per-zone dirty limits, reclaim meets almost no dirty file
pages, so file writes from reclaim fall to near zero on every file system; the 512M runs on
ext3 and xfs, where those writes are real I/O scattered into the flusher's stream, finish
sooner by a large factor (the USB key's flash translation layer copies an erase block for
each write away from its two open ones: the twin's vanilla takes 1.46x (ext3) and 1.71x (xfs)
the patched time, the seed's 1.79x and 2.81x; asserted: more than 1.3x), while ext4 (whose
writepage refuses delalloc pages from reclaim: counted, no I/O) stays about flat; at 4608M
direct reclaim appears with per-zone limits (a small Normal zone over its dirty limit sends
page-cache allocations down to DMA32) and the gain disappears on ext3 and ext4. On ext3 the
direct reclaim does not appear any more since its indirect blocks are cached as block-device
pages (session 16): allocated from the Normal zone, they keep kswapd awake (expected failure,
strict). On xfs at
4608M it does not quite: in some runs the twin's per-zone limits leave DMA32 between its min
and low watermarks plus the Normal zone's lowmem reserve, below what the allocator accepts but
above what wakes kswapd, so direct reclaim does kswapd's work and kswapd writes fewer
scattered file pages; on the flash key that makes the xfs mean 6% faster (the iterations
spread by 4-6%). Which runs land in that state is a knife-edge (before block plugging and
the timer tick were modelled in session 15 it was ext3, by 23%). That case is marked as an
expected failure (strict: it reports when it starts to hold). See EXPERIMENTS.md.
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


@pytest.mark.parametrize("fs", ["ext3", "xfs"])
def test_512m_runs_with_real_reclaim_writes_finish_sooner_by_a_large_factor(report, fs):
    bench = f"simple-writeback-512M-{fs}"
    assert _dd_time(report, bench, VANILLA) > 1.3 * _dd_time(report, bench, PZD)


def test_512m_ext4_stays_about_flat(report):
    bench = "simple-writeback-512M-ext4"
    v, p = _dd_time(report, bench, VANILLA), _dd_time(report, bench, PZD)
    assert abs(p - v) / v < 0.03


NOT_REPRODUCED = pytest.mark.xfail(strict=True, reason="xfs at 4608M: in some runs the twin's per-zone limits leave DMA32 below what the allocator accepts but above what wakes kswapd, direct reclaim does kswapd's work and kswapd's file writes fall (full scenario: 260 -> 170 a run, 6% faster); the seed's kept them (344 -> 329, 3% slower); see EXPERIMENTS.md")


@pytest.mark.parametrize("fs", ["ext3", "ext4", pytest.param("xfs", marks=NOT_REPRODUCED)])
def test_at_4608m_the_gain_disappears(report, fs):
    bench = f"simple-writeback-4608M-{fs}"
    v, p = _dd_time(report, bench, VANILLA), _dd_time(report, bench, PZD)
    assert p > 0.95 * v


NO_DIRECT_ON_EXT3 = pytest.mark.xfail(strict=True, reason="ext3 at 4608M: write allocations keep the Normal zone just under its low watermark, so every slow-path entry (DMA32 at its low mark plus the lowmem reserve) finds it there and wakes kswapd, and the state where kswapd sleeps while DMA32 fails the min check never forms; direct reclaim never runs (seed: 115,384 direct scans, 2% of the scanning); see EXPERIMENTS.md")


@pytest.mark.parametrize("fs", [pytest.param("ext3", marks=NO_DIRECT_ON_EXT3), "ext4", "xfs"])
def test_at_4608m_direct_reclaim_appears_with_per_zone_limits(report, fs):
    bench = f"simple-writeback-4608M-{fs}"
    assert _direct(_vm(report, bench, PZD)) > _direct(_vm(report, bench, VANILLA))
