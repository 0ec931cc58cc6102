"""Describe this host's memory layout as a scenario ``[machine]`` section.

``machine_from_host()`` reads the kernel's own view of physical memory and returns the
``[machine]`` table as a plain dict; ``render_machine_toml()`` writes it as TOML text.

Where the numbers come from:

* ``/proc/zoneinfo``: one ``Node N, zone NAME`` section per zone with its ``start_pfn``,
  ``spanned`` and ``present`` page counts. A node's memory is the sum of its zones' present
  pages. Zones with no present pages are ignored.
* Holes (address space without memory) are found by walking the populated zones of the whole
  machine in address order: the space between one zone's end (``start_pfn + spanned``) and the
  next zone's ``start_pfn`` is a hole at a known place; the pages a zone spans but does not
  have (``spanned - present``) are a hole whose place the kernel does not report, and it is put
  at the end of that zone. That keeps every zone's span and present pages as on the host, and
  for the classic 3G-4G PCI hole (ZONE_DMA32 spanning up to 4G with 1G missing) it is the
  real place.
* ``/sys/devices/system/node/nodeN/cpulist`` and ``.../distance``: CPUs per node and the NUMA
  distance table. Without ``/sys/devices/system/node`` the machine is one node whose CPUs are
  counted from ``/sys/devices/system/cpu/online``, else ``/proc/cpuinfo``, else
  ``os.cpu_count()``; the distance table is then ``[[10]]``.
* Populated ``Movable`` zones become ``movablecore`` (their present memory in total).

The simulator numbers nodes 0, 1, 2, ... and lays them out one after the other in physical
address order, so nodes are numbered by where their memory starts (on almost every host that is
the host's own order). A node with CPUs but no memory is folded into the nearest node that has
memory (the node its CPUs allocate from); a node with memory but no CPUs (e.g. CXL memory)
keeps ``cpus = 0`` and ``render_machine_toml()`` says so in a comment, since every simulated
node needs a CPU.

Sizes are strings with the largest exact binary suffix ("12G", "11533944K"); present pages are
turned into bytes with the host's page size, and the machine always has 4096-byte pages.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

__all__ = ["HostReadError", "machine_from_host", "render_machine_toml", "format_size"]

PAGE_SIZE = 4096
LOCAL_DISTANCE = 10
REMOTE_DISTANCE = 20

_ZONE_HEADER = re.compile(r"^Node\s+(\d+)\s*,\s*zone\s+(\S+)\s*$")
_ZONE_FIELDS = ("spanned", "present", "start_pfn")


class HostReadError(Exception):
    """A host file is missing, unreadable or not in the expected format.

    The message names the file and what is wrong with it.
    """


# --------------------------------------------------------------------------------------------
# Small helpers


def format_size(nbytes: int) -> str:
    """Bytes as the largest exact binary suffix: 0 -> "0", 4096 -> "4K", 3 << 30 -> "3G"."""
    if nbytes < 0:
        raise ValueError(f"negative size {nbytes}")
    for suffix, mult in (("T", 1 << 40), ("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if nbytes >= mult and nbytes % mult == 0:
            return f"{nbytes // mult}{suffix}"
    return str(nbytes)


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except FileNotFoundError:
        raise HostReadError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise HostReadError(f"{path}: is a directory, expected a file") from None
    except (OSError, UnicodeDecodeError) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise HostReadError(f"{path}: cannot read: {reason}") from None


def _parse_list(text: str, path: Path) -> List[int]:
    """A kernel list such as "0-3,8,10-11" (empty for a node without CPUs)."""
    out: List[int] = []
    s = text.strip()
    if not s:
        return out
    for part in s.split(","):
        m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", part)
        if not m:
            raise HostReadError(f"{path}: expected a list like '0-3,8', got {s!r}")
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) is not None else lo
        if hi < lo:
            raise HostReadError(f"{path}: range {part.strip()!r} runs backwards")
        out.extend(range(lo, hi + 1))
    return out


# --------------------------------------------------------------------------------------------
# /proc/zoneinfo


class _Zone:
    __slots__ = ("node", "name", "start", "spanned", "present", "line")

    def __init__(self, node: int, name: str, start: int, spanned: int, present: int, line: int) -> None:
        self.node, self.name, self.start = node, name, start
        self.spanned, self.present, self.line = spanned, present, line

    @property
    def end(self) -> int:
        return self.start + self.spanned


def _parse_zoneinfo(text: str, path: Path) -> Tuple[List[_Zone], List[int]]:
    """Populated zones (present > 0) and every node id seen, in file order."""
    sections: List[Tuple[int, str, int, Dict[str, int]]] = []
    current: Optional[Dict[str, int]] = None
    for lineno, raw in enumerate(text.splitlines(), 1):
        m = _ZONE_HEADER.match(raw.strip())
        if m:
            current = {}
            sections.append((int(m.group(1)), m.group(2), lineno, current))
            continue
        if current is None:
            continue
        words = raw.split()
        if len(words) < 2:
            continue
        key = words[0].rstrip(":")
        if key not in _ZONE_FIELDS or key in current:
            continue
        if len(words) != 2 or not words[1].isdigit():
            raise HostReadError(
                f"{path}: line {lineno}: expected '{key}' followed by a number of pages, got {raw.strip()!r}"
            )
        current[key] = int(words[1])
    if not sections:
        raise HostReadError(f"{path}: no 'Node N, zone NAME' sections; is this /proc/zoneinfo?")

    zones: List[_Zone] = []
    nodes: List[int] = []
    for node, name, lineno, f in sections:
        if node not in nodes:
            nodes.append(node)
        where = f"{path}: line {lineno}: node {node} zone {name}"
        for key in ("spanned", "present"):
            if key not in f:
                raise HostReadError(f"{where} has no '{key}' page count")
        if f["present"] > f["spanned"]:
            raise HostReadError(f"{where} has more present pages ({f['present']}) than it spans ({f['spanned']})")
        if f["present"] == 0:
            continue  # an empty zone (e.g. Movable or Device without memory)
        if "start_pfn" not in f:
            raise HostReadError(f"{where} has {f['present']} present pages but no 'start_pfn'")
        zones.append(_Zone(node, name, f["start_pfn"], f["spanned"], f["present"], lineno))
    if not zones:
        raise HostReadError(f"{path}: no zone has any present pages")
    return zones, nodes


def _holes(zones: List[_Zone], path: Path) -> List[Tuple[int, int]]:
    """Holes as (start_pfn, pages), sorted and merged, from the zones of the whole machine.

    Zones whose spans overlap (nodes or zones interleaved in the address space) are taken
    together: their union is one span, and what it lacks of their summed present pages is put
    at its end.
    """
    ordered = sorted(zones, key=lambda z: (z.start, z.node, z.end))
    groups: List[List[int]] = []  # [start, end, present]
    for z in ordered:
        if groups and z.start < groups[-1][1]:
            g = groups[-1]
            g[1] = max(g[1], z.end)
            g[2] += z.present
        else:
            groups.append([z.start, z.end, z.present])
    holes: List[Tuple[int, int]] = []
    pos = groups[0][0]
    for start, end, present in groups:
        if start > pos:
            holes.append((pos, start - pos))
        missing = (end - start) - present
        if missing < 0:
            raise HostReadError(
                f"{path}: zones overlapping pfns {start}-{end} have {present} present pages, "
                f"more than the {end - start} they span"
            )
        if missing > 0:
            holes.append((end - missing, missing))
        pos = end
    merged: List[Tuple[int, int]] = []
    for s, n in holes:
        if merged and merged[-1][0] + merged[-1][1] == s:
            merged[-1] = (merged[-1][0], merged[-1][1] + n)
        else:
            merged.append((s, n))
    return merged


# --------------------------------------------------------------------------------------------
# CPUs and distances


def _count_cpus_without_nodes(proc: Path, sys: Path) -> int:
    online = sys / "devices" / "system" / "cpu" / "online"
    if online.is_file():
        n = len(_parse_list(_read(online), online))
        if n > 0:
            return n
    cpuinfo = proc / "cpuinfo"
    if cpuinfo.is_file():
        n = sum(1 for line in _read(cpuinfo).splitlines() if re.match(r"processor\s*:", line))
        if n > 0:
            return n
    return os.cpu_count() or 1


def _sys_nodes(node_dir: Path) -> List[int]:
    online = node_dir / "online"
    if online.is_file():
        ids = _parse_list(_read(online), online)
        for i in ids:
            if not (node_dir / f"node{i}").is_dir():
                raise HostReadError(f"{online}: lists node {i} but {node_dir / f'node{i}'} does not exist")
    else:
        try:
            names = [p.name for p in node_dir.iterdir()]
        except OSError as e:
            raise HostReadError(f"{node_dir}: cannot list: {e.strerror or e}") from None
        ids = sorted(int(n[4:]) for n in names if re.fullmatch(r"node\d+", n))
    if not ids:
        raise HostReadError(f"{node_dir}: no nodeN directories")
    return ids


def _read_distances(node_dir: Path, ids: List[int]) -> Dict[int, Dict[int, int]]:
    dist: Dict[int, Dict[int, int]] = {}
    for i in ids:
        path = node_dir / f"node{i}" / "distance"
        words = _read(path).split()
        if not all(w.isdigit() for w in words) or len(words) != len(ids):
            raise HostReadError(
                f"{path}: expected {len(ids)} distances (one per node {', '.join(map(str, ids))}), "
                f"got {' '.join(words)!r}"
            )
        dist[i] = dict(zip(ids, map(int, words)))
    return dist


# --------------------------------------------------------------------------------------------
# The machine


def machine_from_host(
    proc_root: str = "/proc", sys_root: str = "/sys", host_page_size: Optional[int] = None
) -> Dict[str, Any]:
    """This host's memory layout as a ``[machine]`` dict.

    Keys: ``page_size`` (4096), ``nodes`` (``[{"id", "cpus", "memory", "start" (node 0 only)}]``),
    ``distance`` (rows of ints), ``holes`` (``[{"start", "size"}]``, only if there are any) and
    ``movablecore`` (only if the host has populated Movable zones). Sizes are strings such as
    "12G". ``proc_root`` and ``sys_root`` let a copied tree stand in for /proc and /sys;
    ``host_page_size`` is the page size the zoneinfo counts are in (default: this host's).

    Raises HostReadError naming the file when a file is missing or malformed.
    """
    proc, sys = Path(proc_root), Path(sys_root)
    if host_page_size is None:
        try:
            host_page_size = int(os.sysconf("SC_PAGE_SIZE"))
        except (AttributeError, ValueError, OSError):
            host_page_size = PAGE_SIZE
    if host_page_size <= 0 or host_page_size % PAGE_SIZE:
        raise ValueError(f"host page size {host_page_size} is not a multiple of {PAGE_SIZE}")
    pg = host_page_size

    zi_path = proc / "zoneinfo"
    zones, zi_nodes = _parse_zoneinfo(_read(zi_path), zi_path)

    present: Dict[int, int] = {}
    first_pfn: Dict[int, int] = {}
    movable = 0
    for z in zones:
        present[z.node] = present.get(z.node, 0) + z.present
        first_pfn[z.node] = min(first_pfn.get(z.node, z.start), z.start)
        if z.name == "Movable":
            movable += z.present

    # Node ids, CPUs and distances from sysfs (or a fallback).
    node_dir = sys / "devices" / "system" / "node"
    if node_dir.is_dir():
        ids = _sys_nodes(node_dir)
        for n in zi_nodes:
            if n not in ids:
                raise HostReadError(f"{zi_path}: has node {n}, but {node_dir} has no node{n}")
        cpus: Dict[int, int] = {}
        for i in ids:
            path = node_dir / f"node{i}" / "cpulist"
            cpus[i] = len(_parse_list(_read(path), path))
        dist = _read_distances(node_dir, ids)
        if sum(cpus.values()) == 0:
            raise HostReadError(f"{node_dir}: no node lists any CPU in its cpulist")
    else:
        ids = sorted(zi_nodes)
        total = _count_cpus_without_nodes(proc, sys)
        # Without sysfs there is nothing to say which CPU sits where: share them out.
        cpus = {i: total // len(ids) + (1 if k < total % len(ids) else 0) for k, i in enumerate(ids)}
        dist = {i: {j: LOCAL_DISTANCE if i == j else REMOTE_DISTANCE for j in ids} for i in ids}

    with_memory = [i for i in ids if present.get(i, 0) > 0]
    # CPUs of memoryless nodes go to the nearest node with memory (ties: the lower id).
    for i in ids:
        if i not in with_memory and cpus[i]:
            nearest = min(with_memory, key=lambda j: (dist[i][j], j))
            cpus[nearest] += cpus[i]
    order = sorted(with_memory, key=lambda i: (first_pfn[i], i))

    nodes: List[Dict[str, Any]] = []
    for new_id, i in enumerate(order):
        node: Dict[str, Any] = {"id": new_id, "cpus": cpus[i], "memory": format_size(present[i] * pg)}
        if new_id == 0:
            node["start"] = format_size(min(first_pfn.values()) * pg)
        nodes.append(node)

    machine: Dict[str, Any] = {
        "page_size": PAGE_SIZE,
        "nodes": nodes,
        "distance": [[dist[i][j] for j in order] for i in order],
    }
    holes = _holes(zones, zi_path)
    if holes:
        machine["holes"] = [{"start": format_size(s * pg), "size": format_size(n * pg)} for s, n in holes]
    if movable:
        machine["movablecore"] = format_size(movable * pg)
    return machine


# --------------------------------------------------------------------------------------------
# TOML


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _toml_key(k: str) -> str:
    return k if _BARE_KEY.fullmatch(k) else _toml_string(k)


def _toml_string(s: str) -> str:
    out = ['"']
    for ch in s:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v != v:
            return "nan"
        if v in (float("inf"), float("-inf")):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return _toml_string(v)
    if isinstance(v, dict):
        if not v:
            return "{}"
        return "{ " + ", ".join(f"{_toml_key(str(k))} = {_toml_value(x)}" for k, x in v.items()) + " }"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise TypeError(f"cannot write {type(v).__name__} {v!r} as TOML")


def _toml_array_lines(key: str, items: List[Any]) -> List[str]:
    """An array written one element per line."""
    return [f"{key} = ["] + [f"  {_toml_value(x)}," for x in items] + ["]"]


_KEY_ORDER = ("page_size", "nodes", "distance", "holes", "movablecore")


def render_machine_toml(machine: Dict[str, Any], now: Optional[str] = None) -> str:
    """The ``[machine]`` section as TOML text, with a leading comment saying where and when it
    was read (``now``, default the local time as "YYYY-MM-DD HH:MM:SS")."""
    if now is None:
        now = time.strftime("%Y-%m-%d %H:%M:%S")
    now = " ".join(str(now).split())
    lines = [
        f"# Read from this host's /proc/zoneinfo and /sys/devices/system/node on {now}",
        "# (mmtwin machine --from-host). Node memory is the zones' present pages; holes are",
        "# address ranges the zones span without memory (a hole inside a zone is placed at its end).",
    ]
    for n in machine.get("nodes", []):
        if isinstance(n, dict) and n.get("cpus") == 0:
            lines.append(
                f"# Node {n.get('id')} has memory but no CPUs on this host; the simulator needs at least one per node."
            )
    lines.append("[machine]")
    keys = [k for k in _KEY_ORDER if k in machine] + [k for k in machine if k not in _KEY_ORDER]
    for k in keys:
        v = machine[k]
        one_per_line = k in ("nodes", "holes") or (k == "distance" and len(v) > 1)
        if isinstance(v, (list, tuple)) and v and one_per_line:
            lines.extend(_toml_array_lines(_toml_key(k), list(v)))
        else:
            lines.append(f"{_toml_key(k)} = {_toml_value(v)}")
    return "\n".join(lines) + "\n"
