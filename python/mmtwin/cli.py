"""The `mmtwin` command line: run scenarios, compare results, describe machines.

Bad input (scenario files, results folders, host files, arguments) ends with one message naming
what is wrong and what is valid, and exit status 2; no traceback, nothing half-written.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, NoReturn, Optional

EXIT_BAD_INPUT = 2
EXIT_SIM_FAILED = 1  # a run could not finish (the simulation hung): one message, nothing written
PROC_FILES = ("buddyinfo", "pagetypeinfo", "zoneinfo", "vmstat")


class UserError(Exception):
    """A problem with what the user gave us; printed as one line, exit status 2."""


def fail(msg: str) -> NoReturn:
    raise UserError(msg)


def read_text(path: str, what: str) -> str:
    p = Path(path)
    if not p.exists():
        fail(f"{path}: no such {what}")
    if p.is_dir():
        fail(f"{path}: is a directory, expected a {what}")
    try:
        return p.read_text()
    except (OSError, UnicodeDecodeError) as e:
        fail(f"{path}: cannot read {what}: {e}")


def default_output(name: str) -> Path:
    """results/NAME, or results/NAME-2, -3, ... if taken: a run without -o never overwrites."""
    base = Path("results") / name
    out, n = base, 1
    while out.exists():
        n += 1
        out = base.with_name(f"{base.name}-{n}")
    return out


def resolve(path: str, iterations: Optional[int] = None) -> tuple[str, dict[str, Any]]:
    """Reads and resolves a scenario file, turning a ScenarioError into a UserError."""
    from mmtwin import _core

    text = read_text(path, "scenario file")
    try:
        return text, _core.resolve_scenario(text, iterations)
    except _core.ScenarioError as e:
        key, msg = e.args if len(e.args) == 2 else ("", str(e))
        fail(f"{path}: {key + ': ' if key else ''}{msg}")


def mem_available_bytes() -> Optional[int]:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def check_fits(path: str, resolved: dict[str, Any], jobs: int) -> None:
    """Refuses a twin whose page frames would not fit in this machine's available memory."""
    need = resolved["twin_bytes"] * jobs
    avail = mem_available_bytes()
    if avail is not None and need > avail * 0.8:
        fail(
            f"{path}: machine: the twin needs {need / 2**30:.1f} GiB for its page frames "
            f"({jobs} run(s) at once) but this host has {avail / 2**30:.1f} GiB available; "
            "use a smaller [machine] or --jobs 1"
        )


def _output_dir(arg: Optional[str], name: str, force: bool) -> Path:
    """The results folder: -o DIR (refused if it exists, unless --force), else results/NAME."""
    if arg:
        out = Path(arg)
        if out.exists() and not force:
            fail(f"{out}: already exists; choose another -o DIR or pass --force to replace it")
        return out
    return default_output(name)


