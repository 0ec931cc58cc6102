"""Booting one guest for one resolved configuration (one kernel × one workload) and reading back
what the guest program measured.

The guest is shaped like the scenario's machine: memory and CPUs per node (two or more nodes
become QEMU NUMA nodes backed by memory-backend-ram, with the distance table), a fresh file
system on a virtio disk (cache=unsafe), a swap disk when `[machine] swap` is set, and the
scenario's vm sysctls written by /init before the workload starts. The guest writes its results
to a raw second disk; the serial console is kept as the log.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from mmtwin.oracle import OracleError, load_toml, parse_size
from mmtwin.oracle.cpio import Cpio

QEMU = "qemu-system-x86_64"
OUT_DISK = 64 << 20
MiB = 1 << 20


@dataclass
class GuestResult:
    release: str
    data: Dict[str, Any]  # the guest program's JSON
    console: str
    wall_s: float
    boot_s: Optional[float]  # guest uptime when the workload started
    command: List[str]


def find_qemu() -> str:
    q = shutil.which(QEMU)
    if q is None:
        raise OracleError(f"{QEMU} not found on PATH; run `mmtwin oracle setup` (it installs qemu-system-x86)")
    return q


def sysctl_lines(sysctl: Dict[str, Any]) -> List[Tuple[str, str]]:
    """(/proc/sys path, value) for the resolved [kernel.sysctl] knobs the real kernel has.

    0 in min_free_kbytes means "the kernel's boot-time value" and is left alone; dirty_bytes /
    dirty_background_bytes are written only when set (writing one clears its ratio, and 0 is
    refused); knobs 6.1 no longer has (percpu_pagelist_fraction) are skipped."""
    vm = "/proc/sys/vm/"
    out: List[Tuple[str, str]] = []

    def put(name: str, value: Any) -> None:
        if isinstance(value, list):
            value = " ".join(str(v) for v in value)
        out.append((vm + name.replace("page_cluster", "page-cluster"), str(value)))

    if sysctl.get("min_free_kbytes", 0):
        put("min_free_kbytes", sysctl["min_free_kbytes"])
    for k in ("watermark_scale_factor", "watermark_boost_factor", "lowmem_reserve_ratio", "min_unmapped_ratio",
              "min_slab_ratio", "swappiness", "extfrag_threshold", "stat_interval", "dirty_writeback_centisecs",
              "dirty_expire_centisecs", "vfs_cache_pressure", "page_cluster"):
        if k in sysctl:
            put(k, sysctl[k])
    if sysctl.get("percpu_pagelist_high_fraction", 0):
        put("percpu_pagelist_high_fraction", sysctl["percpu_pagelist_high_fraction"])
    if sysctl.get("zone_reclaim_mode") is not None:
        put("zone_reclaim_mode", sysctl["zone_reclaim_mode"])
    for ratio, abs_ in (("dirty_ratio", "dirty_bytes"), ("dirty_background_ratio", "dirty_background_bytes")):
        if sysctl.get(abs_, 0):
            put(abs_, sysctl[abs_])
        elif ratio in sysctl:
            put(ratio, sysctl[ratio])
    return out


def guest_view(cfg: Dict[str, Any]) -> Dict[str, Any]:
    """What of a resolved configuration shapes the real run: the guest's nodes (memory, CPUs),
    distances, swap and file system, the sysctls /init writes and the workload. The twin's own
    settings (policies, costs, disk model, boot reservation) are not part of it, so a real run
    stays comparable while those are calibrated."""
    m = cfg["machine"]
    return {
        "nodes": [(parse_size(n["memory"]), int(n.get("cpus", 1))) for n in m["nodes"]],
        "distance": m.get("distance") or [],
        "swap": parse_size(m.get("swap", 0)),
        "fs": m.get("fs", "ext4"),
        "sysctl": sysctl_lines(cfg["kernel"].get("sysctl", {})),
        "workload": cfg["workload"],
    }


def _mem_total(machine: Dict[str, Any]) -> int:
    return sum(parse_size(n["memory"]) for n in machine["nodes"]) - sum(parse_size(h["size"]) for h in machine.get("holes", []))


def disk_bytes(cfg: Dict[str, Any]) -> int:
    """A file system big enough for what the workload keeps on disk at once, with room to spare."""
    w = cfg["workload"]
    mem = _mem_total(cfg["machine"])
    t = w["type"]
    if t == "simple-writeback":
        need = parse_size(w.get("size", 4 * mem))
    elif t == "largedd":
        src = parse_size(w.get("source", mem // 4))
        copies = max(2, (int(mem * float(w.get("target_ratio", 8.0))) >> 20) // max(1, src >> 20))
        need = src * copies
    elif t == "mapped-writer":
        need = int(mem * float(w.get("total_ratio", 10.0)))
    else:
        need = 0
    size = max(1 << 30, int(need * 1.2) + (512 << 20))
    return (size + MiB - 1) // MiB * MiB


def estimate_timeout(cfg: Dict[str, Any]) -> float:
    """A generous wall-clock limit: boot, the bytes the workload writes at a pessimistic
    emulated 25 MB/s, anon-churn's duration three times over."""
    w = cfg["workload"]
    secs = 90.0 + disk_bytes(cfg) / 25e6
    if w["type"] == "anon-churn":
        secs += 3 * parse_duration(w.get("duration", "2s"))
    return secs


