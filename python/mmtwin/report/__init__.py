"""MMTests-style comparison reports of mmtwin results folders.

* `stats`   – summary statistics, percentage differences and significance tests.
* `vmstat`  – the "MMTests Statistics: duration / vmstat" rows derived from /proc/vmstat deltas.
* `compare` – loading results folders, building comparison tables, rendering text and JSON.
* `html`    – the same comparison as one HTML page with plots of the vmstat timelines.
"""

from __future__ import annotations

__all__ = ["ReportError"]


class ReportError(Exception):
    """A results folder or summary.json that cannot be reported on (the CLI exits with status 2)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