def cmd_run(args: argparse.Namespace) -> int:
    from mmtwin import _core
    from mmtwin.results import write_results

    if args.iterations is not None and args.iterations < 1:
        fail(f"--iterations must be at least 1, not {args.iterations}")
    text, resolved = resolve(args.scenario, args.iterations)
    out = _output_dir(args.output, resolved["name"], args.force)
    html_path = html_output(args.html)
    if args.jobs is not None and args.jobs < 1:
        fail(f"--jobs must be at least 1, not {args.jobs}")
    benchmarks = resolved["benchmarks"]
    # Every (benchmark, kernel, iteration) is one work item of the same pool; a workload may run
    # its own number of iterations.
    work = [(b, k, i) for b in benchmarks for k in b["kernels"] for i in range(b["iterations"])]
    jobs = min(len(work), args.jobs or os.cpu_count() or 1)
    check_fits(args.scenario, resolved, jobs)
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {
        b["name"]: {k["name"]: [None] * b["iterations"] for k in b["kernels"]} for b in benchmarks  # type: ignore[misc]
    }
    started = time.monotonic()
    progress = make_progress(args.quiet)
    with progress:
        # One bar per benchmark × kernel; each running iteration adds its fraction done.
        bars = {
            (b["name"], k["name"]): progress.add_task(f"{b['name']} {k['name']}", total=float(b["iterations"]))
            for b in benchmarks
            for k in b["kernels"]
        }
        done: dict[tuple[str, str, int], float] = {}
        lock = threading.Lock()

        def advance(bar: tuple[str, str], i: int, f: float) -> None:
            with lock:
                step = f - done.get((*bar, i), 0.0)
                done[(*bar, i)] = f
                progress.advance(bars[bar], step)

        failed: list[str] = []

        # Without a progress display the runs report nothing back: each report takes the GIL
        # from the simulating thread.
        shown = not progress.disable

        def one(item: tuple[dict[str, Any], dict[str, Any], int]) -> None:
            b, k, i = item
            if failed:
                return
            bar = (b["name"], k["name"])
            try:
                r = _core.run_iteration(k["toml"], i, (lambda f: advance(bar, i, f)) if shown else None)
            except _core.SimulationError as e:
                with lock:
                    failed.append(f"{b['name']}, kernel {k['name']}, iteration {i}: {e}")
                return
            advance(bar, i, 1.0)
            runs[b["name"]][k["name"]][i] = r

        with ThreadPoolExecutor(max_workers=jobs) as pool:
            list(pool.map(one, work))
    if failed:
        # Nothing is written: a run with a hung iteration has no figures to report.
        print(f"mmtwin: {failed[0]}", file=sys.stderr)
        return EXIT_SIM_FAILED
    wall = time.monotonic() - started
    write_results(out, text, resolved, runs, force=args.force)
    sim_s = sum(r["elapsed_ns"] for ks in runs.values() for rs in ks.values() for r in rs) / 1e9
    if not args.quiet:
        print(f"results: {out}  ({sim_s:.1f} simulated s in {wall:.1f} wall s)", file=sys.stderr)
    return print_comparison([str(out)], args.format, args.json, html_path)


def make_progress(quiet: bool):  # type: ignore[no-untyped-def]
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.percentage:>5.1f}%"),
        TimeElapsedColumn(),
        console=console,
        disable=quiet or not console.is_terminal,
        transient=True,
    )


def print_comparison(paths: list[str], fmt: str, as_json: bool, html_path: Optional[Path] = None) -> int:
    """Prints the comparison of `paths`; a results folder of several benchmarks prints one report
    per benchmark, each after a heading line with its name (JSON: {"benchmarks": [...]}). With
    `html_path`, the same comparison with plots is also written there as an HTML page."""
    from mmtwin.report import ReportError
    from mmtwin.report.compare import build_report, load_benchmarks, render_heading, render_text, report_to_json

    try:
        benchmarks = load_benchmarks(paths)
        reports = [(name, build_report(runs, fmt=fmt)) for name, runs in benchmarks]
        if html_path is not None:
            from mmtwin.report.html import render_html

            title = "mmtwin: " + ", ".join(paths)
            page = render_html([(name, r, runs) for (name, r), (_, runs) in zip(reports, benchmarks)], title)
    except ReportError as e:
        fail(str(e))
    if html_path is not None:
        try:
            write_atomic(html_path, page)
        except OSError as e:
            fail(f"--html {html_path}: cannot write the HTML report: {e.strerror or e}")
    if len(reports) == 1 and reports[0][0] is None:
        report = reports[0][1]
        if as_json:
            print(json.dumps(report_to_json(report), indent=1))
        else:
            print(render_text(report), end="")
    elif as_json:
        print(json.dumps({"benchmarks": [{"name": name, **report_to_json(r)} for name, r in reports]}, indent=1))
    else:
        print("\n".join(render_heading(str(name)) + render_text(r) for name, r in reports), end="")
    return 0