def parse_duration(v: Any) -> float:
    if isinstance(v, int):
        return v / 1e9
    s = str(v).strip()
    for suffix, scale in (("min", 60.0), ("ns", 1e-9), ("us", 1e-6), ("ms", 1e-3), ("s", 1.0)):
        if s.endswith(suffix):
            try:
                return float(s[: -len(suffix)]) * scale
            except ValueError:
                break
    raise OracleError(f"cannot read the duration {v!r}")


def qemu_command(qemu: str, cfg: Dict[str, Any], vmlinux: Path, initrd: Path, disks: List[Path], append: str) -> List[str]:
    machine = cfg["machine"]
    nodes = machine["nodes"]
    mem_mib = [parse_size(n["memory"]) // MiB for n in nodes]
    cpus = [int(n.get("cpus", 1)) for n in nodes]
    cmd = [
        qemu, "-accel", "tcg", "-nodefaults", "-no-user-config", "-display", "none", "-serial", "stdio",
        "-no-reboot", "-m", f"{sum(mem_mib)}M", "-smp", str(max(1, sum(cpus))),
        "-kernel", str(vmlinux), "-initrd", str(initrd), "-append", append,
    ]
    if len(nodes) > 1:
        first = 0
        for i, (m, c) in enumerate(zip(mem_mib, cpus)):
            cmd += ["-object", f"memory-backend-ram,id=mem{i},size={m}M"]
            spec = f"node,nodeid={i},memdev=mem{i}"
            if c > 0:
                spec += f",cpus={first}-{first + c - 1}" if c > 1 else f",cpus={first}"
            cmd += ["-numa", spec]
            first += c
        dist = machine.get("distance") or []
        for i, row in enumerate(dist):
            for j, d in enumerate(row):
                if i != j:
                    cmd += ["-numa", f"dist,src={i},dst={j},val={d}"]
    for d in disks:
        cmd += ["-drive", f"file={d},format=raw,if=virtio,cache=unsafe"]
    return cmd


def _tail(console: str, n: int = 25) -> str:
    lines = [ln.rstrip("\r") for ln in console.splitlines() if ln.strip()]
    return "\n".join("  | " + ln for ln in lines[-n:]) or "  | (no console output)"


def _read_results(path: Path) -> Optional[Dict[str, Any]]:
    with open(path, "rb") as f:
        head = f.read(64)
        if not head.startswith(b"MMTWIN-ORACLE 1\n"):
            return None
        rest = head[len(b"MMTWIN-ORACLE 1\n"):]
        size_text, _, _ = rest.partition(b"\n")
        f.seek(len(b"MMTWIN-ORACLE 1\n") + len(size_text) + 1)
        body = f.read(int(size_text))
    return json.loads(body)


def boot(cfg_text: str, manifest: Dict[str, Any], cache: Path, timeout: Optional[float], extra_append: str = "", what: str = "") -> GuestResult:
    """Boots one guest running the workload of the resolved configuration `cfg_text`."""
    qemu = find_qemu()
    if shutil.which("mke2fs") is None:
        raise OracleError("mke2fs not found on PATH; run `mmtwin oracle setup` (it installs e2fsprogs)")
    cfg = load_toml(cfg_text)
    fs = cfg["machine"].get("fs", "ext4")
    if fs not in ("ext2", "ext3", "ext4"):
        raise OracleError(f"{what}: machine.fs = {fs!r}: the oracle runs ext2, ext3 and ext4 only")
    if int(cfg["machine"].get("disks", 1)) != 1:
        raise OracleError(f"{what}: machine.disks = {cfg['machine']['disks']}: the oracle boots guests with one disk only")
    vmlinux, base_initrd = cache / manifest["vmlinux"], cache / manifest["initrd"]
    limit = timeout if timeout is not None else estimate_timeout(cfg)
    with tempfile.TemporaryDirectory(prefix="mmtwin-oracle-") as td:
        work = Path(td)
        disk = work / "disk.img"
        with open(disk, "wb") as f:
            f.truncate(disk_bytes(cfg))
        p = subprocess.run(
            ["mke2fs", "-q", "-F", "-t", fs, "-m", "0", "-E", "lazy_itable_init=0,lazy_journal_init=0", str(disk)],
            capture_output=True, text=True, stdin=subprocess.DEVNULL,
        )
        if p.returncode != 0:
            raise OracleError(f"mke2fs failed: {p.stderr.strip() or p.returncode}")
        out = work / "out.img"
        with open(out, "wb") as f:
            f.truncate(OUT_DISK)
        disks = [disk, out]
        swap = parse_size(cfg["machine"].get("swap", 0))
        if swap > 0:
            s = work / "swap.img"
            with open(s, "wb") as f:
                f.truncate(swap)
            disks.append(s)
        # The run's own files, in an archive appended to the cached initramfs.
        c = Cpio()
        c.file("oracle/config.toml", cfg_text.encode())
        sysctl = "".join(f"{path} {value}\n" for path, value in sysctl_lines(cfg["kernel"].get("sysctl", {})))
        c.file("oracle/sysctl", sysctl.encode())
        initrd = work / "initrd.cpio"
        with open(initrd, "wb") as f:
            f.write(base_initrd.read_bytes())
            f.write(c.bytes())
        append = "console=ttyS0 panic=-1 quiet loglevel=4 " + extra_append
        cmd = qemu_command(qemu, cfg, vmlinux, initrd, disks, append.strip())
        log_path = work / "console.log"
        t0 = time.monotonic()
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
            try:
                rc = proc.wait(timeout=limit)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                console = log_path.read_text(errors="replace")
                raise OracleError(f"{what}: the guest did not finish within the {limit:.0f} s timeout (killed); console tail:\n{_tail(console)}") from None
            except BaseException:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                raise
        wall = time.monotonic() - t0
        console = log_path.read_text(errors="replace")
        try:
            data = _read_results(out)
        except (OSError, ValueError) as e:
            raise OracleError(f"{what}: the guest's results are unreadable ({e}); console tail:\n{_tail(console)}") from None
        if data is None:
            errors = [ln.split("ORACLE error:", 1)[1].strip() for ln in console.splitlines() if "ORACLE error:" in ln]
            if errors:
                why = f"the guest program failed: {errors[-1]}"
            elif "Kernel panic" in console:
                why = "the guest kernel panicked"
            elif rc != 0:
                why = f"qemu exited with status {rc}"
            else:
                why = "the guest stopped without results"
            raise OracleError(f"{what}: {why}; console tail:\n{_tail(console)}")
    boot_s = None
    for ln in console.splitlines():
        if ln.startswith("ORACLE run "):
            try:
                boot_s = float(ln.split()[2])
            except (IndexError, ValueError):
                pass
    return GuestResult(release=str(data.get("release", "")), data=data, console=console, wall_s=wall, boot_s=boot_s, command=cmd)
