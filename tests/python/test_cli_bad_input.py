"""Bad input: one clear message naming the file, key and valid choices; exit status 2; no
traceback; no results folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import SMALL, TWO


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "bad.toml"
    p.write_text(text)
    return p


CASES = [
    # (what, edit, expected fragments of the message)
    ("unknown key", lambda s: s.replace("seed = 5", "seed = 5\nseeed = 6"), ["scenario", "unknown field `seeed`", "seed"]),
    ("unknown sysctl", lambda s: s.replace('profile = "linux-3.0"', 'profile = "linux-3.0"\nsysctl = { min_free_kbyte = 1 }'), ["kernel[0].sysctl", "min_free_kbytes"]),
    ("wrong type", lambda s: s.replace("cpus = 2", 'cpus = "two"'), ["machine.nodes", "invalid type"]),
    ("unknown profile", lambda s: s.replace('"linux-6.x"\n', '"linux-2.6"\n'), ["kernel[1].profile", "linux-3.0", "linux-6.x"]),
    ("unknown policy", lambda s: s.replace('profile = "linux-3.0"', 'profile = "linux-3.0"\npolicy = { pcp = "fifo" }'), ["kernel[0].policy.pcp", "order0-hot-cold", "order-lists-autotune"]),
    ("unknown workload", lambda s: s.replace('type = "anon-churn"', 'type = "kernbench"'), ["workload", "anon-churn"]),
    ("node without cpus", lambda s: s.replace("cpus = 2", "cpus = 0"), ["machine.nodes[0].cpus", "no CPUs"]),
    ("memory not whole pages", lambda s: s.replace('memory = "64M"', "memory = 67108865"), ["machine.nodes[0].memory", "whole number of 4096-byte pages"]),
    ("empty node", lambda s: s.replace('memory = "64M"', 'memory = "0"'), ["machine.nodes[0].memory", "empty"]),
    ("overlapping holes", lambda s: s.replace('memory = "64M" }]', 'memory = "64M" }]\nholes = [{ start = "32M", size = "8M" }, { start = "36M", size = "8M" }]'), ["machine.holes", "overlap"]),
    ("distance table", lambda s: s.replace('memory = "64M" }]', 'memory = "64M" }]\ndistance = [[10, 20]]'), ["machine.distance", "1×1"]),
    ("bad size", lambda s: s.replace('"64M"', '"64Q"'), ["machine.nodes", "K, M, G, T"]),
    ("toml syntax", lambda s: s + "\n[[kernel\n", ["TOML syntax error"]),
    ("duplicate kernel names", lambda s: s.replace('name = "new-6.x"', 'name = "old-3.0"'), ["kernel[1].name", "two kernels"]),
    ("system text without a period", lambda s: s.replace('memory = "64M" }]', 'memory = "64M" }]\nsystem = { text = "4M", period = "0s" }'), ["machine.system.period", "longer than 0"]),
    ("system files negative", lambda s: s.replace('memory = "64M" }]', 'memory = "64M" }]\nsystem = { files = -1 }'), ["machine.system.files", "-1"]),
    ("system file too large", lambda s: s.replace('memory = "64M" }]', 'memory = "64M" }]\nsystem = { files = 10, file_size = "2T" }'), ["machine.system.file_size", "1T"]),
]


WORKLOAD_TABLE = '[workload]\ntype = "anon-churn"\nduration = "200ms"\nfootprint = 0.9\n'
assert WORKLOAD_TABLE in SMALL

# Scenarios with a [[workload]] array (edits of TWO, or of SMALL for an empty array).
MULTI_CASES = [
    ("empty workload array", lambda s: "workload = []\n" + SMALL.replace(WORKLOAD_TABLE, ""), ["workload:", "at least one workload"]),
    ("unknown workload in array", lambda s: s.replace('type = "anon-churn"\nduration = "300ms"', 'type = "kernbench"'), ["workload[1].type", "kernbench", "anon-churn"]),
    ("unknown key in array", lambda s: s.replace('duration = "300ms"', 'duraton = "300ms"'), ["workload[1]", "unknown field `duraton`", "duration"]),
    ("bad value in array", lambda s: s.replace('duration = "300ms"', 'duration = "0s"'), ["workload[1].duration", "longer than 0"]),
    ("no iterations in array", lambda s: s.replace('duration = "300ms"', 'duration = "300ms"\niterations = 0'), ["workload[1]", "at least 1"]),
    ("workload not a table", lambda s: "workload = 5\n" + SMALL.replace(WORKLOAD_TABLE, ""), ["workload:", "[workload] table", "[[workload]]"]),
]
CASES += [(what, lambda s, edit=edit: edit(TWO), fragments) for what, edit, fragments in MULTI_CASES]


@pytest.mark.parametrize("what,edit,fragments", CASES, ids=[c[0] for c in CASES])
def test_bad_scenarios_exit_2_with_one_clear_message(tmp_path, cli, what, edit, fragments):
    bad = write(tmp_path, edit(SMALL))
    out = tmp_path / "results"
    r = cli("run", bad, "-o", out, "-q")
    assert r.code == 2, (what, r.err)
    assert "Traceback" not in r.err
    assert r.err.count("\n") == 1, r.err
    assert str(bad) in r.err
    for f in fragments:
        assert f in r.err, (what, f, r.err)
    assert not out.exists()
    assert not any(p.name.startswith(".results") for p in tmp_path.iterdir())


def test_too_large_for_this_host(tmp_path, cli):
    bad = write(tmp_path, SMALL.replace('memory = "64M"', 'memory = "4T"'))
    r = cli("run", bad, "-o", tmp_path / "out", "-q")
    assert r.code == 2
    assert "GiB available" in r.err and "machine" in r.err
    assert not (tmp_path / "out").exists()


def test_missing_file_and_bad_arguments(tmp_path, cli):
    r = cli("run", tmp_path / "nope.toml")
    assert r.code == 2 and "no such scenario file" in r.err
    r = cli("run")
    assert r.code == 2 and "required" in r.err and "Traceback" not in r.err
    r = cli("frobnicate")
    assert r.code == 2 and "invalid choice" in r.err
    r = cli("compare", tmp_path / "missing-results")
    assert r.code == 2 and "Traceback" not in r.err


def test_existing_output_is_not_overwritten_without_force(tmp_path, cli, small_scenario):
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep").write_text("x")
    r = cli("run", small_scenario, "-o", out, "-q")
    assert r.code == 2 and "--force" in r.err
    assert (out / "keep").exists()


def test_check_accepts_the_example_scenarios(cli):
    from conftest import ROOT

    for p in sorted((ROOT / "scenarios").rglob("*.toml")):
        r = cli("check", p)
        assert r.code == 0, r.err