def html_output(arg: Optional[str]) -> Optional[Path]:
    """Checks an --html FILE argument before any work: FILE must not be a folder, and the
    nearest of its folders that exists must be a folder (the missing ones are made when the
    page is written, as -o makes a results folder's)."""
    if arg is None:
        return None
    p = Path(arg)
    if p.is_dir():
        fail(f"--html {arg}: is a directory, expected the path of an HTML file to write")
    parent = p.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if parent.exists() and not parent.is_dir():
        fail(f"--html {arg}: {str(parent)!r} is not a directory, so the HTML report cannot be written there")
    return p


def write_atomic(path: Path, text: str) -> None:
    """Writes `text` to a new file beside `path` (mode by the umask) and renames it over `path`;
    missing folders on the way are made."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "x", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def cmd_compare(args: argparse.Namespace) -> int:
    return print_comparison(args.results, args.format, args.json, html_output(args.html))


def cmd_check(args: argparse.Namespace) -> int:
    _, resolved = resolve(args.scenario)
    counts = {b["iterations"] for b in resolved["benchmarks"]}
    if len(counts) == 1:
        benchmarks = ", ".join(b["name"] for b in resolved["benchmarks"])
        runs = f"{counts.pop()} iteration(s)"
    else:
        benchmarks = ", ".join(f"{b['name']} ×{b['iterations']}" for b in resolved["benchmarks"])
        runs = "iterations per benchmark"
    names = ", ".join(k["name"] for k in resolved["benchmarks"][0]["kernels"])
    print(f"{args.scenario}: ok ({benchmarks}; kernels {names}; {runs})")
    return 0


def cmd_dump(args: argparse.Namespace) -> int:
    from mmtwin import _core

    _, resolved = resolve(args.scenario)
    # The machine boots the same whatever the workload: use the first benchmark's kernels.
    kernels = {k["name"]: k for k in resolved["benchmarks"][0]["kernels"]}
    name = args.kernel or next(iter(kernels))
    if name not in kernels:
        fail(f"--kernel {name!r}: not in {args.scenario}; valid: {', '.join(kernels)}")
    files = args.files or ["zoneinfo"]
    bad = [f for f in files if f not in PROC_FILES]
    if bad:
        fail(f"dump: unknown /proc file {bad[0]!r}; valid: {', '.join(PROC_FILES)}")
    d = _core.boot_dump(kernels[name]["toml"])
    for f in files:
        print(d[f], end="")
    return 0


def cmd_machine(args: argparse.Namespace) -> int:
    from mmtwin.machine_host import HostReadError, machine_from_host, render_machine_toml

    if not args.from_host:
        fail("machine: say where the machine comes from: --from-host")
    try:
        m = machine_from_host(args.proc, args.sys)
    except HostReadError as e:
        fail(str(e))
    text = render_machine_toml(m, now=time.strftime("%Y-%m-%d %H:%M:%S"))
    if args.output:
        write_atomic(Path(args.output), text)
    else:
        print(text, end="")
    return 0


def _oracle(fn):  # type: ignore[no-untyped-def]
    """Runs an oracle command, turning an OracleError into a UserError (one message, exit 2)."""
    from mmtwin.oracle import OracleError

    def wrapped(args: argparse.Namespace) -> int:
        try:
            return int(fn(args) or 0)
        except OracleError as e:
            fail(str(e))

    return wrapped


def cmd_oracle_setup(args: argparse.Namespace) -> int:
    from mmtwin.oracle import cache_dir
    from mmtwin.oracle.prepare import setup

    cache = cache_dir(args.cache)
    log = (lambda m: None) if args.quiet else (lambda m: print(f"oracle setup: {m}", file=sys.stderr, flush=True))
    m = setup(cache, args.kernel_package, log)
    state = "built" if m.get("changed") else "up to date"
    print(f"oracle: {state}: kernel {m['release']} ({m['package']}), initramfs {cache / m['initrd']}")
    return 0


def _guest_prelude(args: argparse.Namespace, suffix: str, need_qemu: bool = True) -> tuple[str, dict[str, Any], Path]:
    """What `oracle run` and `validate` check before booting: the timeout, the number of boots
    per kernel (--iterations, default 1: the scenario's count is for the twin, whose runs are
    cheap), the scenario, the output folder (default results/<name><suffix>) and qemu."""
    from mmtwin.oracle.guest import find_qemu

    if args.timeout is not None and args.timeout <= 0:
        fail(f"--timeout must be positive, not {args.timeout}")
    if args.iterations < 1:
        fail(f"--iterations must be at least 1, not {args.iterations}")
    text, resolved = resolve(args.scenario, args.iterations)
    out = _output_dir(args.output, resolved["name"] + suffix, args.force)
    if need_qemu:
        find_qemu()
    return text, resolved, out


def cmd_oracle_run(args: argparse.Namespace) -> int:
    from mmtwin.oracle import cache_dir
    from mmtwin.oracle.results import run_all, stderr_progress, write_real_results

    text, resolved, out = _guest_prelude(args, "-real")
    guests = run_all(resolved, cache_dir(args.cache), args.timeout, args.append, stderr_progress(args.quiet))
    write_real_results(out, text, resolved, guests, force=args.force)
    if not args.quiet:
        print(f"results: {out}", file=sys.stderr)
    return print_comparison([str(out)], "current", args.json)


def cmd_validate(args: argparse.Namespace) -> int:
    from mmtwin.oracle import cache_dir
    from mmtwin.oracle.validate import render_text, validate

    if args.real is not None and args.iterations != 1:
        fail("--real and --iterations do not go together: the twin runs as many iterations as the real folder holds")
    text, resolved, out = _guest_prelude(args, "-validate", need_qemu=args.real is None)
    if args.real is not None and not Path(args.real).is_dir():
        fail(f"--real {args.real}: no such folder (give the output folder of `mmtwin oracle run`)")
    report = validate(text, resolved, out, cache_dir(args.cache), args.timeout, args.append, args.quiet, args.force, args.real)
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        print(render_text(report), end="")
    return 0


def _guest_run_args(p: argparse.ArgumentParser, output: str, force: str, json_help: str) -> None:
    """The arguments `oracle run` and `validate` share."""
    p.add_argument("scenario", metavar="SCENARIO")
    p.add_argument("-o", "--output", metavar="DIR", help=output)
    p.add_argument("--force", action="store_true", help=force)
    p.add_argument("--timeout", type=float, metavar="S", help="wall-clock seconds per guest (default: from the workload's size)")
    p.add_argument("--cache", metavar="DIR", help="the oracle's cache folder (see oracle setup)")
    p.add_argument("-i", "--iterations", type=int, default=1, metavar="N", help="boots per workload and kernel, each with a fresh file system (default 1)")
    p.add_argument("--json", action="store_true", help=json_help)
    p.add_argument("-q", "--quiet", action="store_true", help="no progress messages")
    p.add_argument("--append", default="", help=argparse.SUPPRESS)


class Parser(argparse.ArgumentParser):
    """argparse, but a bad argument is one line and exit status 2 (no usage dump)."""

    def error(self, message: str) -> NoReturn:
        raise UserError(f"{self.prog}: {message} (see {self.prog} --help)")


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog="mmtwin", description="A deterministic digital twin of the Linux physical memory manager.")
    sub = p.add_subparsers(dest="command", parser_class=Parser, metavar="COMMAND")
    sub.required = True

    r = sub.add_parser("run", help="run a scenario and print the MMTests-style comparison")
    r.add_argument("scenario", metavar="SCENARIO")
    r.add_argument("-o", "--output", metavar="DIR", help="results folder (default results/<scenario name>)")
    r.add_argument("--force", action="store_true", help="replace an existing results folder")
    r.add_argument("--iterations", type=int, help="override [scenario] iterations and every workload's own")
    r.add_argument("-j", "--jobs", type=int, help="iterations run at once, over all benchmarks and kernels (default: CPUs)")
    r.add_argument("--format", choices=["current", "2011"], default="current", help="report layout")
    r.add_argument("--json", action="store_true", help="print the tables as JSON")
    r.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    r.add_argument("--html", metavar="FILE", help="write the comparison with plots of the vmstat timelines as an HTML page to FILE too")
    r.set_defaults(func=cmd_run)

    c = sub.add_parser("compare", help="compare results folders as MMTests does")
    c.add_argument(
        "results", nargs="+", metavar="RESULTS", help="results folders (a run folder expands to its kernels, or to one report per benchmark)"
    )
    c.add_argument("--format", choices=["current", "2011"], default="current", help="report layout")
    c.add_argument("--json", action="store_true", help="print the tables as JSON")
    c.add_argument("--html", metavar="FILE", help="write the comparison with plots of the vmstat timelines as an HTML page to FILE too")
    c.set_defaults(func=cmd_compare)

    k = sub.add_parser("check", help="validate a scenario file")
    k.add_argument("scenario", metavar="SCENARIO")
    k.set_defaults(func=cmd_check)

    d = sub.add_parser("dump", help="print /proc files of a scenario's machine right after boot")
    d.add_argument("scenario", metavar="SCENARIO")
    d.add_argument("--kernel", help="which [[kernel]] (default: the first)")
    d.add_argument("files", nargs="*", metavar="FILE", help="buddyinfo, pagetypeinfo, zoneinfo, vmstat (default zoneinfo)")
    d.set_defaults(func=cmd_dump)

    m = sub.add_parser("machine", help="write a [machine] section")
    m.add_argument("--from-host", action="store_true", help="read this host's /proc/zoneinfo and /sys/devices/system/node")
    m.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    m.add_argument("--proc", default="/proc", help=argparse.SUPPRESS)
    m.add_argument("--sys", default="/sys", help=argparse.SUPPRESS)
    m.set_defaults(func=cmd_machine)

    o = sub.add_parser("oracle", help="run workloads on a real Linux kernel under QEMU")
    osub = o.add_subparsers(dest="oracle_command", parser_class=Parser, metavar="COMMAND")
    osub.required = True
    os_ = osub.add_parser("setup", help="install QEMU and the Debian kernel, build the guest initramfs (idempotent)")
    os_.add_argument("--cache", metavar="DIR", help="cache folder (default $MMTWIN_ORACLE_CACHE or ~/.cache/mmtwin/oracle)")
    os_.add_argument("--kernel-package", metavar="PKG", help="the linux-image package (default: what linux-image-amd64 depends on)")
    os_.add_argument("-q", "--quiet", action="store_true", help="no progress messages")
    os_.set_defaults(func=_oracle(cmd_oracle_setup))
    orun = osub.add_parser("run", help="boot the scenario's machine on the real kernel, write a results folder")
    _guest_run_args(orun, "results folder (default results/<scenario name>-real)", "replace an existing results folder", "print the tables as JSON")
    orun.set_defaults(func=_oracle(cmd_oracle_run))

    v = sub.add_parser("validate", help="run the twin and the real kernel, print each key counter and the twin's error")
    _guest_run_args(v, "folder for both results (DIR/twin, DIR/real; default results/<name>-validate)", "replace an existing folder", "print the comparison as JSON")
    v.add_argument("--real", metavar="DIR", help="reuse the real runs of an earlier `mmtwin oracle run` of this scenario instead of booting")
    v.set_defaults(func=_oracle(cmd_validate))
    return p


def main(argv: Optional[list[str]] = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return int(args.func(args) or 0)
    except UserError as e:
        print(f"mmtwin: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except FileExistsError as e:
        print(f"mmtwin: {e}: already exists (use --force)", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("mmtwin: interrupted", file=sys.stderr)
        return 130
    except RuntimeError as e:
        from mmtwin import _core

        if isinstance(e, _core.SimulationError):
            print(f"mmtwin: {e}", file=sys.stderr)
            return EXIT_SIM_FAILED
        raise


if __name__ == "__main__":
    sys.exit(main())
