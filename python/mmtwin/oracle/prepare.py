"""`mmtwin oracle setup`: everything a guest boot needs, in a cache folder.

1. Debian packages: qemu-system-x86, busybox-static, e2fsprogs, cpio, kmod (apt-get install,
   with apt-get update first only if the install cannot find them).
2. The kernel: the linux-image package linux-image-amd64 depends on (Debian 12: 6.1.0-N-amd64),
   fetched with `apt-get download`, unpacked with `dpkg-deb -x`, `depmod` run on it, and the
   uncompressed vmlinux cut out of the bzImage so QEMU boots it through PVH (no decompression
   under emulation).
3. The guest program crates/mmtwin-guest, linked statically (glibc's libc.a), built with cargo
   into target/oracle-guest so the main builds keep their flags.
4. The initramfs: busybox, the modules for virtio disks and ext4 in load order, the guest
   program, and /init.

`manifest.json` in the cache records what was built from what; a second run that finds the same
inputs changes nothing.
"""

from __future__ import annotations

import hashlib
import json
import lzma
import os
import shutil
import subprocess
from pathlib import Path
from typing import Callable, Dict, List, Optional

from mmtwin.oracle import OracleError, repo_root
from mmtwin.oracle.cpio import Cpio

# Debian package → a program it installs (how we tell it is there).
PACKAGES: Dict[str, str] = {
    "qemu-system-x86": "qemu-system-x86_64",
    "busybox-static": "busybox",
    "e2fsprogs": "mke2fs",
    "cpio": "cpio",
    "kmod": "depmod",
}
KERNEL_META = "linux-image-amd64"
# virtio disks and ext4 are modules in Debian's kernel; crc32c_generic must precede jbd2/ext4
# (they reach it through a soft dependency that busybox insmod does not follow).
MODULES = [
    "virtio_ring", "virtio", "virtio_pci_legacy_dev", "virtio_pci_modern_dev", "virtio_pci",
    "virtio_blk", "crc16", "mbcache", "jbd2", "crc32c_generic", "ext4",
]
GUEST_TARGET = "x86_64-unknown-linux-gnu"
MANIFEST = "manifest.json"
# Bumped whenever the layout of the initramfs or of /init changes.
INITRD_FORMAT = 2

INIT_SCRIPT = r"""#!/bin/busybox sh
# mmtwin oracle guest: load the disk drivers, set the scenario's knobs, run the workload once,
# power off. Lines starting with ORACLE are read by the host.
/bin/busybox mount -t devtmpfs devtmpfs /dev
# The archive has no device nodes: the console is opened once devtmpfs is there.
exec </dev/console >/dev/console 2>&1
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
say() { echo "ORACLE $*"; }
die() { echo "ORACLE error: $*"; poweroff -f; sleep 5; }
uptime_s() { cut -d' ' -f1 /proc/uptime; }
say init $(uptime_s)
for m in $(cat /oracle/modules); do
    insmod /lib/modules/$m.ko || die "insmod $m failed"
done
n=0
while [ ! -b /dev/vdb ]; do
    n=$((n + 1)); [ $n -gt 200 ] && die "the virtio disks did not appear"; sleep 0.05
done
if [ -b /dev/vdc ]; then
    mkswap /dev/vdc >/dev/null 2>&1 && swapon /dev/vdc || die "cannot enable swap on /dev/vdc"
fi
mount -t ext4 /dev/vda /mnt || die "cannot mount the test file system /dev/vda"
while read -r path value; do
    [ -z "$path" ] && continue
    echo "$value" > "$path" 2>/dev/null || say "warn: cannot set $path to $value"
done < /oracle/sysctl
sync
echo 3 > /proc/sys/vm/drop_caches
q=/sys/block/vda/queue
say queue vda $(cat $q/scheduler $q/nr_requests $q/max_sectors_kb $q/max_hw_sectors_kb $q/max_segments $q/max_segment_size $q/read_ahead_kb 2>/dev/null)
say run $(uptime_s)
/bin/mmtwin-guest /oracle/config.toml /dev/vdb /mnt
say exit $? $(uptime_s)
umount /mnt
poweroff -f
"""

Log = Callable[[str], None]


def _run(cmd: List[str], what: str, cwd: Optional[Path] = None, env: Optional[dict] = None) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    except FileNotFoundError:
        raise OracleError(f"{what}: {cmd[0]} not found") from None


def _last_line(p: subprocess.CompletedProcess) -> str:
    lines = [ln.strip() for ln in (p.stderr + "\n" + p.stdout).splitlines() if ln.strip() and not ln.startswith("W:")]
    return lines[-1] if lines else f"exit status {p.returncode}"


def _installed(pkg: str, program: str) -> bool:
    if shutil.which(program) is None:
        return False
    if shutil.which("dpkg-query") is None:
        return True
    p = _run(["dpkg-query", "-W", "-f=${Status}", pkg], "dpkg-query")
    return p.returncode == 0 and "install ok installed" in p.stdout


