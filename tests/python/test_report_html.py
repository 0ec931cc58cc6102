"""The HTML report: `--html FILE` writes the comparison's tables and the vmstat timeline plots as
one page, the same bytes for the same results, and bad paths are refused before any work."""

from __future__ import annotations

import re

import numpy as np

from pathlib import Path

from mmtwin.report.compare import Cell, Metric, Row, Run, Table
from mmtwin.report.html import panels, plot_samples, render_table, sample_tables, series


def test_compare_html_has_every_table_value_and_the_plots(tmp_path, cli, small_scenario):
    out = tmp_path / "res"
    assert cli("run", small_scenario, "-o", out, "-q").code == 0
    page = tmp_path / "report.html"
    r = cli("compare", out, "--html", page)
    assert r.code == 0, r.err
    text = page.read_text()
    assert text.startswith("<!DOCTYPE html>") and text.rstrip().endswith("</html>")
    # The timelines, and anon-churn's one-operation tables sample by sample (three iterations).
    assert text.count("<svg") == 2 and "vmstat timelines of the first iteration" in text
    for k in ("old-3.0", "new-6.x"):
        assert f"<th>{k}</th>" in text
    # The duration table's elapsed seconds of each kernel appear as the text report prints them.
    elapsed = re.search(r"Duration Elapsed\s+([\d.]+)\s+([\d.]+)", r.out)
    assert elapsed is not None
    for v in elapsed.groups():
        assert f'<td class="num">{v}</td>' in text
    # The text report is unchanged by --html.
    assert r.out == cli("compare", out).out
    again = tmp_path / "again.html"
    assert cli("compare", out, "--html", again).code == 0
    assert again.read_bytes() == page.read_bytes()


def test_run_html_writes_the_page_of_the_results_it_wrote(tmp_path, cli, small_scenario):
    out, page = tmp_path / "res", tmp_path / "run.html"
    assert cli("run", small_scenario, "-o", out, "-q", "--html", page).code == 0
    other = tmp_path / "compare.html"
    assert cli("compare", out, "--html", other).code == 0
    assert page.read_text().replace(str(out), "X") == other.read_text().replace(str(out), "X")


def test_bad_html_paths_exit_2_before_any_work_and_write_nothing(tmp_path, cli, small_scenario):
    out = tmp_path / "res"
    (tmp_path / "file.txt").write_text("")
    r = cli("run", small_scenario, "-o", out, "-q", "--html", tmp_path / "file.txt" / "r.html")
    assert r.code == 2 and "is not a directory" in r.err and r.err.count("\n") == 1
    assert not out.exists()
    assert cli("run", small_scenario, "-o", out, "-q").code == 0
    r = cli("compare", out, "--html", tmp_path)
    assert r.code == 2 and "is a directory" in r.err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.txt", "res", "small.toml"]


def test_missing_folders_of_the_html_path_are_made_like_the_results_folders(tmp_path, cli, small_scenario):
    # make demo writes results/anon-churn.html in a fresh clone, where results/ does not exist yet.
    out, page = tmp_path / "results" / "res", tmp_path / "results" / "res.html"
    assert cli("run", small_scenario, "-o", out, "-q", "--html", page).code == 0
    assert page.read_text().startswith("<!DOCTYPE html>") and out.is_dir()


def test_rows_zero_in_every_run_are_left_out_of_vmstat_tables_and_counted():
    rows = [Row("Ops", "Swap Ins", [Cell(0.0), Cell(0.0)]), Row("Ops", "Minor Faults", [Cell(5.0), Cell(0.0)])]
    html = render_table(Table("", "vmstat", [], rows), ["a", "b"])
    assert "Minor Faults" in html and "Swap Ins" not in html
    assert "Left out: 1 row zero in every run." in html
    # Benchmark tables keep their zero rows.
    bench = render_table(Table("x", "multiops", [], [Row("Min", "t", [Cell(0.0, 0.0), Cell(0.0, 0.0)])]), ["a", "b"])
    assert "Min t" in bench and "Left out" not in bench


