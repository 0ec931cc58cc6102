"""Fidelity: the zlc-zone-reclaim seed's directions on the reduced scenario (ext3 since session
44, as the full scenario: on ext3 vanilla's fs_mark and largedd take the seed's time).

What holds in the model (and is asserted): under fs_mark and largedd, vanilla 3.0-rc6 never
wakes kswapd (every page is reclaimed by zone_reclaim in the allocating task, 100% direct
scans); both patches hand part of the scanning to kswapd, and under the mapped writer the
share of direct scans falls below vanilla's; largedd's dd phase is faster with the patches because the source file
stays cached (fewer page-ins). What does not hold (documented in EXPERIMENTS.md): fs_mark
Files/s and the mapped writer's time. The model's disk is busy the whole run in every kernel,
so they are set by how many seeks the writes cost, and that varies by 5-15% from run to run
with the commits' timing; the variants' differences are smaller. The scenario runs three
iterations so that the comparisons are of means (session 46: the mapped writer's write phase
46.56 s in vanilla against 47.03 and 46.78 s). At this size fs_mark also loses with the
patches (Files/s mean -4.0% with either in session 51): node 0's 16M DMA zone takes page cache, the patches' kswapd
balances it and meets the writers' newest pages still dirty, and each page it writes costs a
seek (31,712 writes by reclaim in three runs, session 51, all from that zone; vanilla never wakes kswapd
under fs_mark). At 4G per node and more, DMA's lowmem reserve exceeds the zone and no page
cache lands there; the full scenario, at 2G per node, writes 0.2% of fs_mark's pages so
(33,542 in session 51), this one 0.4%. The seed's gains (+26% Files/s as MMTests prints it, 15% sooner) are
asserted at a fifth of their size as expected failures (strict: they report when they start
to hold). fs_mark's Files/s sums the
workers' own rates: the seed's means are 1.40-1.86 times its files per loop time, so most of
its gain is its workers drawing further apart with the patches. Until session 51 the twin's
finished together; since session 52, when ext3's commit writes ordered data buffer by buffer,
they finish about 21 s apart in every kernel ("fsmark Loop (mmtwin)" table; EXPERIMENTS.md,
sessions 43 and 52). Since session 54 the scenario runs CFQ, 3.0's default scheduler, where it
ran deadline; the assertions and expected failures are the same (EXPERIMENTS.md, "CFQ, the
seeds' scheduler").
"""

from __future__ import annotations

import pytest

from mmtwin.report.stats import ci_significant_samples
from tests.python.conftest import ROOT
from tests.python.fidelity import metric_mean as _metric
from tests.python.fidelity import metric_samples as _samples
from tests.python.fidelity import run_scenario
from tests.python.fidelity import scanned as _scanned
from tests.python.fidelity import summary as _summary
from tests.python.fidelity import vmstat as _vm

SCENARIO = ROOT / "scenarios" / "seeds" / "zlc-zone-reclaim-reduced.toml"
VANILLA, ZLCFIRST, ZLCRECONSIDER = "3.0-rc6-vanilla", "3.0-rc6-zlcfirst", "3.0-rc6-zlcreconsider"


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    return run_scenario(SCENARIO, tmp_path_factory.mktemp("fid") / "zlc")


@pytest.mark.parametrize("bench", ["fsmark", "largedd"])
def test_vanilla_reclaims_only_through_zone_reclaim(report, bench):
    vm = _vm(report, bench, VANILLA)
    assert _scanned(vm, "direct") > 0
    assert _scanned(vm, "kswapd") == 0


@pytest.mark.parametrize("bench", ["fsmark", "largedd", "mappedwriter"])
@pytest.mark.parametrize("kernel", [ZLCFIRST, ZLCRECONSIDER])
def test_the_patches_hand_part_of_the_scanning_to_kswapd(report, bench, kernel):
    vm = _vm(report, bench, kernel)
    kswapd, direct = _scanned(vm, "kswapd"), _scanned(vm, "direct")
    assert kswapd > 0
    assert direct * 100 / (direct + kswapd) < 100


def _direct_pct(vm):
    k, d = _scanned(vm, "kswapd"), _scanned(vm, "direct")
    return d * 100 / (k + d)


@pytest.mark.parametrize("kernel", [ZLCFIRST, ZLCRECONSIDER])
def test_mapped_writer_direct_share_falls_below_vanilla(report, kernel):
    # Seed: 67% (vanilla) → 62%; vanilla's kswapd scans here too, woken once both nodes fill.
    assert _direct_pct(_vm(report, "mappedwriter", kernel)) < _direct_pct(_vm(report, "mappedwriter", VANILLA))


@pytest.mark.parametrize("kernel", [ZLCFIRST, ZLCRECONSIDER])
def test_largedd_copies_faster_because_the_source_stays_cached(report, kernel):
    assert _metric(report, "largedd", kernel, "dd source files") < _metric(report, "largedd", VANILLA, "dd source files")
    assert _vm(report, "largedd", kernel)["pgpgin"] < _vm(report, "largedd", VANILLA)["pgpgin"]


NOT_REPRODUCED = pytest.mark.xfail(strict=True, reason="disk-bound in the twin: the variants tie within the runs' spread "
                                    "(session 58: over four seeds zlcfirst's fs_mark makes 1.2% fewer Files/s and takes "
                                    "1.2% longer; 4% fewer Files/s in session 57); fs_mark also pays the DMA zone's "
                                    "zone_reclaims and writes by reclaim at this size (EXPERIMENTS.md)")


def _elapsed(out, bench, kernel):
    return sum(it["duration"]["elapsed"] for it in _summary(out, bench, kernel)["iterations"])


@NOT_REPRODUCED
@pytest.mark.parametrize("kernel", [ZLCFIRST, ZLCRECONSIDER])
def test_fsmark_creates_more_files_per_second_with_the_patches(report, kernel):
    # Seed: 100.11 -> 135.17 (zlcfirst) and 146.93 (zlcreconsider) files/s, and the run ends
    # sooner: 2451.57 -> 2257.48 and 2215.92 s ("Test completes far faster with a large
    # increase in the number of files created per second"). Both are asserted: since session
    # 52 this scenario's Files/s mean alone comes out higher with the patches (+5.8%, +18.9%,
    # from a few fast loops, as the seed's), while its run does not end sooner (+0.1%, +2.4%)
    # and the full scenario's Files/s does not rise (EXPERIMENTS.md, session 52).
    assert _metric(report, "fsmark", kernel, "Files/s") > 1.05 * _metric(report, "fsmark", VANILLA, "Files/s")
    assert _elapsed(report, "fsmark", kernel) < 0.97 * _elapsed(report, "fsmark", VANILLA)


@NOT_REPRODUCED
@pytest.mark.parametrize("kernel", [ZLCFIRST, ZLCRECONSIDER])
def test_the_mapped_writer_finishes_sooner_with_the_patches(report, kernel):
    # Seed: 2138.14 -> 1816.30 (zlcfirst) and 1867.56 s (zlcreconsider). Three runs each: a
    # mean 3% lower that the report does not mark significant is a draw from the runs' spread
    # (session 51: 51.70 ± 3.48 s against 49.24 ± 3.06 s), not the seed's finding.
    base, new = _samples(report, "mappedwriter", VANILLA, "write"), _samples(report, "mappedwriter", kernel, "write")
    assert sum(new) < 0.97 * sum(base)
    assert ci_significant_samples(base, new, "lower")
