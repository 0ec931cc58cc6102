"""End to end with a scenario of several workloads: one results folder per benchmark under the
run folder, one report per benchmark, and `mmtwin compare` on the run folder, a benchmark folder
or kernel folders."""

from __future__ import annotations

import hashlib
import json

import pytest

from conftest import SMALL

BENCHES = ["anonchurn", "anonchurn-2"]
KERNELS = ["old-3.0", "new-6.x"]


def test_two_workloads_write_one_folder_per_benchmark(tmp_path, cli, two_scenario):
    out = tmp_path / "res"
    r = cli("run", two_scenario, "-o", out, "-q", "--iterations", "2")
    assert r.code == 0, r.err
    assert sorted(p.name for p in out.iterdir()) == sorted(["scenario.toml", "benchmarks.json", *BENCHES])
    assert (out / "scenario.toml").read_text() == two_scenario.read_text()
    assert json.loads((out / "benchmarks.json").read_text()) == BENCHES
    elapsed = {}
    for b in BENCHES:
        assert json.loads((out / b / "kernels.json").read_text()) == KERNELS
        for k in KERNELS:
            d = out / b / k
            cfg = (d / "config.toml").read_text()
            assert f'results_name = "{b}"' in cfg
            assert (d / "config.sha256").read_text().strip() == hashlib.sha256(cfg.encode()).hexdigest()
            s = json.loads((d / "summary.json").read_text())
            assert s["name"] == k and s["benchmark"] == "anonchurn" and len(s["iterations"]) == 2
            assert (d / "vmstat.parquet").exists() and (d / "proc" / "iter-1" / "t-100000000ns" / "zoneinfo").exists()
            elapsed[b, k] = sum(it["duration"]["elapsed"] for it in s["iterations"])
    # The second workload runs 300ms instead of 200ms.
    for k in KERNELS:
        assert elapsed["anonchurn-2", k] > elapsed["anonchurn", k]

    # One report per benchmark, each after a heading line with its name.
    lines = r.out.splitlines()
    assert lines[0] == "== anonchurn =="
    assert lines.count("== anonchurn ==") == 1 and lines.count("== anonchurn-2 ==") == 1
    first, second = r.out.split("== anonchurn-2 ==\n")
    one = cli("compare", out / "anonchurn")
    assert one.code == 0, one.err
    assert first == "== anonchurn ==\n" + one.out + "\n"
    two = cli("compare", out / "anonchurn-2")
    assert second == two.out
    assert cli("compare", out / "anonchurn-2" / "old-3.0", out / "anonchurn-2" / "new-6.x").out == two.out
    assert one.out != two.out

    again = cli("compare", out)
    assert again.code == 0 and again.out == r.out
    both = cli("compare", out, out)
    assert both.code == 0 and both.out.count("== anonchurn-2 ==") == 1

    j = cli("compare", out, "--json")
    assert j.code == 0, j.err
    data = json.loads(j.out)
    assert [b["name"] for b in data["benchmarks"]] == BENCHES
    for b in data["benchmarks"]:
        assert b["benchmark"] == "anonchurn" and b["runs"] == KERNELS and b["tables"]
    single = json.loads(cli("compare", out / "anonchurn-2", "--json").out)
    assert data["benchmarks"][1] == {"name": "anonchurn-2", **single}
    assert json.loads(cli("run", two_scenario, "-o", tmp_path / "res2", "-q", "--iterations", "2", "--json").out) == data


def test_each_workload_runs_as_it_would_alone(tmp_path, cli, two_scenario):
    """Running in one pool with another workload changes nothing in a benchmark's results (only
    the results name, hence the config hash, differs)."""
    alone = tmp_path / "alone.toml"
    alone.write_text(SMALL.replace('duration = "200ms"', 'duration = "300ms"'))
    assert cli("run", alone, "-o", tmp_path / "a", "-q", "--iterations", "1").code == 0
    assert cli("run", two_scenario, "-o", tmp_path / "m", "-q", "--iterations", "1", "-j", "3").code == 0
    for k in KERNELS:
        a = json.loads((tmp_path / "a" / k / "summary.json").read_text())
        m = json.loads((tmp_path / "m" / "anonchurn-2" / k / "summary.json").read_text())
        assert a.pop("config_sha256") != m.pop("config_sha256")
        assert a == m


def test_check_lists_the_benchmarks(cli, two_scenario):
    r = cli("check", two_scenario)
    assert r.code == 0, r.err
    assert "(anonchurn, anonchurn-2; kernels old-3.0, new-6.x; 3 iteration(s))" in r.out


def test_a_workload_runs_its_own_iterations(tmp_path, cli, two_scenario):
    """`iterations` in a workload's table runs that workload so many times and the others the
    scenario's count; `--iterations` replaces both."""
    own = tmp_path / "own.toml"
    own.write_text(two_scenario.read_text().replace('duration = "300ms"', 'duration = "300ms"\niterations = 2').replace("iterations = 3", "iterations = 1"))
    r = cli("check", own)
    assert r.code == 0, r.err
    assert "(anonchurn ×1, anonchurn-2 ×2; kernels old-3.0, new-6.x; iterations per benchmark)" in r.out
    assert cli("run", own, "-o", tmp_path / "a", "-q").code == 0
    assert cli("run", own, "-o", tmp_path / "b", "-q", "--iterations", "1").code == 0
    for k in KERNELS:
        runs = {b: len(json.loads((tmp_path / "a" / b / k / "summary.json").read_text())["iterations"]) for b in BENCHES}
        assert runs == {"anonchurn": 1, "anonchurn-2": 2}
        assert len(json.loads((tmp_path / "b" / "anonchurn-2" / k / "summary.json").read_text())["iterations"]) == 1


def test_compare_refuses_to_mix_layouts(tmp_path, cli, two_scenario, small_scenario):
    multi, single = tmp_path / "m", tmp_path / "s"
    assert cli("run", two_scenario, "-o", multi, "-q", "--iterations", "1").code == 0
    assert cli("run", small_scenario, "-o", single, "-q", "--iterations", "1").code == 0
    r = cli("compare", multi, single)
    assert r.code == 2 and "several benchmarks" in r.err and r.err.count("\n") == 1
    # A benchmark folder of a multi-workload run compares with a single-workload run.
    assert cli("compare", multi / "anonchurn", single).code == 0
    (multi / "benchmarks.json").write_text('["anonchurn", "nope"]\n')
    r = cli("compare", multi)
    assert r.code == 2 and "nope" in r.err and "Traceback" not in r.err


def test_a_failure_while_writing_leaves_nothing_behind(tmp_path, cli, two_scenario, monkeypatch):
    import mmtwin.results as results

    real = results.write_benchmark

    def fail_on_second(d, benchmark, runs):
        if benchmark["name"] == "anonchurn-2":
            raise OSError("disk full")
        real(d, benchmark, runs)

    monkeypatch.setattr(results, "write_benchmark", fail_on_second)
    out = tmp_path / "out"
    with pytest.raises(OSError, match="disk full"):
        cli("run", two_scenario, "-o", out, "-q", "--iterations", "1")
    assert not out.exists()
    assert not any(p.name.startswith(".out") for p in tmp_path.iterdir())
