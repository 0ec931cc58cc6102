"""Fidelity: the pcp-cold-pfn-order seed on the reduced scenarios, and what the twin finds.

The seed (Christian Ehrhardt, Dec 2009): on s390 with FCP SCSI disks, ext2, 256M, iozone
readers lost up to 76% throughput (at 16 readers) with e084b2d95e48, which makes cold per-cpu
refills come out in PFN order; +64M or O_DIRECT made the loss disappear. The author did not
know why; the follow-up thread (linux-mm, March-April 2010) found the readers sleeping the
full timeout of congestion_wait after direct reclaim made progress but the allocation still
failed, with no writes in flight, and request sizes unchanged (iostat: 908 sectors per request
in the good and the bad run).

Asserted, from the model (see EXPERIMENTS.md for the account):
- e084b does what it was written for: readahead pages are physically more contiguous, so read
  requests carry fewer scatterlist segments. Not fully contiguous: pages reclaim frees cold to
  the tail of a per-cpu list in LRU order come back in the opposite order (mechanism test in
  crates/mmtwin/tests/block.rs).
- On the s390 FCP queue (128 segments, zfcp cuts every segment into 4 KiB SBALEs) the order
  does not change request sizes.
- The thread's mechanism: at 16 readers the 2.6.32 readers sleep in the allocator's
  congestion_wait, each time until its timeout because nothing is written (HZ/50: two
  jiffies at s390's HZ 100, ended at a tick, so 10-20 ms); 2.6.37's
  wait_iff_congested removes the sleeps and the 16 readers read more. One reader, and O_DIRECT,
  do not stall.
- The seed's trigger is NOT reproduced on 2.6.32's per-type lists: the stalls come with either
  order (at full size they cost 16 readers 62% at 256M in session 35, and the three orders'
  runs overlap, EXPERIMENTS.md), so no assert on its sign.
- On a queue of 16 segments, the reverse order splits readahead into smaller requests and the
  single reader loses throughput: the regression e084b fixed (Narayanan's OneNAND report).
- On the per-cpu list of 2.6.31, where Christian's bisection tested e084b (one list shared by
  every migratetype), e084b lengthens the time 16 readers sleep in the allocator's
  congestion_wait in an iozone round on a fresh machine, and they read less, at 256M and at
  320M. The seed's loss vanished with 64M more; the twin's does not (an xfail test says so).
  This round reads 512M files; with the seed's 2G files (pcp-cold-pfn-order-2631-2g.toml, not
  run here: 12 minutes) the twin's order effect goes, both orders collapse alike at 256M and
  tie at 320M (EXPERIMENTS.md, session 24), so the assert below is a property of the shorter
  files, not a reproduction of the seed's cause.
"""

from __future__ import annotations

import pytest

from tests.python.conftest import ROOT
from tests.python.fidelity import metric_mean, run_scenario, summary

SEEDS = ROOT / "scenarios" / "seeds"
E084B, REVERT, NOSTALL = "2.6.32", "2.6.32-revert-e084b", "2.6.32-wait-iff-congested"
READ = "iozone Read Throughput"
#: congestion_wait(BLK_RW_ASYNC, HZ/50) before the allocator retries, and a jiffy in ns (s390's
#: defconfig: HZ 100, so HZ/50 is two jiffies).
HZ_50_NS = 20_000_000
JIFFY_NS = 10_000_000


@pytest.fixture(scope="module")
def fcp(tmp_path_factory):
    return run_scenario(SEEDS / "pcp-cold-pfn-order-reduced.toml", tmp_path_factory.mktemp("fid") / "pcp")


@pytest.fixture(scope="module")
def single_list(tmp_path_factory):
    return run_scenario(SEEDS / "pcp-cold-pfn-order-2631-reduced.toml", tmp_path_factory.mktemp("fid") / "pcp2631")


