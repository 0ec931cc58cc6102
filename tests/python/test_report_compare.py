"""End-to-end: synthetic results folders → comparison tables → text in both layouts and JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mmtwin.report import ReportError
from mmtwin.report.compare import build_report, load_runs, render_text, report_to_json, split_name, split_name_2011

BASE, NEW = "4.20.0-rc6-mmotm-20181210", "4.20.0-rc6-noremote-v2r14"


def write_kernel(folder: Path, name: str, metrics: list, benchmark: str = "thpscale", iterations: list = None) -> Path:
    d = folder / name
    d.mkdir(parents=True)
    if iterations is None:
        iterations = [
            {"iteration": 0, "seed": 1, "duration": {"user": 10.0, "system": 20.0, "elapsed": 100.0},
             "vmstat": {"pgscan_kswapd": 1000, "pgsteal_kswapd": 900, "pgfault": 50}},
            {"iteration": 1, "seed": 2, "duration": {"user": 17.30, "system": 172.70, "elapsed": 480.13},
             "vmstat": {"pgscan_kswapd": 500, "pgsteal_kswapd": 300, "pgfault": 50, "allocstall_normal": 7}},
        ]
    summary = {"format": 1, "name": name, "profile": "linux-6.x", "benchmark": benchmark, "config_sha256": "0" * 64,
               "metrics": metrics, "iterations": iterations}
    (d / "summary.json").write_text(json.dumps(summary))
    return d


def spread(mean: float, d: float) -> list:
    return [mean - d, mean, mean + d]


def latency(means: dict, d: dict) -> dict:
    return {"title": "thpscale Fault Latencies", "preferred": "lower", "unit": "us",
            "ops": [{"name": op, "samples": spread(m, d[op])} for op, m in means.items()]}


@pytest.fixture
def thpscale(tmp_path: Path) -> Path:
    """Two kernels; fault-both-1/-3 are tight (significant), fault-both-7 overlaps (not)."""
    root = tmp_path / "results"
    d = {"fault-both-1": 1.0, "fault-both-3": 1.0, "fault-both-7": 2000.0}
    write_kernel(root, BASE, [latency({"fault-both-1": 864.83, "fault-both-3": 3566.05, "fault-both-7": 7289.40}, d)])
    write_kernel(root, NEW, [latency({"fault-both-1": 1006.88, "fault-both-3": 2460.97, "fault-both-7": 5929.65}, d)])
    (root / "kernels.json").write_text(json.dumps([BASE, NEW]))
    return root


def test_header_name_split():
    assert split_name(BASE) == ("4.20.0-rc6", "mmotm-20181210")
    assert split_name("linux-3.0-vanilla") == ("linux", "3.0-vanilla")
    assert split_name("BASELINE") == ("BASELINE", "")
    assert split_name_2011("simple-writeback", "3.0.0-vanilla") == ("simple-writeback", "3.0.0-vanilla")
    assert split_name_2011("simple-writeback", "writeback-3.0.0-lesskswapd-v3r1") == ("writeback-3.0.0", "lesskswapd-v3r1")
    assert split_name_2011("fsmark", "base") == ("-", "fsmark-base")


def test_current_layout(thpscale):
    runs = load_runs([thpscale])
    assert [r.name for r in runs] == [BASE, NEW]
    text = render_text(build_report(runs, "current"))
    lines = text.splitlines()
    assert lines[0] == "thpscale Fault Latencies"
    assert lines[1] == " " * 22 + f"{'4.20.0-rc6':>23}" * 2
    assert lines[2] == " " * 22 + f"{'mmotm-20181210':>23}{'noremote-v2r14':>23}"
    assert "Amean     fault-both-1      864.83 (   0.00%)     1006.88 * -16.43%*" in lines
    assert "Amean     fault-both-3     3566.05 (   0.00%)     2460.97 *  30.99%*" in lines
    assert "Amean     fault-both-7     7289.40 (   0.00%)     5929.65 (  18.65%)" in lines
    # all Min rows, then all Amean rows, ...; significance only on the mean row
    labels = [line.split()[0] for line in lines[3:21]]
    assert labels == ["Min"] * 3 + ["Amean"] * 3 + ["Stddev"] * 3 + ["CoeffVar"] * 3 + ["Max"] * 3 + ["BAmean-95"] * 3
    assert all("*" not in line for line in lines[3:21] if not line.startswith("Amean"))
    assert "Stddev    fault-both-7     2000.00 (   0.00%)     2000.00 (   0.00%)" in lines
    # duration: sums over iterations; vmstat: Ops rows, velocities over the summed elapsed time
    assert "Duration User          27.30       27.30" in lines
    assert "Duration Elapsed      580.13      580.13" in lines
    assert any(line.startswith("Ops Kswapd velocity ") and line.endswith("       2.59           2.59") for line in lines)
    assert any(line.startswith("Ops Allocation stalls ") and line.endswith("7.00") for line in lines)
    assert text.endswith("AutoNUMA cost" + " " * 15 + f"{0:15.2f}" * 2 + "\n")


def test_higher_is_better_uses_hmean_rows(tmp_path):
    tput = lambda m: [{"title": "bench Throughput", "preferred": "higher", "unit": "ops/s",
                       "ops": [{"name": "ops-1", "samples": spread(m, 0.01)}]}]
    write_kernel(tmp_path, "base-a", tput(71.43), benchmark="bench")
    write_kernel(tmp_path, "new-b", tput(95.43), benchmark="bench")
    report = build_report(load_runs([tmp_path]), "current")
    labels = [r.label for r in report.tables[0].rows]
    assert labels == ["Min", "Hmean", "HStddev", "HCoeffVar", "Max", "BHmean-95"]
    hmean = report.tables[0].rows[1].cells[1]
    assert hmean.significant and f"{hmean.pct:.2f}" == "33.60"


def write_2011(root: Path) -> None:
    files_s = lambda lo, hi: {"name": "Files/s", "samples": [lo, hi]}
    overhead = lambda lo, hi: {"name": "Overhead", "samples": [lo, hi]}
    for name, f, o, dd in [
        ("3.0-rc6-vanilla", files_s(100.11 - 57.51, 100.11 + 57.51), overhead(76704.0, 90000.0), [59, 527, 36]),
        ("3.0-rc6-zlcfirst", files_s(135.17 - 138.97, 135.17 + 138.97), overhead(76501.0, 80000.0), [59, 296, 19]),
        ("3.0-rc6-zlcreconsider", files_s(49.10, 70.00), overhead(77784.0, 95000.0), [55, 320, 20]),
    ]:
        metrics = [
            {"title": "FS-Mark", "preferred": "higher", "unit": "files/s", "ops": [f]},
            {"title": "FS-Mark Overhead", "preferred": "lower", "unit": "us", "ops": [o]},
            {"title": "LARGE DD", "preferred": "lower", "unit": "s",
             "ops": [{"name": n, "samples": [v]} for n, v in zip(["download tar", "dd source files", "delete source"], dd)]},
        ]
        write_kernel(root, name, metrics, benchmark="fsmark")


def test_2011_layout(tmp_path):
    write_2011(tmp_path)
    runs = load_runs([tmp_path / "3.0-rc6-vanilla", tmp_path / "3.0-rc6-zlcfirst", tmp_path / "3.0-rc6-zlcreconsider"])
    text = render_text(build_report(runs, "2011"))
    lines = text.splitlines()
    assert lines[0] == "FS-Mark"
    assert lines[1] == " " * 15 + f"{'fsmark-3.0':>21}" * 3
    assert lines[2] == " " * 15 + f"{'rc6-vanilla':>21}{'rc6-zlcfirst':>21}{'rc6-zlcreconsider':>21}"
    mean = next(line for line in lines if line.startswith("Files/s  mean  "))
    assert mean.startswith("Files/s  mean        100.11 ( 0.00%)      135.17 (25.94%)")
    stddev = next(line for line in lines if line.startswith("Files/s  stddev"))
    # population stddev; % with the metric's own (higher-is-better) 2011 formula
    assert stddev.startswith("Files/s  stddev       57.51 ( 0.00%)      138.97 (58.62%)")
    assert "Overhead min       76704.00 ( 0.00%)    76501.00 ( 0.27%)    77784.00 (-1.39%)" in lines
    assert "download tar           59 ( 0.00%)   59 ( 0.00%)   55 ( 7.27%)" in lines
    assert "dd source files       527 ( 0.00%)  296 (78.04%)  320 (64.69%)" in lines
    assert "delete source          36 ( 0.00%)   19 (89.47%)   20 (80.00%)" in lines
    i = lines.index("MMTests Statistics: duration")
    assert lines[i + 1] == f"{'User/Sys Time Running Test (seconds)':<40}" + f"{'220.00':>10}" * 3
    assert lines[i + 2] == f"{'Total Elapsed Time (seconds)':<40}" + f"{'580.13':>10}" * 3
    assert lines[i + 3] == "" and lines[i + 4] == "MMTests Statistics: vmstat"
    assert f"{'Kswapd efficiency':<40}" + f"{'80%':>10}" * 3 in lines
    assert f"{'Kswapd velocity':<40}" + f"{'2.586':>10}" * 3 in lines
    assert "*" not in text


def test_json_round_trip(thpscale):
    report = build_report(load_runs([thpscale]), "current")
    data = report_to_json(report)
    assert json.loads(json.dumps(data, allow_nan=False)) == data
    assert data["format"] == "current" and data["runs"] == [BASE, NEW] and data["benchmark"] == "thpscale"
    assert [t["kind"] for t in data["tables"]] == ["multiops", "duration", "vmstat"]
    t = data["tables"][0]
    assert t["title"] == "thpscale Fault Latencies" and t["preferred"] == "lower"
    assert t["header"] == [["4.20.0-rc6", "4.20.0-rc6"], ["mmotm-20181210", "noremote-v2r14"]]
    row = next(r for r in t["rows"] if r["label"] == "Amean" and r["op"] == "fault-both-3")
    assert row["cells"][0] == {"value": pytest.approx(3566.05), "pct": 0.0, "significant": False}
    assert row["cells"][1]["significant"] is True and round(row["cells"][1]["pct"], 2) == 30.99
    data11 = report_to_json(build_report(load_runs([thpscale]), "2011"))
    assert json.loads(json.dumps(data11, allow_nan=False)) == data11
    vm = data11["tables"][-1]
    assert vm["title"] == "MMTests Statistics: vmstat" and vm["rows"][8]["cells"][0]["text"] == "80%"


def test_folder_expansion_order(tmp_path):
    m = [latency({"x": 1.0}, {"x": 0.1})]
    for n in ("b-2", "a-1", "c-3"):
        write_kernel(tmp_path, n, m)
    assert [r.name for r in load_runs([tmp_path])] == ["a-1", "b-2", "c-3"]
    (tmp_path / "kernels.json").write_text(json.dumps(["c-3", "a-1"]))
    assert [r.name for r in load_runs([tmp_path])] == ["c-3", "a-1"]
    assert [r.name for r in load_runs([tmp_path / "b-2", tmp_path / "a-1" / "summary.json"])] == ["b-2", "a-1"]


def test_missing_ops_print_as_zero(tmp_path):
    write_kernel(tmp_path, "a-1", [latency({"x": 10.0}, {"x": 1.0})])
    write_kernel(tmp_path, "b-2", [latency({"x": 10.0, "y": 5.0}, {"x": 1.0, "y": 1.0})])
    text = render_text(build_report(load_runs([tmp_path]), "current"))
    assert "Amean     y        0.00 (   0.00%)        5.00 (   0.00%)" in text


def test_report_errors(tmp_path):
    with pytest.raises(ReportError, match="no such results folder"):
        load_runs([tmp_path / "missing"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(ReportError, match="not a results folder"):
        load_runs([tmp_path / "empty"])
    bad = tmp_path / "bad" / "k-1"
    bad.mkdir(parents=True)
    (bad / "summary.json").write_text("{not json")
    with pytest.raises(ReportError, match=r"summary\.json: invalid JSON") as e:
        load_runs([bad])
    assert str(bad) in str(e.value)
    (bad / "summary.json").write_text(json.dumps({"format": 7}))
    with pytest.raises(ReportError, match="unsupported format 7"):
        load_runs([bad])
    (bad / "summary.json").write_text(json.dumps({"format": 1, "name": "k-1", "benchmark": "b", "iterations": [],
                                                  "metrics": [{"title": "t", "preferred": "sideways", "ops": []}]}))
    with pytest.raises(ReportError, match=r"metrics\[0\]\.preferred"):
        load_runs([bad])
    listed = tmp_path / "listed"
    listed.mkdir()
    (listed / "kernels.json").write_text(json.dumps(["gone"]))
    with pytest.raises(ReportError, match="has no summary.json"):
        load_runs([listed])
    write_kernel(tmp_path / "mixed", "a-1", [], benchmark="one")
    write_kernel(tmp_path / "mixed", "b-2", [], benchmark="two")
    with pytest.raises(ReportError, match="different benchmarks"):
        load_runs([tmp_path / "mixed"])
    with pytest.raises(ReportError, match="unknown report format"):
        build_report(load_runs([tmp_path / "mixed" / "a-1"]), "html")
