"""Initramfs archives in the "newc" cpio format, written by GNU cpio (`cpio -o -H newc`) from a
staging folder.

The kernel unpacks archives concatenated one after another, so a run's own files (its
configuration, the sysctls to set) go in a small archive appended to the cached one. No device
nodes are archived (making them needs root): /init mounts devtmpfs first and then opens
/dev/console itself.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path
from typing import Dict, List, Tuple

from mmtwin.oracle import OracleError


class Cpio:
    """Files and folders to archive, by path inside the archive."""

    def __init__(self) -> None:
        self._entries: Dict[str, Tuple[bytes, int]] = {}
        self._dirs: List[str] = []

    def dir(self, name: str) -> None:
        self._dirs.append(name.strip("/"))

    def file(self, name: str, data: bytes, mode: int = 0o644) -> None:
        self._entries[name.strip("/")] = (data, mode)

    def bytes(self) -> bytes:
        with tempfile.TemporaryDirectory(prefix="mmtwin-initrd-") as tmp:
            root = Path(tmp)
            names: List[str] = []
            for d in self._dirs:
                (root / d).mkdir(parents=True, exist_ok=True)
            for name, (data, mode) in self._entries.items():
                p = root / name
                p.parent.mkdir(parents=True, exist_ok=True)
                p.write_bytes(data)
                os.chmod(p, mode)
            for dirpath, dirnames, filenames in os.walk(root):
                dirnames.sort()
                rel = Path(dirpath).relative_to(root)
                if str(rel) != ".":
                    names.append(str(rel))
                names.extend(str(rel / f) if str(rel) != "." else f for f in sorted(filenames))
            listing = "".join(n + "\n" for n in names).encode()
            try:
                p = subprocess.run(["cpio", "-o", "-H", "newc", "--quiet", "--owner=0:0"], cwd=root, input=listing, capture_output=True)
            except FileNotFoundError:
                raise OracleError("cpio not found: run `mmtwin oracle setup` (it installs cpio)") from None
            if p.returncode != 0:
                raise OracleError(f"cpio failed: {p.stderr.decode(errors='replace').strip() or p.returncode}")
            return p.stdout