@pytest.fixture(scope="module")
def segs16(tmp_path_factory):
    return run_scenario(SEEDS / "pcp-cold-pfn-order-segments-reduced.toml", tmp_path_factory.mktemp("fid") / "pcp16")


def _block(out, bench, kernel):
    return summary(out, bench, kernel)["iterations"][0]["block"]


def _per_read_request(out, bench, kernel, key):
    b = _block(out, bench, kernel)
    return b[key][0] / b["requests"][0]


@pytest.mark.parametrize("mem", ["256M", "320M"])
def test_e084b_gives_read_requests_fewer_segments(fcp, mem):
    bench = f"iozone-{mem}"
    e, r = _per_read_request(fcp, bench, E084B, "segments"), _per_read_request(fcp, bench, REVERT, "segments")
    assert r > 25, "reverse order: nearly a segment per page"
    assert e < 0.9 * r


@pytest.mark.parametrize("mem", ["256M", "320M"])
def test_on_the_fcp_queue_the_order_does_not_change_request_size(fcp, mem):
    bench = f"iozone-{mem}"
    e, r = _per_read_request(fcp, bench, E084B, "sectors"), _per_read_request(fcp, bench, REVERT, "sectors")
    assert abs(e - r) / r < 0.01
    assert _block(fcp, bench, E084B)["merge_refused_segments"] == 0


@pytest.mark.parametrize("kernel", [E084B, REVERT])
def test_16_readers_sleep_the_full_congestion_wait_after_reclaim_made_progress(fcp, kernel):
    b = _block(fcp, "iozone-256M", kernel)
    waits, wait_ns = b["congestion_waits"][0], b["congestion_wait_ns"][0]
    assert waits > 1000
    # Nothing is written, so every wait runs its timeout, which the timer wheel ends at the
    # second tick: up to a jiffy short of 20 ms.
    assert waits * (HZ_50_NS - JIFFY_NS) < wait_ns <= waits * HZ_50_NS
    # A reader woken by that tick reclaims at once, fails again and waits again, starting just
    # after a tick: such a wait runs almost the whole two jiffies, so the mean is well above the
    # 15 ms of a wait begun at a random point of a jiffy.
    assert wait_ns / waits > HZ_50_NS - JIFFY_NS / 4
    assert b["congestion_waits"][1:] == [0, 0]


@pytest.mark.parametrize("mem", ["256M", "320M"])
def test_without_the_stalls_16_readers_read_more(fcp, mem):
    bench = f"iozone-{mem}"
    assert _block(fcp, bench, NOSTALL)["congestion_waits"] == [0, 0, 0]
    nostall = metric_mean(fcp, bench, NOSTALL, "16", READ)
    for kernel in (E084B, REVERT):
        # Each stall sleeps to its second tick while the reader's disk runs dry: a large share.
        assert metric_mean(fcp, bench, kernel, "16", READ) < 0.8 * nostall
    assert metric_mean(fcp, bench, E084B, "1", READ) == metric_mean(fcp, bench, NOSTALL, "1", READ)


@pytest.mark.xfail(
    strict=True,
    reason="the stalls cost 16 readers about as much with 64M more: 61% at 256M and 59% at 320M "
    "since session 58, when the legacy request_fn takes each request from the scheduler while "
    "the one before it is in flight (73% and 74% in session 52; EXPERIMENTS.md)",
)
def test_with_64m_more_the_stalls_cost_16_readers_less(fcp):
    # The seed: "giving the system just a bit (~64m+) more memory solves the issue almost
    # completely". Asserted as at least halving the loss. The twin's loss shrank a little in
    # earlier sessions (64% -> 56% in session 23; 71% -> 67% over three runs in session 35);
    # since session 52 it barely moves (session 58: 61% -> 59%, which the weaker assertion
    # used until then, any shrinking, counted as the seed's finding).
    def loss(mem):
        bench = f"iozone-{mem}"
        return 1 - metric_mean(fcp, bench, E084B, "16", READ) / metric_mean(fcp, bench, NOSTALL, "16", READ)

    assert loss("320M") < 0.5 * loss("256M")