def ensure_packages(log: Log) -> None:
    missing = [pkg for pkg, prog in PACKAGES.items() if not _installed(pkg, prog)]
    if not missing:
        return
    names = " ".join(missing)
    if shutil.which("apt-get") is None:
        raise OracleError(f"missing Debian packages {names} and apt-get is not available to install them; install them and run `mmtwin oracle setup` again")
    if os.geteuid() != 0:
        raise OracleError(f"missing Debian packages {names}; installing them needs root (apt-get install {names})")
    log(f"installing {names}")
    cmd = ["apt-get", "install", "-y", "-q", "--no-install-recommends", *missing]
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    p = _run(cmd, "apt-get install", env=env)
    if p.returncode != 0:
        log("apt-get update")
        _run(["apt-get", "update", "-q"], "apt-get update", env=env)
        p = _run(cmd, "apt-get install", env=env)
    if p.returncode != 0:
        raise OracleError(f"cannot install {names}: apt-get: {_last_line(p)}")
    still = [pkg for pkg in missing if not _installed(pkg, PACKAGES[pkg])]
    if still:
        raise OracleError(f"apt-get installed {names} but {' '.join(PACKAGES[s] for s in still)} is still not on PATH")


def kernel_package(log: Log) -> str:
    """The versioned linux-image package linux-image-amd64 depends on."""
    for attempt in range(2):
        p = _run(["apt-cache", "depends", KERNEL_META], "apt-cache")
        for line in p.stdout.splitlines():
            dep = line.strip().removeprefix("Depends:").strip()
            if line.strip().startswith("Depends:") and dep.startswith("linux-image-") and dep.endswith("-amd64"):
                return dep
        if attempt == 0 and shutil.which("apt-get") and os.geteuid() == 0:
            log("apt-get update")
            _run(["apt-get", "update", "-q"], "apt-get update")
    raise OracleError(f"cannot find the kernel package: apt-cache knows no {KERNEL_META} (is a Debian archive in the apt sources?)")


def fetch_kernel(cache: Path, pkg: str, log: Log) -> Path:
    """Downloads and unpacks `pkg` into cache/kernel/<release>; returns that folder."""
    release = pkg.removeprefix("linux-image-")
    kdir = cache / "kernel" / release
    if (kdir / "vmlinux").is_file() and (kdir / "root" / "lib" / "modules" / release / "modules.dep").is_file():
        return kdir
    debs = cache / "debs"
    debs.mkdir(parents=True, exist_ok=True)
    found = sorted(debs.glob(f"{pkg}_*.deb"))
    if not found:
        log(f"apt-get download {pkg}")
        p = _run(["apt-get", "download", "-q", pkg], "apt-get download", cwd=debs)
        if p.returncode != 0:
            _run(["apt-get", "update", "-q"], "apt-get update")
            p = _run(["apt-get", "download", "-q", pkg], "apt-get download", cwd=debs)
        found = sorted(debs.glob(f"{pkg}_*.deb"))
        if p.returncode != 0 or not found:
            raise OracleError(f"cannot download the kernel package {pkg}: {_last_line(p)}")
    deb = found[-1]
    tmp = kdir.with_name(kdir.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / "root").mkdir(parents=True)
    log(f"unpacking {deb.name}")
    p = _run(["dpkg-deb", "-x", str(deb), str(tmp / "root")], "dpkg-deb")
    if p.returncode != 0:
        raise OracleError(f"cannot unpack {deb}: {_last_line(p)}")
    if not (tmp / "root" / "lib" / "modules" / release).is_dir():
        raise OracleError(f"{deb} holds no lib/modules/{release}: not a kernel image package")
    p = _run(["depmod", "-b", str(tmp / "root"), release], "depmod")
    if p.returncode != 0:
        raise OracleError(f"depmod on {deb.name} failed: {_last_line(p)}")
    (tmp / "vmlinux").write_bytes(extract_vmlinux(tmp / "root" / "boot" / f"vmlinuz-{release}"))
    (tmp / "package").write_text(deb.name + "\n")
    shutil.rmtree(kdir, ignore_errors=True)
    os.rename(tmp, kdir)
    return kdir


def extract_vmlinux(bzimage: Path) -> bytes:
    """The uncompressed ELF kernel inside a bzImage (xz payload), for QEMU's PVH boot."""
    if not bzimage.is_file():
        raise OracleError(f"{bzimage}: no kernel image in the package")
    data = bzimage.read_bytes()
    at = data.find(b"\xfd7zXZ\x00")
    if at < 0:
        raise OracleError(f"{bzimage}: no xz-compressed payload found (cannot extract vmlinux)")
    try:
        elf = lzma.LZMADecompressor(format=lzma.FORMAT_XZ).decompress(data[at:])
    except lzma.LZMAError as e:
        raise OracleError(f"{bzimage}: cannot decompress the kernel: {e}") from None
    if not elf.startswith(b"\x7fELF"):
        raise OracleError(f"{bzimage}: the payload is not an ELF kernel")
    return elf