def test_rates_are_averaged_between_the_plotted_samples():
    n = 2001
    t = np.arange(n) * 1e8  # 100 ms samples
    tl = {
        "time_ns": t,
        "nr_free_pages": np.full(n, 256.0),
        "pgscan_kswapd_normal": np.arange(n) * 10.0,  # 100 pages/s
        "pgscan_direct": np.arange(n) * 30.0,  # 300 pages/s (the 4.8+ name)
        "pgpgout": np.arange(n) * 1024.0,  # 10 MiB/s
        "pgpgin": np.arange(n) * 512.0,  # 5 MiB/s
    }
    s = series(tl)
    x, free = s["free"]
    assert len(x) <= 801 and x[0] == 0 and x[-1] == (n - 1) / 10
    assert np.allclose(free, 1.0)
    assert np.allclose(s["scan_kswapd"][1], 100) and np.allclose(s["scan_direct"][1], 300)
    assert np.allclose(s["pgpgout"][1], 10) and np.allclose(s["pgpgin"][1], 5)
    assert not s["dirty"][1].any()


def _run(name: str, metrics: list) -> Run:
    return Run(name, Path("."), "b", "linux-3.0", metrics, 0.0, 0.0, 0.0, {}, 1)


def test_tables_of_one_operation_with_several_samples_get_a_samples_plot():
    loops = Metric("fsmark Files/s", "higher", "files/s", {"Files/s": np.array([300.0, 190.0, 188.0])})
    phases = Metric("largedd", "lower", "s", {"download": np.array([11.0]), "dd": np.array([530.0])})
    once = Metric("mappedwriter Time", "lower", "s", {"write": np.array([39.4])})
    runs = [_run("a", [loops, phases, once]), _run("b", [loops, phases, once])]
    assert sample_tables(runs) == [("fsmark Files/s", "Files/s", "files/s")]
    svg = plot_samples(runs)
    assert svg is not None and svg.lstrip().startswith(b"<?xml") and b"<svg" in svg
    assert plot_samples([_run("a", [phases, once])]) is None


def test_a_machine_of_several_nodes_gets_free_and_file_pages_per_node_panels():
    n = 11
    tl = {"time_ns": np.arange(n) * 1e8, "nr_free_pages": np.full(n, 768.0), "nr_file_pages": np.arange(n) * 256.0}
    tl |= {"pgpgout": np.arange(n) * 1024.0}
    one = series(tl)
    assert not any(k.startswith("node") for k in one)
    # Free memory always; the page cache and disk panels have data; anonymous pages and
    # scanning are zero all along and left out.
    assert [p[0].split(" (")[0] for p in panels([("k", one)])] == ["Free memory", "Page cache", "Disk traffic"]
    tl |= {"node0_nr_free_pages": np.full(n, 512.0), "node1_nr_free_pages": np.full(n, 256.0)}
    tl |= {"node0_nr_file_pages": np.arange(n) * 256.0, "node1_nr_file_pages": np.zeros(n)}
    two = series(tl)
    assert np.allclose(two["node0_free"][1], 2.0) and np.allclose(two["node1_free"][1], 1.0)
    assert np.allclose(two["node0_file"][1], np.arange(n))
    titles = [p[0] for p in panels([("k", two)])]
    assert len(titles) == 5
    assert titles[2].startswith("Free memory per node") and "node 1 - -" in titles[2]
    assert titles[3].startswith("File pages per node")


def test_a_kernel_without_a_timeline_keeps_the_others_colours(tmp_path, cli, small_scenario):
    out = tmp_path / "res"
    assert cli("run", small_scenario, "-o", out, "-q").code == 0
    both = tmp_path / "both.html"
    assert cli("compare", out, "--html", both).code == 0
    (out / "old-3.0" / "vmstat.parquet").unlink()
    one = tmp_path / "one.html"
    assert cli("compare", out, "--html", one).code == 0
    timelines = [re.search(r"<svg.*?</svg>", p.read_text(), re.S).group(0) for p in (both, one)]
    # matplotlib's first two colours: the baseline's blue is gone, the second kernel's orange stays.
    assert "#1f77b4" in timelines[0] and "#ff7f0e" in timelines[0]
    assert "#1f77b4" not in timelines[1] and "#ff7f0e" in timelines[1]