@pytest.mark.parametrize("report", ["fcp", "segs16"])
def test_direct_io_is_the_same_with_and_without_e084b(report, request):
    out = request.getfixturevalue(report)
    bench = "iozone-256M-2"
    assert _block(out, bench, E084B) == _block(out, bench, REVERT)
    assert _block(out, bench, E084B)["congestion_waits"] == [0, 0, 0]
    assert metric_mean(out, bench, E084B, "16", READ) == metric_mean(out, bench, REVERT, "16", READ)


def test_on_a_16_segment_queue_reverse_order_makes_smaller_requests_and_loses_throughput(segs16):
    bench = "iozone-256M"
    e_kib = _per_read_request(segs16, bench, E084B, "sectors") / 2
    r_kib = _per_read_request(segs16, bench, REVERT, "sectors") / 2
    assert r_kib < 0.9 * e_kib
    assert _block(segs16, bench, REVERT)["merge_refused_segments"] > _block(segs16, bench, E084B)["merge_refused_segments"]
    assert metric_mean(segs16, bench, REVERT, "1", READ) < 0.95 * metric_mean(segs16, bench, E084B, "1", READ)


def _loss_2631(single_list, mem):
    bench = f"iozone-{mem}"
    return 1 - metric_mean(single_list, bench, "2.6.31", "16", READ) / metric_mean(single_list, bench, "2.6.31-revert-e084b", "16", READ)


def test_on_the_2631_single_list_e084b_lengthens_the_allocator_sleep_and_costs_16_readers(single_list):
    # A 16-reader iozone round on a fresh 2.6.31 machine: with e084b the readers sleep longer
    # in the allocator's congestion_wait and read less. At 320M e084b sleeps 17x as long as the
    # revert (session 27). 256M sits on the memory cliff of both kernels, where changes that
    # act on both alike move the ratio: 2.06x, then 1.39x once a throttled writer stopped
    # dirtying a page per pause (session 25), then 1.10x (891 against 807 s over three runs)
    # with 3.0's per-CPU dirty ratelimit (session 27); the read loss stayed at 32%. Since the
    # watermark checks read NR_FREE_PAGES without the CPUs' unfolded diffs (session 32), the
    # revert falls off the cliff in two runs of three as well (987 against 792 s) and the loss
    # at 256M is 24%; at 320M it is 55% (EXPERIMENTS.md).
    def slept(kernel, bench):
        return sum(it["block"]["congestion_wait_ns"][0] for it in summary(single_list, bench, kernel)["iterations"])

    for mem, ratio, loss in (("256M", 1.0, 0.15), ("320M", 1.25, 0.25)):
        bench = f"iozone-{mem}"
        assert slept("2.6.31", bench) > ratio * slept("2.6.31-revert-e084b", bench)
        assert _loss_2631(single_list, mem) > loss


@pytest.mark.xfail(strict=True, reason="not reproduced: with 3 MIGRATE_RESERVE blocks at 320M the revert's stalls go, "
                   "e084b's stay, and the loss stays above 30% (EXPERIMENTS.md)")
def test_with_64m_more_e084b_costs_16_readers_almost_nothing(single_list):
    # The seed: "giving the system just a bit (~64m+) more memory solves the issue almost completely".
    assert _loss_2631(single_list, "320M") < 0.1


def test_on_2632s_per_type_lists_the_order_does_not_move_the_stalls(fcp):
    e = sum(it["block"]["congestion_waits"][0] for it in summary(fcp, "iozone-256M", E084B)["iterations"])
    r = sum(it["block"]["congestion_waits"][0] for it in summary(fcp, "iozone-256M", REVERT)["iterations"])
    assert 0.7 < e / r < 1.3