def module_paths(kdir: Path, release: str) -> List[Path]:
    """The modules of MODULES in load order, located through modules.dep."""
    mroot = kdir / "root" / "lib" / "modules" / release
    by_name: Dict[str, str] = {}
    for line in (mroot / "modules.dep").read_text().splitlines():
        path = line.split(":", 1)[0]
        name = Path(path).name.split(".ko")[0].replace("-", "_")
        by_name[name] = path
    out = []
    for m in MODULES:
        if m not in by_name:
            raise OracleError(f"kernel {release} has no module {m} (needed for virtio disks and ext4)")
        p = mroot / by_name[m]
        if not p.name.endswith(".ko"):
            raise OracleError(f"{p}: compressed modules are not supported")
        out.append(p)
    return out


def build_guest(log: Log) -> Path:
    """Builds crates/mmtwin-guest statically; returns the binary."""
    root = repo_root()
    if not (root / "crates" / "mmtwin-guest" / "Cargo.toml").is_file():
        raise OracleError(f"the guest program's source is not here ({root}/crates/mmtwin-guest); run setup from an mmtwin checkout")
    if shutil.which("cargo") is None:
        raise OracleError("cargo not found: the guest program is built with the Rust toolchain")
    target_dir = root / "target" / "oracle-guest"
    env = {
        **os.environ,
        "CARGO_TARGET_DIR": str(target_dir),
        "RUSTFLAGS": "-C target-feature=+crt-static",
        # A quick build: the guest's speed does not matter next to emulation.
        "CARGO_PROFILE_RELEASE_LTO": "false",
        "CARGO_PROFILE_RELEASE_CODEGEN_UNITS": "16",
        "CARGO_PROFILE_RELEASE_DEBUG": "0",
        "CARGO_PROFILE_RELEASE_STRIP": "true",
    }
    env.pop("CARGO_BUILD_RUSTFLAGS", None)
    log("building the guest program (cargo, static)")
    p = _run(["cargo", "build", "--release", "-q", "-p", "mmtwin-guest", "--target", GUEST_TARGET], "cargo", cwd=root, env=env)
    if p.returncode != 0:
        tail = " | ".join(ln for ln in p.stderr.splitlines() if ln.startswith("error"))[:600]
        raise OracleError(f"cannot build the guest program (crates/mmtwin-guest): {tail or _last_line(p)}")
    binary = target_dir / GUEST_TARGET / "release" / "mmtwin-guest"
    if not binary.is_file():
        raise OracleError(f"cargo built no {binary}")
    return binary


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def build_initrd(modules: List[Path], guest: bytes) -> bytes:
    busybox = shutil.which("busybox") or "/bin/busybox"
    bb = Path(busybox).read_bytes()
    c = Cpio()
    for d in ("bin", "dev", "proc", "sys", "mnt", "tmp", "lib", "lib/modules", "oracle"):
        c.dir(d)
    c.file("bin/busybox", bb, 0o755)
    c.file("bin/mmtwin-guest", guest, 0o755)
    for m in modules:
        c.file(f"lib/modules/{m.name}", m.read_bytes())
    c.file("oracle/modules", ("\n".join(m.name.removesuffix(".ko") for m in modules) + "\n").encode())
    c.file("init", INIT_SCRIPT.encode(), 0o755)
    return c.bytes()


def load_manifest(cache: Path) -> Optional[dict]:
    try:
        m = json.loads((cache / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(m, dict) or m.get("initrd_format") != INITRD_FORMAT:
        return None
    for key in ("vmlinux", "initrd"):
        if not (cache / str(m.get(key, ""))).is_file():
            return None
    return m


def setup(cache: Path, kernel_pkg: Optional[str], log: Log) -> dict:
    """Brings the cache up to date; returns the manifest."""
    ensure_packages(log)
    pkg = kernel_pkg or kernel_package(log)
    release = pkg.removeprefix("linux-image-")
    cache.mkdir(parents=True, exist_ok=True)
    kdir = fetch_kernel(cache, pkg, log)
    guest = build_guest(log).read_bytes()
    modules = module_paths(kdir, release)
    bb = Path(shutil.which("busybox") or "/bin/busybox")
    inputs = {
        "initrd_format": INITRD_FORMAT,
        "release": release,
        "package": (kdir / "package").read_text().strip(),
        "guest_sha256": _sha(guest),
        "busybox_sha256": _sha(bb.read_bytes()),
        "init_sha256": _sha(INIT_SCRIPT.encode()),
        "modules": [m.name for m in modules],
    }
    old = load_manifest(cache)
    if old is not None and all(old.get(k) == v for k, v in inputs.items()):
        return {**old, "changed": False}
    log("building the initramfs")
    initrd = cache / "initrd.cpio"
    tmp = initrd.with_suffix(".tmp")
    tmp.write_bytes(build_initrd(modules, guest))
    os.replace(tmp, initrd)
    manifest = {**inputs, "vmlinux": str((kdir / "vmlinux").relative_to(cache)), "initrd": initrd.name}
    t = cache / (MANIFEST + ".tmp")
    t.write_text(json.dumps(manifest, indent=1) + "\n")
    os.replace(t, cache / MANIFEST)
    return {**manifest, "changed": True}
