"""The real-kernel oracle: bad setups end with one clear message and exit status 2, and a real
guest (Debian's 6.1 kernel under QEMU/TCG) boots the tiny scenario and captures sane counters.

The real-boot tests run `mmtwin oracle setup` themselves, which installs the Debian packages
(qemu-system-x86, busybox-static, e2fsprogs, cpio, kmod) and downloads the kernel package on a
fresh machine; later runs find everything in the cache (~/.cache/mmtwin/oracle).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

TINY = ROOT / "scenarios" / "oracle" / "tiny-dd.toml"
WRITTEN = 512 << 20  # what tiny-dd's dd writes


def mmtwin(*args: object, env: dict | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mmtwin.cli", *map(str, args)],
        capture_output=True, text=True, env=env, timeout=timeout, stdin=subprocess.DEVNULL,
    )


def assert_clean_failure(p: subprocess.CompletedProcess, *fragments: str) -> None:
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert "Traceback" not in p.stderr, p.stderr
    first = p.stderr.splitlines()[0]
    assert first.startswith("mmtwin: "), p.stderr
    for f in fragments:
        assert f in first, (f, p.stderr)


def no_path_env() -> dict:
    return {**os.environ, "PATH": "/nonexistent"}


# ----------------------------------------------------------------------------------------------
# Bad setups that need no guest


def test_run_without_qemu_says_so(tmp_path):
    p = mmtwin("oracle", "run", TINY, "-o", tmp_path / "out", "--cache", tmp_path / "cache", env=no_path_env())
    assert_clean_failure(p, "qemu-system-x86_64 not found", "mmtwin oracle setup")
    assert not (tmp_path / "out").exists()


def test_validate_without_qemu_says_so(tmp_path):
    p = mmtwin("validate", TINY, "-o", tmp_path / "out", env=no_path_env())
    assert_clean_failure(p, "qemu-system-x86_64 not found")
    assert not (tmp_path / "out").exists()


def test_setup_without_packages_or_apt_says_what_is_missing(tmp_path):
    p = mmtwin("oracle", "setup", "--cache", tmp_path / "cache", env=no_path_env())
    assert_clean_failure(p, "missing Debian packages", "qemu-system-x86", "apt-get")


def test_bad_timeout_is_refused(tmp_path):
    p = mmtwin("oracle", "run", TINY, "-o", tmp_path / "out", "--timeout", "0")
    assert_clean_failure(p, "--timeout")


def test_bad_iterations_are_refused(tmp_path):
    p = mmtwin("validate", TINY, "-o", tmp_path / "out", "--iterations", "0")
    assert_clean_failure(p, "--iterations must be at least 1")
    assert not (tmp_path / "out").exists()


def test_mean_and_spread_over_runs():
    from mmtwin.oracle.validate import compare, mean_sd

    mean, sd = mean_sd([{"a": 10.0, "b": None}, {"a": 14.0, "b": 3.0}])
    assert mean == {"a": 12.0, "b": None} and sd["a"] == pytest.approx(2.8284271) and sd["b"] is None
    one_mean, one_sd = mean_sd([{"a": 5.0}])
    assert one_mean == {"a": 5.0} and one_sd == {"a": None}
    [row] = compare({"a": 12.0}, {"a": 9.0}, sd)
    assert row == {"counter": "a", "real": 12.0, "real_sd": sd["a"], "twin": 9.0, "error": -0.25}


# ----------------------------------------------------------------------------------------------
# With the oracle set up (installs packages and the kernel on a fresh machine)


@pytest.fixture(scope="module")
def oracle_ready() -> None:
    p = mmtwin("oracle", "setup", timeout=1800)
    assert p.returncode == 0, p.stderr
    again = mmtwin("oracle", "setup", "-q")
    assert again.returncode == 0 and "up to date" in again.stdout, again.stdout + again.stderr


def test_missing_kernel_package_says_so(oracle_ready, tmp_path):
    p = mmtwin("oracle", "setup", "-q", "--cache", tmp_path / "cache", "--kernel-package", "linux-image-0.0.0-0-nonexistent-amd64")
    assert_clean_failure(p, "cannot download the kernel package linux-image-0.0.0-0-nonexistent-amd64")


def test_run_without_setup_says_so(oracle_ready, tmp_path):
    p = mmtwin("oracle", "run", TINY, "-o", tmp_path / "out", "--cache", tmp_path / "empty")
    assert_clean_failure(p, "not set up", "mmtwin oracle setup")


def test_real_boot_captures_sane_counters(oracle_ready, tmp_path):
    out = tmp_path / "real"
    p = mmtwin("oracle", "run", TINY, "-o", out, "-q")
    assert p.returncode == 0, p.stderr
    names = json.loads((out / "kernels.json").read_text())
    assert len(names) == 1 and names[0].startswith("linux-6.1.") and names[0].endswith("-real"), names
    kd = out / names[0]
    cfg = (kd / "config.toml").read_bytes()
    assert (kd / "config.sha256").read_text().strip() == hashlib.sha256(cfg).hexdigest()
    s = json.loads((kd / "summary.json").read_text())
    assert s["benchmark"] == "simple-writeback" and s["name"] == names[0]
    [it] = s["iterations"]
    v = it["vmstat"]
    # Every byte dd wrote was dirtied (less what per-cpu counter deltas still hold: 6.1 folds a
    # node counter's per-cpu delta only past its threshold, at most 125 pages); all but what was
    # still dirty at `rm` (at most the dirty limit, 20% of a 256M machine) went to disk.
    # pgpgout counts KiB.
    assert v["nr_dirtied"] >= WRITTEN // 4096 - 125
    assert v["pgpgout"] >= (WRITTEN - (64 << 20)) // 1024, v["pgpgout"]
    assert v["pgpgout"] * 1024 <= WRITTEN * 1.2
    assert v["pgscan_kswapd"] >= v["pgsteal_kswapd"] > 0
    assert v["pgscan_direct"] >= v["pgsteal_direct"]
    assert 0 < it["duration"]["elapsed"] < 120
    [table] = s["metrics"]
    assert table["title"] == "simple-writeback" and table["ops"][0]["name"] == "1"
    assert 0 < table["ops"][0]["samples"][0] <= it["duration"]["elapsed"]
    import pyarrow.parquet as pq

    tl = pq.read_table(kd / "vmstat.parquet").to_pydict()
    assert len(tl["time_ns"]) >= 2 and tl["pgpgout"] == sorted(tl["pgpgout"])
    assert (kd / "proc" / "iter-0" / "t-0ns" / "buddyinfo").read_text().startswith("Node 0")
    assert "ORACLE exit 0" in (kd / "console.log").read_text()
    c = mmtwin("compare", out)
    assert c.returncode == 0 and "simple-writeback" in c.stdout and "Kswapd pages scanned" in c.stdout


def test_validate_prints_real_twin_and_error(oracle_ready, tmp_path):
    # Two boots: the real side is a mean with a spread, the twin's a mean over two seeds.
    p = mmtwin("validate", TINY, "-o", tmp_path / "v", "-q", "--json", "--iterations", "2")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    [b] = r["benchmarks"]
    [k] = b["kernels"]
    assert k["iterations"] == 2
    rows = {row["counter"]: row for row in k["rows"]}
    for c in ("pgscan_kswapd", "pgsteal_kswapd", "pgpgout", "allocstall", "simple-writeback 1 (s)"):
        assert rows[c]["real"] is not None and rows[c]["twin"] is not None, c
        assert rows[c]["real_sd"] is not None and rows[c]["real_sd"] >= 0, c
    pg = rows["pgpgout"]
    assert pg["error"] == pytest.approx((pg["twin"] - pg["real"]) / pg["real"])
    v = tmp_path / "v"
    assert (v / "twin" / "kernels.json").exists() and (v / "real" / "kernels.json").exists()
    [name] = json.loads((v / "real" / "kernels.json").read_text())
    real = json.loads((v / "real" / name / "summary.json").read_text())
    assert [it["iteration"] for it in real["iterations"]] == [0, 1]
    assert len(json.loads((v / "real" / name / "oracle.json").read_text())["iterations"]) == 2


def test_guest_kernel_panic_is_reported(oracle_ready, tmp_path):
    # No init at that path: the kernel panics ("No working init found").
    p = mmtwin("oracle", "run", TINY, "-o", tmp_path / "out", "-q", "--append", "rdinit=/nonexistent init=/nonexistent")
    assert_clean_failure(p, "panicked")
    assert "console tail" in p.stderr
    assert not (tmp_path / "out").exists()


def test_guest_timeout_is_reported(oracle_ready, tmp_path):
    p = mmtwin("oracle", "run", TINY, "-o", tmp_path / "out", "-q", "--timeout", "2")
    assert_clean_failure(p, "did not finish within the 2 s timeout")
    assert not (tmp_path / "out").exists()


def test_guest_program_error_is_reported(oracle_ready, tmp_path):
    scen = tmp_path / "fsmark.toml"
    scen.write_text(TINY.read_text().replace('type = "simple-writeback"\nsize = "512M"\nbs = "1M"\nfactors = [0]', 'type = "fsmark"\nthreads = 1\nfiles = 4\nloops = 1\nsize = "4K"'))
    assert mmtwin("check", scen).returncode == 0
    p = mmtwin("oracle", "run", scen, "-o", tmp_path / "out", "-q")
    assert_clean_failure(p, "the guest program failed", "fsmark")
    assert not (tmp_path / "out").exists()
