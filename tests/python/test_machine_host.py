"""`mmtwin machine --from-host`: reading this host's memory layout into a [machine] section.

Checked against this machine's own /proc and /sys, against hand-written /proc and /sys trees
under fixtures/host/, and, when the Rust core is built, by booting the simulator on the result
and comparing its zoneinfo with the one the machine was read from.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

from mmtwin.machine_host import HostReadError, format_size, machine_from_host, render_machine_toml

try:
    import tomllib
except ImportError:  # Python < 3.11
    tomllib = None  # type: ignore[assignment]

needs_tomllib = pytest.mark.skipif(tomllib is None, reason="tomllib needs Python 3.11+")

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "host"
NOW = "2024-05-06 07:08:09"
K, M, G = 1 << 10, 1 << 20, 1 << 30


def fixture(name: str) -> Dict[str, Any]:
    root = FIXTURES / name
    return machine_from_host(str(root / "proc"), str(root / "sys"), host_page_size=4096)


def size(s: Any) -> int:
    """Parses a [machine] size the way scenario files write them."""
    if isinstance(s, int):
        return s
    m = re.fullmatch(r"(\d+)([KMGT]?)", s)
    assert m, s
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30, "T": 40}[m.group(2)]


def zoneinfo_zones(text: str) -> Dict[Tuple[int, str], Dict[str, int]]:
    """(node, zone) -> {start_pfn, spanned, present} for the populated zones of a zoneinfo."""
    zones: Dict[Tuple[int, str], Dict[str, int]] = {}
    cur: Dict[str, int] = {}
    for line in text.splitlines():
        h = re.match(r"Node (\d+), zone\s+(\w+)", line)
        if h:
            cur = zones.setdefault((int(h.group(1)), h.group(2)), {})
            continue
        w = line.split()
        if len(w) == 2 and w[0].rstrip(":") in ("start_pfn", "spanned", "present"):
            cur.setdefault(w[0].rstrip(":"), int(w[1]))
    return {k: v for k, v in zones.items() if v.get("present", 0) > 0}


def node_order(zones: Dict[Tuple[int, str], Dict[str, int]]) -> List[int]:
    """Host node ids with memory, in physical address order (how the simulator numbers them)."""
    first: Dict[int, int] = {}
    for (node, _), z in zones.items():
        first[node] = min(first.get(node, z["start_pfn"]), z["start_pfn"])
    return sorted(first, key=lambda n: (first[n], n))


def check_well_formed(m: Dict[str, Any]) -> None:
    """What the simulator requires of any [machine] section."""
    assert m["page_size"] == 4096
    n = len(m["nodes"])
    assert n >= 1
    for i, node in enumerate(m["nodes"]):
        assert node["id"] == i
        assert size(node["memory"]) > 0 and size(node["memory"]) % 4096 == 0
        assert ("start" in node) == (i == 0)
    assert size(m["nodes"][0]["start"]) % 4096 == 0
    d = m["distance"]
    assert len(d) == n and all(len(r) == n for r in d)
    assert all(d[i][i] == 10 for i in range(n))
    assert all(d[i][j] > 10 for i in range(n) for j in range(n) if i != j)
    holes = [(size(h["start"]), size(h["size"])) for h in m.get("holes", [])]
    assert "holes" not in m or holes, "an empty holes list is left out"
    for s, z in holes:
        assert s % 4096 == 0 and z % 4096 == 0 and z > 0
        assert s >= size(m["nodes"][0]["start"])
    for (s1, z1), (s2, _) in zip(holes, holes[1:]):
        assert s1 + z1 < s2, "holes are sorted, apart and merged when adjacent"


# --------------------------------------------------------------------------------------------
# (b) hand-written host trees


EXPECTED = {
    # DMA32 ends at 3G, Normal starts at 4G: the PCI hole is the gap between the zones.
    "numa2-pci-hole": {
        "page_size": 4096,
        "nodes": [
            {"id": 0, "cpus": 4, "memory": "11533944K", "start": "4K"},
            {"id": 1, "cpus": 4, "memory": "12G"},
        ],
        "distance": [[10, 21], [21, 10]],
        "holes": [{"start": "15996K", "size": "388K"}, {"start": "3G", "size": "1G"}],
    },
    # No /sys/devices/system/node: one node, CPUs counted from /proc/cpuinfo.
    "single-no-sysfs": {
        "page_size": 4096,
        "nodes": [{"id": 0, "cpus": 4, "memory": "2096624K", "start": "4K"}],
        "distance": [[10]],
        "holes": [{"start": "15996K", "size": "388K"}],
    },
    # Node 1 has CPUs but no memory (its CPUs join node 0, the nearer one); node 2 starts 1G
    # above node 0's end and becomes node 1; DMA32 spans to 4G with its last 1G missing;
    # populated Movable zones give movablecore.
    "numa3-memoryless-movable": {
        "page_size": 4096,
        "nodes": [
            {"id": 0, "cpus": 4, "memory": "7339640K", "start": "4K"},
            {"id": 1, "cpus": 2, "memory": "8G"},
        ],
        "distance": [[10, 30], [30, 10]],
        "holes": [
            {"start": "15996K", "size": "388K"},
            {"start": "3G", "size": "1G"},
            {"start": "8G", "size": "1G"},
        ],
        "movablecore": "4G",
    },
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_machines(name):
    m = fixture(name)
    assert m == EXPECTED[name]
    check_well_formed(m)


def test_numa2_memory_and_address_space_add_up():
    m = fixture("numa2-pci-hole")
    zones = zoneinfo_zones((FIXTURES / "numa2-pci-hole/proc/zoneinfo").read_text())
    per_node = {n: sum(z["present"] for (nn, _), z in zones.items() if nn == n) * 4096 for n in (0, 1)}
    assert [size(n["memory"]) for n in m["nodes"]] == [per_node[0], per_node[1]]
    assert per_node[1] == 12 * G
    assert per_node[0] == 3 * G - 16 * M + (4096 - 1 - 97) * 4096 + 8 * G
    end = max(z["start_pfn"] + z["spanned"] for z in zones.values()) * 4096
    covered = size(m["nodes"][0]["start"]) + sum(per_node.values()) + sum(size(h["size"]) for h in m["holes"])
    assert covered == end == 24 * G


def test_no_cpu_information_at_all_falls_back_to_os_cpu_count(tmp_path):
    (tmp_path / "proc").mkdir()
    shutil.copy(FIXTURES / "single-no-sysfs/proc/zoneinfo", tmp_path / "proc/zoneinfo")
    m = machine_from_host(str(tmp_path / "proc"), str(tmp_path / "sys"), host_page_size=4096)
    assert m["nodes"] == [{"id": 0, "cpus": os.cpu_count() or 1, "memory": "2096624K", "start": "4K"}]
    assert m["distance"] == [[10]]


def test_sys_cpu_online_is_used_before_cpuinfo(tmp_path):
    shutil.copytree(FIXTURES / "single-no-sysfs/proc", tmp_path / "proc")
    (tmp_path / "sys/devices/system/cpu").mkdir(parents=True)
    (tmp_path / "sys/devices/system/cpu/online").write_text("0-5,8\n")
    m = machine_from_host(str(tmp_path / "proc"), str(tmp_path / "sys"), host_page_size=4096)
    assert m["nodes"][0]["cpus"] == 7


def test_larger_host_pages_are_converted_to_bytes():
    m = machine_from_host(
        str(FIXTURES / "numa2-pci-hole/proc"), str(FIXTURES / "numa2-pci-hole/sys"), host_page_size=16384
    )
    assert m["page_size"] == 4096
    assert m["nodes"][1]["memory"] == "48G"
    assert m["holes"][1] == {"start": "12G", "size": "4G"}


def minimal_zoneinfo(tmp_path: Path, zones: List[Tuple[int, str, int, int, int]]) -> Path:
    """A zoneinfo with only the lines that matter: (node, zone, start_pfn, spanned, present)."""
    proc = tmp_path / "proc"
    proc.mkdir()
    text = "".join(
        f"Node {n}, zone {z:>8}\n        spanned  {sp}\n        present  {pr}\n  start_pfn:           {st}\n"
        for n, z, st, sp, pr in zones
    )
    (proc / "zoneinfo").write_text(text)
    return proc


def test_hole_at_a_zones_end_merges_with_the_gap_after_it(tmp_path):
    # DMA32 spans 16M-3.5G with 256M missing, then nothing until Normal at 4G.
    proc = minimal_zoneinfo(tmp_path, [
        (0, "DMA", 1, 4095, 4095),
        (0, "DMA32", 4096, 7 * 2**17 - 4096, 7 * 2**17 - 4096 - 2**16),
        (0, "Normal", 2**20, 2**20, 2**20),
    ])
    m = machine_from_host(str(proc), str(tmp_path / "sys"), host_page_size=4096)
    assert m["holes"] == [{"start": "3328M", "size": "768M"}]
    assert size(m["nodes"][0]["memory"]) == 8 * G - 4096 - 768 * M
    assert m["nodes"][0]["start"] == "4K"


def test_multi_node_zoneinfo_without_sysfs_shares_out_the_cpus(tmp_path):
    shutil.copytree(FIXTURES / "numa2-pci-hole/proc", tmp_path / "proc")
    (tmp_path / "sys/devices/system/cpu").mkdir(parents=True)
    (tmp_path / "sys/devices/system/cpu/online").write_text("0-4\n")
    m = machine_from_host(str(tmp_path / "proc"), str(tmp_path / "sys"), host_page_size=4096)
    assert [n["cpus"] for n in m["nodes"]] == [3, 2]
    assert m["distance"] == [[10, 20], [20, 10]]


def test_node_with_memory_but_no_cpus_keeps_zero_cpus(tmp_path):
    shutil.copytree(FIXTURES / "numa2-pci-hole", tmp_path / "host")
    (tmp_path / "host/sys/devices/system/node/node1/cpulist").write_text("\n")
    m = machine_from_host(str(tmp_path / "host/proc"), str(tmp_path / "host/sys"), host_page_size=4096)
    assert [n["cpus"] for n in m["nodes"]] == [4, 0]
    assert "# Node 1 has memory but no CPUs" in render_machine_toml(m, now=NOW)


def test_nodes_are_numbered_in_address_order(tmp_path):
    # Host node 1 holds the low memory, host node 0 the high: the simulator lays nodes out in
    # id order, so host node 1 becomes node 0 (and the distance table follows).
    shutil.copytree(FIXTURES / "numa2-pci-hole", tmp_path / "host")
    zi = tmp_path / "host/proc/zoneinfo"
    zi.write_text(zi.read_text().replace("Node 0,", "Node X,").replace("Node 1,", "Node 0,").replace("Node X,", "Node 1,"))
    node = tmp_path / "host/sys/devices/system/node"
    (node / "node0/cpulist").write_text("0\n")
    (node / "node0/distance").write_text("10 31\n")
    (node / "node1/distance").write_text("31 10\n")
    m = machine_from_host(str(tmp_path / "host/proc"), str(tmp_path / "host/sys"), host_page_size=4096)
    assert m["nodes"] == [
        {"id": 0, "cpus": 4, "memory": "11533944K", "start": "4K"},
        {"id": 1, "cpus": 1, "memory": "12G"},
    ]
    assert m["distance"] == [[10, 31], [31, 10]]


def test_format_size():
    assert format_size(0) == "0"
    assert format_size(4096) == "4K"
    assert format_size(3 * G) == "3G"
    assert format_size(2 << 40) == "2T"
    assert format_size(1536 * M) == "1536M"
    assert format_size(1000) == "1000"


# --------------------------------------------------------------------------------------------
# (c) missing and malformed files


def tree(tmp_path: Path, base: str = "numa2-pci-hole") -> Tuple[Path, Path]:
    shutil.copytree(FIXTURES / base, tmp_path / "host")
    return tmp_path / "host/proc", tmp_path / "host/sys"


def edit(path: Path, old: str, new: str, count: int = 1) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, count))


ZONEINFO_CASES = [
    ("spanned not a number", lambda t: edit(t, "spanned  4095", "spanned  40x5"), ["line 15", "spanned", "40x5"]),
    ("present missing", lambda t: edit(t, "        present  3998\n", ""), ["line 1:", "node 0 zone DMA", "'present'"]),
    ("present above spanned", lambda t: edit(t, "present  3998", "present  5000"), ["node 0 zone DMA", "5000", "4095"]),
    ("start_pfn missing", lambda t: edit(t, "  start_pfn:           1\n", ""), ["node 0 zone DMA", "start_pfn"]),
    ("start_pfn garbage", lambda t: edit(t, "start_pfn:           1\n", "start_pfn:           one\n"), ["start_pfn", "one"]),
    ("not a zoneinfo", lambda t: t.write_text("MemTotal: 1 kB\n"), ["no 'Node N, zone NAME' sections"]),
    ("empty file", lambda t: t.write_text(""), ["no 'Node N, zone NAME' sections"]),
    ("no populated zone", lambda t: t.write_text("Node 0, zone DMA\n  spanned 0\n  present 0\n"), ["no zone has any present pages"]),
    ("missing file", lambda t: t.unlink(), ["no such file"]),
    ("a directory", lambda t: (t.unlink(), t.mkdir()), ["is a directory"]),
    ("overlapping zones overfull", lambda t: edit(t, "start_pfn:           4096", "start_pfn:           2"), ["overlapping", "more than"]),
]


@pytest.mark.parametrize("what,damage,fragments", ZONEINFO_CASES, ids=[c[0] for c in ZONEINFO_CASES])
def test_malformed_zoneinfo_names_the_file(tmp_path, what, damage, fragments):
    proc, sys_ = tree(tmp_path)
    zi = proc / "zoneinfo"
    damage(zi)
    with pytest.raises(HostReadError) as e:
        machine_from_host(str(proc), str(sys_), host_page_size=4096)
    msg = str(e.value)
    assert msg.startswith(str(zi) + ":"), msg
    assert "\n" not in msg
    for f in fragments:
        assert f in msg, (what, f, msg)


NODE = "devices/system/node"
SYS_CASES = [
    ("bad cpulist", f"{NODE}/node1/cpulist", lambda p: p.write_text("2-3,x\n"), ["'0-3,8'", "2-3,x"]),
    ("backwards cpulist", f"{NODE}/node1/cpulist", lambda p: p.write_text("3-2\n"), ["backwards"]),
    ("missing cpulist", f"{NODE}/node0/cpulist", lambda p: p.unlink(), ["no such file"]),
    ("short distance row", f"{NODE}/node0/distance", lambda p: p.write_text("10\n"), ["expected 2 distances", "'10'"]),
    ("bad distance", f"{NODE}/node1/distance", lambda p: p.write_text("21 ten\n"), ["expected 2 distances"]),
    ("online names a missing node", f"{NODE}/online", lambda p: p.write_text("0-2\n"), ["node 2", "does not exist"]),
    ("no cpus anywhere", f"{NODE}/node0/cpulist", lambda p: (p.write_text("\n"), (p.parent.parent / "node1/cpulist").write_text("")), ["no node lists any CPU"]),
]


@pytest.mark.parametrize("what,rel,damage,fragments", SYS_CASES, ids=[c[0] for c in SYS_CASES])
def test_malformed_sysfs_names_the_file(tmp_path, what, rel, damage, fragments):
    proc, sys_ = tree(tmp_path)
    damage(sys_ / rel)
    with pytest.raises(HostReadError) as e:
        machine_from_host(str(proc), str(sys_), host_page_size=4096)
    msg = str(e.value)
    named = sys_ / NODE if what == "no cpus anywhere" else sys_ / rel
    assert msg.startswith(str(named) + ":"), msg
    for f in fragments:
        assert f in msg, (what, f, msg)


def test_zoneinfo_node_missing_from_sysfs(tmp_path):
    proc, sys_ = tree(tmp_path)
    shutil.rmtree(sys_ / NODE / "node1")
    (sys_ / NODE / "online").write_text("0\n")
    (sys_ / NODE / "node0/distance").write_text("10\n")
    with pytest.raises(HostReadError, match=r"zoneinfo: has node 1, but .* has no node1"):
        machine_from_host(str(proc), str(sys_), host_page_size=4096)


# --------------------------------------------------------------------------------------------
# (d) TOML rendering


def all_machines() -> List[Tuple[str, Dict[str, Any]]]:
    out = [(name, fixture(name)) for name in sorted(EXPECTED)]
    if Path("/proc/zoneinfo").is_file():
        out.append(("this host", machine_from_host()))
    return out


@needs_tomllib
@pytest.mark.parametrize("name,m", all_machines(), ids=[n for n, _ in all_machines()])
def test_rendered_toml_parses_back_to_the_same_dict(name, m):
    text = render_machine_toml(m, now=NOW)
    assert text.startswith("#")
    first = text.splitlines()[0]
    assert "host" in first and NOW in first
    assert text.endswith("\n")
    assert tomllib.loads(text) == {"machine": m}


@needs_tomllib
def test_render_layout_and_default_time():
    text = render_machine_toml(EXPECTED["numa2-pci-hole"], now=NOW)
    body = text[text.index("[machine]"):]
    assert body == (
        "[machine]\n"
        "page_size = 4096\n"
        "nodes = [\n"
        '  { id = 0, cpus = 4, memory = "11533944K", start = "4K" },\n'
        '  { id = 1, cpus = 4, memory = "12G" },\n'
        "]\n"
        "distance = [\n"
        "  [10, 21],\n"
        "  [21, 10],\n"
        "]\n"
        "holes = [\n"
        '  { start = "15996K", size = "388K" },\n'
        '  { start = "3G", size = "1G" },\n'
        "]\n"
    )
    assert re.search(r"on \d{4}-\d\d-\d\d \d\d:\d\d:\d\d", render_machine_toml(EXPECTED["single-no-sysfs"]))


@needs_tomllib
def test_render_odd_values_and_cpuless_nodes():
    m = {
        "page_size": 4096,
        "nodes": [{"id": 0, "cpus": 2, "memory": 8 * G, "start": "0"}, {"id": 1, "cpus": 0, "memory": "1G"}],
        "distance": [[10, 20], [20, 10]],
        "movablecore": "0",
        "boot_reserved": "32M",
        "note": 'a "quoted"\\ value\twith\ncontrol\x01chars',
        "odd key": True,
    }
    text = render_machine_toml(m, now="today\nand tomorrow")
    assert "# Node 1 has memory but no CPUs" in text
    assert "today and tomorrow" in text.splitlines()[0]
    assert tomllib.loads(text) == {"machine": m}


# --------------------------------------------------------------------------------------------
# (a) this machine


def read_meminfo_total() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no MemTotal in /proc/meminfo")


on_linux = pytest.mark.skipif(
    not (Path("/proc/zoneinfo").is_file() and Path("/proc/meminfo").is_file()), reason="needs Linux /proc"
)


@on_linux
def test_this_host():
    m = machine_from_host()
    check_well_formed(m)
    page = os.sysconf("SC_PAGE_SIZE")

    # CPUs: every online CPU is on some node.
    assert sum(n["cpus"] for n in m["nodes"]) == os.cpu_count()

    # Nodes: one per node with memory.
    node_dir = Path("/sys/devices/system/node")
    if (node_dir / "has_memory").is_file():
        spec = (node_dir / "has_memory").read_text().strip()
        n_mem = sum(int(b) - int(a) + 1 if b else 1 for a, b in re.findall(r"(\d+)(?:-(\d+))?", spec))
        assert len(m["nodes"]) == n_mem
    elif node_dir.is_dir():
        assert len(m["nodes"]) <= len([p for p in node_dir.iterdir() if re.fullmatch(r"node\d+", p.name)])
    else:
        assert len(m["nodes"]) == 1

    # Memory: the present pages are what MemTotal counts plus what the kernel reserved at boot
    # (memmap, kernel image, crash kernel...), a few percent.
    present = sum(size(n["memory"]) for n in m["nodes"])
    total = read_meminfo_total()
    assert total <= present <= total * 1.08 + 64 * M, (present, total)

    # Address space: start + memory + holes reach exactly the end of the last zone.
    zones = zoneinfo_zones(Path("/proc/zoneinfo").read_text())
    assert present == sum(z["present"] for z in zones.values()) * page
    end = max(z["start_pfn"] + z["spanned"] for z in zones.values()) * page
    holes = sum(size(h["size"]) for h in m.get("holes", []))
    assert size(m["nodes"][0]["start"]) + present + holes == end
    assert size(m["nodes"][0]["start"]) == min(z["start_pfn"] for z in zones.values()) * page

    movable = sum(z["present"] for (_, name), z in zones.items() if name == "Movable") * page
    assert size(m.get("movablecore", "0")) == movable


# --------------------------------------------------------------------------------------------
# The simulator boots the machine with the host's zones


def core():
    try:
        from mmtwin import _core
    except ImportError as e:  # the Rust core is not built
        pytest.skip(f"mmtwin._core not available: {e}")
    return _core


SCENARIO = """
[scenario]
name = "from-host"
seed = 1
iterations = 1

