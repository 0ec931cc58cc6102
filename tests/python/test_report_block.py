"""The "Block I/O (mmtwin)" section: synthetic block statistics → tables, text, absence rules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mmtwin.report import ReportError
from mmtwin.report.compare import build_report, load_runs, render_text, report_to_json
from mmtwin.results import summarise


def block(reads: int, read_kib: int, read_segs: int, writes: int = 0, size_hist=None, seg_hist=None) -> dict:
    """A "block" entry: `reads` requests of `read_kib` KiB and `read_segs` segments each."""
    return {
        "devices": 1,
        "requests": [reads, writes],
        "sectors": [reads * read_kib * 2, writes * 8],
        "merges": [reads // 2, 0],
        "segments": [reads * read_segs, writes],
        "seeks": 10,
        "busy_ns": 1_500_000_000,
        "merge_refused_segments": 3,
        "rq_size_hist": [size_hist or [0] * 9, [writes] + [0] * 8],
        "rq_seg_hist": [seg_hist or [0] * 8, [writes] + [0] * 7],
    }


def write_kernel(root: Path, name: str, blocks: list) -> None:
    d = root / name
    d.mkdir(parents=True)
    iterations = []
    for i, b in enumerate(blocks):
        it = {"iteration": i, "seed": i, "duration": {"user": 1.0, "system": 1.0, "elapsed": 2.0}, "vmstat": {"pgpgin": 100}}
        if b is not None:
            it["block"] = b
        iterations.append(it)
    summary = {"format": 1, "name": name, "profile": "linux-6.x", "benchmark": "iozone", "config_sha256": "0" * 64,
               "metrics": [], "iterations": iterations}
    (d / "summary.json").write_text(json.dumps(summary))


def folder(tmp_path: Path, kernels: dict) -> Path:
    root = tmp_path / "results"
    for name, blocks in kernels.items():
        write_kernel(root, name, blocks)
    (root / "kernels.json").write_text(json.dumps(list(kernels)))
    return root


@pytest.fixture
def two(tmp_path: Path) -> Path:
    # old: 100 reads of 128K with 32 segments (all in the 128K / 32-63 buckets), 2 iterations;
    # new: 4 KiB reads, 1 segment, 75% in the first size bucket; 400 then 200 requests.
    old = block(100, 128, 32, size_hist=[0] * 5 + [100, 0, 0, 0], seg_hist=[0] * 5 + [100, 0, 0])
    new1 = block(400, 4, 1, size_hist=[300, 100] + [0] * 7, seg_hist=[400] + [0] * 7)
    new2 = block(200, 4, 1, size_hist=[150, 50] + [0] * 7, seg_hist=[200] + [0] * 7)
    return folder(tmp_path, {"base-old": [old, old], "base-new": [new1, new2]})


def table(report, title):
    return next(t for t in report.tables if t.title == title)


def values(t, label):
    return next([c.value for c in r.cells] for r in t.rows if r.label == label)


def test_section_numbers(two):
    report = build_report(load_runs([two]), "current")
    titles = [t.title for t in report.tables]
    # after the vmstat table, in this order
    assert titles[-3:] == ["Block I/O (mmtwin)", "Read request size", "Read segments per request"]
    assert [t.kind for t in report.tables[-4:]] == ["vmstat", "block", "block", "block"]
    main = table(report, "Block I/O (mmtwin)")
    assert values(main, "Read requests") == [100, 300]  # mean over iterations
    assert values(main, "Read KiB/request") == [128, 4]
    assert values(main, "Read segments/request") == [32, 1]
    assert values(main, "Merges refused (segments)") == [3, 3]
    assert values(main, "Device busy (s)") == [1.5, 1.5]
    assert not any(r.label.startswith("Write") for r in main.rows)  # no kernel wrote
    assert values(table(report, "Read request size"), "<=4K") == [0, 75]
    assert values(table(report, "Read request size"), "128K") == [100, 0]
    assert values(table(report, "Read segments per request"), "32-63") == [100, 0]

    lines = render_text(report).splitlines()
    at = lines.index("Block I/O (mmtwin)")
    assert lines[at + 1].split() == ["base", "base"] and lines[at + 2].split() == ["old", "new"]
    assert f"{'Read KiB/request':<26}{'128.00':>15}{'4.00':>15}" in lines
    assert f"{'Read segments/request':<26}{'32.00':>15}{'1.00':>15}" in lines
    # the histogram tables keep the label column of the main table
    assert f"{'<=4K':<26}{'0.00%':>15}{'75.00%':>15}" in lines
    assert lines[-1] == f"{'>=128':<26}{'0.00%':>15}{'0.00%':>15}"
    assert report_to_json(report)["tables"][-3]["title"] == "Block I/O (mmtwin)"


def test_write_rows_and_2011_layout(tmp_path):
    root = folder(tmp_path, {"a": [block(10, 8, 2, writes=5)], "b": [block(10, 8, 2)]})
    report = build_report(load_runs([root]), "2011")
    main = table(report, "Block I/O (mmtwin)")
    assert values(main, "Write requests") == [5, 0]
    assert values(main, "Write KiB/request") == [4, 0]
    assert values(main, "Write segments/request") == [1, 0]
    text = render_text(report)
    assert f"{'Read requests':<40}{'10':>10}{'10':>10}" in text.splitlines()
    assert f"{'Read segments/request':<40}{'2.00':>10}{'2.00':>10}" in text.splitlines()


@pytest.mark.parametrize(
    "kernels",
    [
        {"a": [None, None], "b": [None, None]},  # result folders from before block statistics
        {"a": [block(10, 4, 1)], "b": [None]},  # one kernel without them
        {"a": [block(10, 4, 1), None], "b": [block(10, 4, 1)] * 2},  # one iteration without them
        {"a": [block(10, 4, 1)], "b": [block(0, 4, 1)]},  # one kernel without any request
    ],
)
def test_section_absent(tmp_path, kernels):
    for fmt in ("current", "2011"):
        report = build_report(load_runs([folder(tmp_path / fmt, kernels)]), fmt)
        assert not any(t.kind.startswith("block") for t in report.tables)
        assert "Block I/O" not in render_text(report)


def test_congestion_wait_rows_for_the_callers_that_waited(tmp_path):
    a, b = block(10, 4, 1), block(10, 4, 1)
    a["congestion_waits"], a["congestion_wait_ns"] = [50, 0, 0], [1_000_000_000, 0, 0]
    b["congestion_waits"], b["congestion_wait_ns"] = [0, 0, 2], [0, 0, 200_000_000]
    report = build_report(load_runs([folder(tmp_path, {"a": [a], "b": [b]})]), "current")
    main = table(report, "Block I/O (mmtwin)")
    assert values(main, "Congestion waits, allocator") == [50, 0]
    assert values(main, "Congestion wait (s), allocator") == [1.0, 0.0]
    assert values(main, "Congestion wait (s), kswapd") == [0.0, 0.2]
    assert not any("direct reclaim" in r.label for r in main.rows)  # nobody waited there


def test_flash_translation_layer_rows_only_when_a_kernel_copied(tmp_path):
    a, b = block(10, 4, 1, writes=5), block(10, 4, 1, writes=5)
    a["ftl_gc_copies"], a["ftl_gc_copied_pages"] = 3, 2900
    report = build_report(load_runs([folder(tmp_path / "with", {"a": [a], "b": [b]})]), "current")
    main = table(report, "Block I/O (mmtwin)")
    assert values(main, "Erase blocks copied (FTL)") == [3, 0]
    assert values(main, "Pages copied (FTL)") == [2900, 0]
    report = build_report(load_runs([folder(tmp_path / "without", {"b": [b]})]), "current")
    assert not any("FTL" in r.label for r in table(report, "Block I/O (mmtwin)").rows)


def test_seek_distance_rows_when_results_carry_them(tmp_path):
    a, b = block(10, 4, 1, writes=5), block(10, 4, 1, writes=5)
    a.update(seek_dist_hist=[6, 2, 1, 1], seek_ns=80_000_000)
    b.update(seek_dist_hist=[0, 0, 0, 10], seek_ns=85_000_000)
    report = build_report(load_runs([folder(tmp_path / "with", {"a": [a], "b": [b]})]), "current")
    main = table(report, "Block I/O (mmtwin)")
    labels = [r.label for r in main.rows]
    # between the seek count and the busy time
    assert labels.index("Seeks") + 6 == labels.index("Device busy (s)")
    assert values(main, "Seeks under 1 MiB") == [6, 0]
    assert values(main, "Seeks 256 MiB and over") == [1, 10]
    assert values(main, "Seek time (s)") == pytest.approx([0.08, 0.085])
    # results written before the counters existed show the seek count alone
    del a["seek_dist_hist"], a["seek_ns"]
    report = build_report(load_runs([folder(tmp_path / "without", {"a": [a]})]), "current")
    assert not any(r.label.startswith("Seek") and r.label != "Seeks" for r in table(report, "Block I/O (mmtwin)").rows)
    a["seek_dist_hist"] = [1, 2]
    with pytest.raises(ReportError, match=r"'seek_dist_hist' must be a list of 4 numbers"):
        load_runs([folder(tmp_path / "bad", {"a": [a]})])


def test_cfq_rows_only_when_a_kernel_ran_cfq(tmp_path):
    a, b = block(10, 4, 1, writes=5), block(10, 4, 1, writes=5)
    a.update(cfq_slices=40, cfq_preemptions=3, cfq_idle_waits=7, cfq_idle_expired=2)
    report = build_report(load_runs([folder(tmp_path / "with", {"a": [a], "b": [b]})]), "current")
    main = table(report, "Block I/O (mmtwin)")
    assert values(main, "CFQ slices") == [40, 0]
    assert values(main, "CFQ preemptions") == [3, 0]
    assert values(main, "CFQ idle waits") == [7, 0]
    assert values(main, "CFQ idle waits expired") == [2, 0]
    report = build_report(load_runs([folder(tmp_path / "without", {"b": [b]})]), "current")
    assert not any("CFQ" in r.label for r in table(report, "Block I/O (mmtwin)").rows)


def test_wait_rows_for_whoever_waited_and_for_what(tmp_path):
    a, b = block(10, 4, 1, writes=5), block(10, 4, 1, writes=5)
    # [benchmark, kswapd, flusher, journal] x [requests, pages, journal]
    a["wait_ns"] = [[0, 0, 0], [4_900_000_000, 0, 0], [0, 0, 0], [0, 0, 0]]
    a["wait_count"] = [[0, 0, 0], [1, 0, 0], [0, 0, 0], [0, 0, 0]]
    b["wait_ns"] = [[0, 2_500_000_000, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0]]
    b["wait_count"] = [[0, 3, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0]]
    report = build_report(load_runs([folder(tmp_path, {"a": [a], "b": [b]})]), "current")
    main = table(report, "Block I/O (mmtwin)")
    assert values(main, "Wait for requests (s), kswapd") == [4.9, 0.0]
    assert values(main, "Wait for pages (s), benchmark") == [0.0, 2.5]
    assert not any(r.label.startswith("Wait for journal") or "flusher" in r.label for r in main.rows)
    # Results written before the waits were counted have no such rows.
    report = build_report(load_runs([folder(tmp_path / "old", {"c": [block(10, 4, 1)]})]), "current")
    assert not any(r.label.startswith("Wait for") for r in table(report, "Block I/O (mmtwin)").rows)
    b["wait_ns"] = [[0, 1]]
    with pytest.raises(ReportError, match=r"'wait_ns' must be a 4x3 list of numbers"):
        load_runs([folder(tmp_path / "bad", {"b": [b]})])


def test_bad_block_entry(tmp_path):
    b = block(10, 4, 1)
    b["rq_seg_hist"] = [[1, 2], [3, 4]]
    with pytest.raises(ReportError, match=r"iterations\[0\]\.block: 'rq_seg_hist'"):
        load_runs([folder(tmp_path, {"a": [b]})])
    b = block(10, 4, 1)
    b["congestion_waits"] = [1, 2]
    with pytest.raises(ReportError, match=r"iterations\[0\]\.block: 'congestion_waits' must be a list of 3 numbers"):
        load_runs([folder(tmp_path / "2", {"a": [b]})])


def test_summary_keeps_block():
    it = {"iteration": 0, "seed": 1, "user_ns": 1, "system_ns": 2, "elapsed_ns": 3, "vmstat": [("pgpgin", 4)],
          "events_processed": 5, "page_events": 6, "metrics": [], "block": block(10, 4, 1)}
    kernel = {"name": "k", "profile": "linux-6.x", "sha256": "0" * 64}
    assert summarise(kernel, "iozone", [it])["iterations"][0]["block"] == block(10, 4, 1)
    del it["block"]
    assert "block" not in summarise(kernel, "iozone", [it])["iterations"][0]


def test_write_only(tmp_path):
    """No kernel read: the read histograms (all 0%) are left out, the read rows stay."""
    root = folder(tmp_path, {"a": [block(0, 4, 1, writes=5)], "b": [block(0, 4, 1, writes=7)]})
    report = build_report(load_runs([root]), "current")
    assert [t.title for t in report.tables if t.kind == "block"] == ["Block I/O (mmtwin)"]
    main = table(report, "Block I/O (mmtwin)")
    assert values(main, "Read requests") == [0, 0] and values(main, "Write requests") == [5, 7]
