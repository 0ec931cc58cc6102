"""End to end: `mmtwin run` writes a complete results folder and prints the comparison, and
`mmtwin compare` on that folder prints the same report."""

from __future__ import annotations

import hashlib
import json

import pyarrow.parquet as pq


def test_run_writes_results_and_compare_prints_the_same(tmp_path, cli, small_scenario):
    out = tmp_path / "res"
    r = cli("run", small_scenario, "-o", out, "-q")
    assert r.code == 0, r.err
    assert "anonchurn" in r.out
    assert "old" in r.out and "new" in r.out
    assert json.loads((out / "kernels.json").read_text()) == ["old-3.0", "new-6.x"]
    for k in ("old-3.0", "new-6.x"):
        d = out / k
        cfg = (d / "config.toml").read_bytes()
        assert (d / "config.sha256").read_text().strip() == hashlib.sha256(cfg).hexdigest()
        s = json.loads((d / "summary.json").read_text())
        assert s["name"] == k and s["benchmark"] == "anonchurn" and len(s["iterations"]) == 3
        assert s["iterations"][0]["vmstat"]["pgfault"] > 0
        assert {m["title"] for m in s["metrics"]} >= {"anonchurn Fault Latencies", "anonchurn Throughput"}
        t = pq.read_table(d / "vmstat.parquet")
        assert {"iteration", "time_ns", "pgfree", "nr_free_pages"} <= set(t.column_names)
        assert sorted(set(t.column("iteration").to_pylist())) == [0, 1, 2]
        dump = d / "proc" / "iter-0" / "t-100000000ns"
        assert (dump / "buddyinfo").read_text().startswith("Node 0, zone      DMA")
        assert "Free pages count per migrate type" in (dump / "pagetypeinfo").read_text()
    c = cli("compare", out)
    assert c.code == 0, c.err
    assert c.out == r.out
    c2 = cli("compare", out / "old-3.0", out / "new-6.x")
    assert c2.out == r.out


def test_same_scenario_gives_identical_results(tmp_path, cli, small_scenario):
    a, b = tmp_path / "a", tmp_path / "b"
    assert cli("run", small_scenario, "-o", a, "-q").code == 0
    assert cli("run", small_scenario, "-o", b, "-q", "-j", "1").code == 0
    for k in ("old-3.0", "new-6.x"):
        assert (a / k / "summary.json").read_bytes() == (b / k / "summary.json").read_bytes()
        assert (a / k / "config.sha256").read_text() == (b / k / "config.sha256").read_text()
        assert pq.read_table(a / k / "vmstat.parquet").equals(pq.read_table(b / k / "vmstat.parquet"))


def test_json_and_2011_formats(tmp_path, cli, small_scenario):
    out = tmp_path / "res"
    assert cli("run", small_scenario, "-o", out, "-q", "--iterations", "2").code == 0
    s = json.loads((out / "old-3.0" / "summary.json").read_text())
    assert len(s["iterations"]) == 2
    j = cli("compare", out, "--json")
    assert j.code == 0
    json.loads(j.out)
    old = cli("compare", out, "--format", "2011")
    assert old.code == 0
    assert "MMTests Statistics: duration" in old.out and "MMTests Statistics: vmstat" in old.out


def test_dump_prints_proc_files_of_the_booted_machine(cli, small_scenario):
    r = cli("dump", small_scenario, "buddyinfo", "zoneinfo")
    assert r.code == 0
    assert r.out.startswith("Node 0, zone      DMA")
    assert "protection: (" in r.out
    r = cli("dump", small_scenario, "--kernel", "nope")
    assert r.code == 2 and "old-3.0" in r.err


def test_without_output_a_run_never_overwrites(tmp_path, cli, small_scenario, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli("run", small_scenario, "-q", "--iterations", "1").code == 0
    assert cli("run", small_scenario, "-q", "--iterations", "1").code == 0
    assert (tmp_path / "results" / "small" / "summary.json").exists() is False
    assert (tmp_path / "results" / "small" / "kernels.json").exists()
    assert (tmp_path / "results" / "small-2" / "kernels.json").exists()


def test_a_hung_run_is_one_message_exit_1_and_writes_nothing(tmp_path, cli, small_scenario, monkeypatch):
    from mmtwin import _core

    real = _core.run_iteration

    def hangs_on_iteration_1(toml, i, progress=None):  # type: ignore[no-untyped-def]
        if i == 1:
            raise _core.SimulationError("the simulation hung at 1201.000 s: no workload task ran for 1200 s")
        return real(toml, i, progress)

    monkeypatch.setattr(_core, "run_iteration", hangs_on_iteration_1)
    out = tmp_path / "out"
    r = cli("run", small_scenario, "-q", "--iterations", "2", "-o", str(out))
    assert r.code == 1
    assert "iteration 1: the simulation hung" in r.err and r.err.count("\n") == 1 and "Traceback" not in r.err
    assert not out.exists()


def test_results_and_html_get_the_modes_new_files_get(tmp_path, cli, small_scenario):
    out, page = tmp_path / "res", tmp_path / "r.html"
    assert cli("run", small_scenario, "-o", out, "-q", "--html", page).code == 0
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain.txt").write_text("")
    assert out.stat().st_mode == (tmp_path / "plain").stat().st_mode
    assert page.stat().st_mode == (tmp_path / "plain.txt").stat().st_mode
