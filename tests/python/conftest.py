"""Shared fixtures: run the CLI in-process and capture its output and exit status."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from mmtwin.cli import main

ROOT = Path(__file__).resolve().parents[2]


class Result:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err


@pytest.fixture
def cli(capsys):
    def run(*args: str) -> Result:
        code = main([str(a) for a in args])
        cap = capsys.readouterr()
        return Result(code, cap.out, cap.err)

    return run


SMALL = textwrap.dedent(
    """
    [scenario]
    name = "small"
    seed = 5
    iterations = 3

    [machine]
    nodes = [{ id = 0, cpus = 2, memory = "64M" }]

    [[kernel]]
    name = "old-3.0"
    profile = "linux-3.0"

    [[kernel]]
    name = "new-6.x"
    profile = "linux-6.x"

    [workload]
    type = "anon-churn"
    duration = "200ms"
    footprint = 0.9

    [sampling]
    interval = "50ms"
    dump_at = ["100ms"]
    """
)


@pytest.fixture
def small_scenario(tmp_path: Path) -> Path:
    p = tmp_path / "small.toml"
    p.write_text(SMALL)
    return p


# SMALL with two anon-churn workloads of different durations: results names "anonchurn" and
# "anonchurn-2".
TWO = SMALL.replace(
    '[workload]\ntype = "anon-churn"\nduration = "200ms"\nfootprint = 0.9\n',
    '[[workload]]\ntype = "anon-churn"\nduration = "200ms"\nfootprint = 0.9\n\n'
    '[[workload]]\ntype = "anon-churn"\nduration = "300ms"\nfootprint = 0.9\n',
).replace('name = "small"', 'name = "two"')
assert TWO.count("[[workload]]") == 2


@pytest.fixture
def two_scenario(tmp_path: Path) -> Path:
    p = tmp_path / "two.toml"
    p.write_text(TWO)
    return p