{machine}
[[kernel]]
name = "k"
profile = "linux-6.x"

[workload]
type = "anon-churn"
duration = "10ms"
footprint = 0.5

[sampling]
interval = "10ms"
"""


def boot_zones(m: Dict[str, Any]) -> Dict[Tuple[int, str], Dict[str, int]]:
    _core = core()
    resolved = _core.resolve_scenario(SCENARIO.format(machine=render_machine_toml(m, now=NOW)))
    if resolved["twin_bytes"] > 2 * G:
        pytest.skip(f"the twin of this machine needs {resolved['twin_bytes'] / G:.1f} GiB")
    return zoneinfo_zones(_core.boot_dump(resolved["kernels"][0]["toml"])["zoneinfo"])


def check_boot_matches(host_zoneinfo: str, m: Dict[str, Any], page: int, spans: bool) -> None:
    host = zoneinfo_zones(host_zoneinfo)
    renumber = {h: i for i, h in enumerate(node_order(host))}
    scale = page // 4096
    want = {
        (renumber[n], zone): {
            "start_pfn": z["start_pfn"] * scale,
            "present": z["present"] * scale,
            **({"spanned": z["spanned"] * scale} if spans else {}),
        }
        for (n, zone), z in host.items()
    }
    got = {k: {f: v[f] for f in want.get(k, v)} for k, v in boot_zones(m).items()}
    assert got == want


@pytest.mark.parametrize("name,spans", [("numa2-pci-hole", False), ("single-no-sysfs", True), ("numa3-memoryless-movable", True)])
def test_simulator_boots_fixture_with_its_zones(name, spans):
    # numa2's DMA32 ends at 3G where a kernel's would span up to 4G, so only starts and present
    # pages are compared there.
    text = (FIXTURES / name / "proc/zoneinfo").read_text()
    check_boot_matches(text, fixture(name), 4096, spans)


@on_linux
@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the simulator's zones are x86_64's")
def test_simulator_boots_this_host_with_its_zones():
    check_boot_matches(Path("/proc/zoneinfo").read_text(), machine_from_host(), os.sysconf("SC_PAGE_SIZE"), True)


# --------------------------------------------------------------------------------------------
# Through the CLI


needs_4k_pages = pytest.mark.skipif(
    hasattr(os, "sysconf") and os.sysconf("SC_PAGE_SIZE") != 4096, reason="fixtures are in 4 KiB pages"
)


@needs_tomllib
@needs_4k_pages
def test_cli_machine_from_host_fixture(cli, tmp_path):
    root = FIXTURES / "numa3-memoryless-movable"
    r = cli("machine", "--from-host", "--proc", root / "proc", "--sys", root / "sys")
    assert r.code == 0, r.err
    assert tomllib.loads(r.out) == {"machine": EXPECTED["numa3-memoryless-movable"]}
    out = tmp_path / "machine.toml"
    r = cli("machine", "--from-host", "--proc", root / "proc", "--sys", root / "sys", "-o", out)
    assert r.code == 0 and r.out == ""
    assert tomllib.loads(out.read_text()) == {"machine": EXPECTED["numa3-memoryless-movable"]}


@needs_4k_pages
def test_cli_malformed_host_file_exits_2(cli, tmp_path):
    proc, sys_ = tree(tmp_path)
    edit(proc / "zoneinfo", "present  3998", "present  lots")
    r = cli("machine", "--from-host", "--proc", proc, "--sys", sys_)
    assert r.code == 2
    assert "Traceback" not in r.err and r.err.count("\n") == 1
    assert str(proc / "zoneinfo") in r.err
