"""Fidelity: the per-zone-dirty-limits seed's directions on the reduced scenario.

Asserted (the seed's findings): with per-zone dirty limits, reclaim meets almost no dirty file
pages, so file writes from reclaim fall to near zero on every file system; the 512M runs on
ext3 and xfs, where those writes are real I/O scattered into the flusher's stream, finish much
sooner, while ext4 (whose writepage refuses delalloc pages from reclaim: counted, no I/O) stays
about flat; at 4608M the gain disappears and direct reclaim appears with per-zone limits (a
small Normal zone over its dirty limit sends page-cache allocations down to DMA32).
"""

from __future__ import annotations

import json

import pytest

from tests.python.conftest import ROOT

SCENARIO = ROOT / "scenarios" / "seeds" / "per-zone-dirty-limits-reduced.toml"
VANILLA, PZD = "3.0.0-vanilla", "perzonedirty-v1r1"


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    from mmtwin.cli import main

    out = tmp_path_factory.mktemp("fid") / "pzd"
    assert main(["run", str(SCENARIO), "-o", str(out), "-q", "--json"]) == 0
    return out


def _summary(out, bench, kernel):
    return json.loads((out / bench / kernel / "summary.json").read_text())


def _vm(out, bench, kernel):
    total = {}
    for it in _summary(out, bench, kernel)["iterations"]:
        for k, v in it["vmstat"].items():
            total[k] = total.get(k, 0) + v
    return total


def _dd_time(out, bench, kernel):
    for m in _summary(out, bench, kernel)["metrics"]:
        for o in m["ops"]:
            if o["name"] == "1":
                return sum(o["samples"]) / len(o["samples"])
    raise KeyError("1")


def _file_writes(vm):
    return vm.get("nr_vmscan_write", 0) - vm.get("pswpout", 0)


def _direct(vm):
    return sum(v for k, v in vm.items() if k.startswith("pgscan_direct_"))


@pytest.mark.parametrize("fs", ["ext3", "ext4", "xfs"])
def test_per_zone_limits_cut_file_writes_from_reclaim_to_near_zero(report, fs):
    bench = f"simple-writeback-512M-{fs}"
    vanilla, pzd = _file_writes(_vm(report, bench, VANILLA)), _file_writes(_vm(report, bench, PZD))
    assert vanilla > 1000
    assert pzd <= vanilla / 100


@pytest.mark.parametrize("fs", ["ext3", "xfs"])
def test_512m_runs_with_real_reclaim_writes_finish_much_sooner(report, fs):
    bench = f"simple-writeback-512M-{fs}"
    assert _dd_time(report, bench, PZD) < 0.8 * _dd_time(report, bench, VANILLA)


def test_512m_ext4_stays_about_flat(report):
    bench = "simple-writeback-512M-ext4"
    v, p = _dd_time(report, bench, VANILLA), _dd_time(report, bench, PZD)
    assert abs(p - v) / v < 0.03


@pytest.mark.parametrize("fs", ["ext3", "ext4", "xfs"])
def test_at_4608m_the_gain_disappears_and_direct_reclaim_appears(report, fs):
    bench = f"simple-writeback-4608M-{fs}"
    v, p = _dd_time(report, bench, VANILLA), _dd_time(report, bench, PZD)
    assert p > 0.95 * v
    assert _direct(_vm(report, bench, PZD)) > _direct(_vm(report, bench, VANILLA))
