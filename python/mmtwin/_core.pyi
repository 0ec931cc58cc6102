"""Type stub for the Rust core (crates/mmtwin-py)."""

from typing import Any, Callable, Optional

__version__: str

class ScenarioError(ValueError):
    """A scenario is invalid. ``args`` is ``(key, message)``; key is a dotted path or ''."""

class SimulationError(RuntimeError):
    """A run could not finish: the simulation hung (every workload task in an untimed wait
    that nothing ends). The message names the tasks and what each waits on; no figures."""

def resolve_scenario(text: str, iterations: Optional[int] = None) -> dict[str, Any]:
    """Parse and validate scenario text.

    Returns ``{"name", "iterations", "twin_bytes", "benchmarks": [{"name", "benchmark",
    "iterations", "kernels": [{"name", "profile", "toml", "sha256"}]}]}``: one entry per workload
    in scenario order, with its results name (``"anonchurn"``, ``"anonchurn-2"`` for a repeat,
    …), its MMTests benchmark name, its iterations (its own ``iterations`` or the scenario's)
    and one resolved configuration per kernel, in scenario order. ``iterations``, if given,
    replaces the scenario's count and every workload's. A
    scenario with exactly one workload also has ``"benchmark"`` and ``"kernels"`` (that
    workload's) at the top level.
    """

def run_iteration(
    resolved_toml: str, iteration: int, progress: Optional[Callable[[float], None]] = None
) -> dict[str, Any]:
    """Run one iteration of one resolved kernel configuration (a pure function of its inputs).

    Returns ``{"iteration", "seed", "user_ns", "system_ns", "kswapd_ns", "others_ns",
    "kswapd_wait_ns", "elapsed_ns", "events_processed", "page_events", "vmstat": [(name, delta)],
    "timeline": {"time_ns", "names", "rows"},
    "metrics": [{"table", "preferred", "unit", "op", "value"}], "dumps": [{"time_ns",
    "buddyinfo", "pagetypeinfo", "zoneinfo", "vmstat"}], "block": {...}}``.

    ``user_ns``/``system_ns`` are the benchmark's tasks' CPU time, ``kswapd_ns`` kswapd's,
    ``others_ns`` that of the other kernel threads and daemons; ``kswapd_wait_ns`` the time
    kswapd was runnable but waited for a CPU (run_delay of /proc/PID/schedstat).

    ``"block"`` holds the block-device totals of the machine (all devices summed):
    ``{"devices": int, "requests", "sectors", "merges", "segments": [read, write],
    "seeks", "busy_ns", "merge_refused_segments": int, "rq_size_hist": [read[9], write[9]],
    "rq_seg_hist": [read[8], write[8]]}``. ``rq_size_hist`` counts dispatched requests by size:
    ≤4K, 8K, ≤16K, ≤32K, ≤64K, ≤128K, ≤256K, ≤512K, more; ``rq_seg_hist`` by scatterlist
    segments: 1, 2–3, 4–7, 8–15, 16–31, 32–63, 64–127, ≥128. ``"seek_dist_hist"`` counts the
    seeks by the distance the head moved (under 1 MiB, under 16 MiB, under 256 MiB, farther) and
    ``"seek_ns"`` is the part of ``busy_ns`` spent reaching requests (seeks, and short forward
    gaps let pass under the head). It also holds the journal
    counters and ``"congestion_waits"``/``"congestion_wait_ns"``: congestion_wait calls and the
    time they slept, [allocator slow path, direct reclaim, kswapd]; and, for flash devices,
    ``"ftl_gc_copies"``/``"ftl_gc_copied_pages"``: erase blocks the flash translation layer
    closed with a copy, and the pages it copied; for devices CFQ schedules, ``"cfq_slices"``,
    ``"cfq_preemptions"``, ``"cfq_idle_waits"``, ``"cfq_idle_expired"``: time slices begun,
    active queues preempted by a new request, waits for a sync queue's task, and those that
    timed out; ``"buffers_pages"``: pages of the devices' own
    page cache (file system metadata, /proc/meminfo's Buffers) when the run ended;
    ``"metadata_reads"``: metadata blocks (indirect blocks, directory blocks, the inode table
    blocks of evicted inodes looked up again) read because they were not cached,
    ``"dir_reads"`` the directory blocks among them;
    ``"i_mutex_waits"``/``"i_mutex_wait_ns"``: times a create found its directory's i_mutex
    held and slept, and the time spent waiting for it; ``"shadow_waits"``/``"shadow_ns"``:
    times a task found a metadata buffer it needed shadowed by the commit's log write and
    slept, and the time the commits' log writes kept buffers shadowed;
    ``"wait_ns"``/``"wait_count"``: time blocked and number of waits, [benchmark tasks, kswapd,
    flushers, journal threads][free requests, pages (lock or writeback), journals (a commit
    asked for, a buffer shadowed by the log write)], waits still going on at the end not
    counted.
    """

def boot_dump(resolved_toml: str) -> dict[str, str]:
    """The /proc buddyinfo, pagetypeinfo, zoneinfo and vmstat text right after boot."""
