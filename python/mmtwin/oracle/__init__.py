"""The real-kernel oracle: the same workloads run on a real Linux kernel under QEMU (TCG).

* `prepare` — `mmtwin oracle setup`: Debian packages, the kernel package, the static guest
  program (crates/mmtwin-guest) and the initramfs, in a cache folder.
* `guest`   — boots one guest for one resolved configuration and reads back what it measured.
* `results` — `mmtwin oracle run`: a results folder of the same shape as a simulated run.
* `validate` — `mmtwin validate`: twin and real side by side, per counter.

Every failure the user can do something about is an `OracleError`: the CLI prints it and exits
with status 2.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Optional

ENV_CACHE = "MMTWIN_ORACLE_CACHE"


class OracleError(Exception):
    """Something the oracle needs is missing or went wrong; printed as is, exit status 2."""


def cache_dir(arg: Optional[str] = None) -> Path:
    """The oracle's cache: --cache, else $MMTWIN_ORACLE_CACHE, else ~/.cache/mmtwin/oracle."""
    if arg:
        return Path(arg).expanduser().resolve()
    env = os.environ.get(ENV_CACHE)
    if env:
        return Path(env).expanduser().resolve()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mmtwin" / "oracle"


def repo_root() -> Path:
    """The source checkout this package lives in (python/mmtwin/oracle → the repository)."""
    return Path(__file__).resolve().parents[3]


_SIZE = re.compile(r"^\s*(\d+)\s*([KMGT]?)\s*$", re.IGNORECASE)


def parse_size(v: object) -> int:
    """Bytes of a scenario size: an integer, or "512M", "1G", ... (K, M, G, T: powers of 1024)."""
    if isinstance(v, int):
        return v
    m = _SIZE.match(str(v))
    if not m:
        raise OracleError(f"cannot read the size {v!r}")
    return int(m.group(1)) << (10 * " KMGT".index((m.group(2) or " ").upper()))


def load_toml(text: str) -> dict:
    try:
        import tomllib  # type: ignore[import-not-found]
    except ImportError:  # Python < 3.11
        try:
            import tomli as tomllib  # type: ignore[import-not-found,no-redef]
        except ImportError:
            raise OracleError("the oracle needs Python 3.11 (tomllib) or the tomli package") from None
    return tomllib.loads(text)
